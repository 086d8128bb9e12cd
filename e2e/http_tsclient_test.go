package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// tsClientDir holds the TypeScript SDK client check (scripts/ts-client).
var tsClientDir = filepath.Join("..", "scripts", "ts-client")

// tsClient returns the node binary. Where node or the installed SDK
// (`npm ci --prefix scripts/ts-client`, which .ci/run and
// scripts/ts-client.sh do) is missing the test skips, except under CI,
// which installs both: there it fails.
func tsClient(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node is not installed; the TypeScript SDK client check needs node and `npm ci --prefix scripts/ts-client` (scripts/ts-client.sh does both steps)")
	}
	if _, err := os.Stat(filepath.Join(tsClientDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		missing(t, "@modelcontextprotocol/sdk is not installed in scripts/ts-client; run `npm ci --prefix scripts/ts-client` or scripts/ts-client.sh")
	}
	return node
}

// runTSScript runs scripts/ts-client/<script> with node and args, on a
// clean environment plus env, and decodes the JSON report it prints into v.
// The error of a failed run carries the script's stderr.
func runTSScript(ctx context.Context, node string, env []string, v any, script string, args ...string) error {
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Dir = tsClientDir
	cmd.Env = append(tmuxtest.CleanEnv(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w\n%s", script, err, errb.String())
	}
	if err := json.Unmarshal(out.Bytes(), v); err != nil {
		return fmt.Errorf("%s output: %w: %q", script, err, out.String())
	}
	return nil
}

// tsClientRun is what scripts/ts-client/client.mjs reports.
type tsClientRun struct {
	ProtocolVersion string  `json:"protocolVersion"`
	SessionID       *string `json:"sessionId"`
	Server          struct{ Name string }
	Tools           []string `json:"tools"`
	ListSessions    struct {
		IsError    bool `json:"isError"`
		Structured struct {
			Result []struct {
				SessionName string `json:"session_name"`
			} `json:"result"`
		} `json:"structured"`
	} `json:"listSessions"`
	PaneInfo struct {
		IsError    bool `json:"isError"`
		Structured struct {
			PaneID string `json:"pane_id"`
		} `json:"structured"`
	} `json:"paneInfo"`
	Resource []struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType"`
		Text     string `json:"text"`
	} `json:"resource"`
	Prompt []struct {
		Role string `json:"role"`
		Text string `json:"text"`
	} `json:"prompt"`
	Completion []string `json:"completion"`
	SendKeys   struct {
		IsError bool `json:"isError"`
	} `json:"sendKeys"`
	Updates   []string `json:"updates"`
	Content   string   `json:"content"`
	AfterIdle *struct {
		IsError    bool `json:"isError"`
		Structured struct {
			PaneID string `json:"pane_id"`
		} `json:"structured"`
	} `json:"afterIdle"`
}

// TestHTTPTypeScriptClient drives serve --http with the official
// TypeScript SDK client (StreamableHTTPClientTransport with the bearer
// token in an Authorization header): tools/list, two tools, a resource
// read, a prompt, a completion and a subscription whose notification
// arrives on the session's GET stream. A wrong token must be refused.
func TestHTTPTypeScriptClient(t *testing.T) {
	node := tsClient(t)
	ts := tmuxtest.New(t)
	ts.MustRun("respawn-pane", "-k", "-t", "%0", "sh")
	token := newToken()
	// A 1 s idle timeout, which the client outlasts without a call while
	// it listens (TMUX_MCP_IDLE_MS): the server's pings keep its session.
	h := startHTTPD(t, ts, []string{"--session-idle-timeout", "1s"}, "TMUX_MCP_HTTP_TOKEN="+token)

	run := func(token string) (stdout, stderr string, err error) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, "client.mjs", h.Endpoint, "main", "%0")
		cmd.Dir = tsClientDir
		cmd.Env = append(tmuxtest.CleanEnv(), "TMUX_MCP_TOKEN="+token, "TMUX_MCP_IDLE_MS=3500")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err = cmd.Run()
		return out.String(), errb.String(), err
	}

	t.Run("authorized", func(t *testing.T) {
		stdout, stderr, err := run(token)
		if err != nil {
			t.Fatalf("client.mjs: %v\n%s\nserver log tail:\n%s", err, stderr, tail(h.log.String(), 2000))
		}
		var got tsClientRun
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("client.mjs output: %v: %q", err, stdout)
		}
		if !slices.Contains([]string{"2025-11-25", "2025-06-18"}, got.ProtocolVersion) || got.SessionID == nil || *got.SessionID == "" {
			t.Errorf("negotiated %q with session id %v, want a 2025 revision with an Mcp-Session-Id", got.ProtocolVersion, got.SessionID)
		}
		if got.Server.Name != "tmux" {
			t.Errorf("server name %q", got.Server.Name)
		}
		for _, want := range []string{"list_sessions", "get_pane_info", "send_keys"} {
			if !slices.Contains(got.Tools, want) {
				t.Errorf("tools/list lacks %s: %v", want, got.Tools)
			}
		}
		if got.ListSessions.IsError || len(got.ListSessions.Structured.Result) != 1 || got.ListSessions.Structured.Result[0].SessionName != "main" {
			t.Errorf("list_sessions: %+v", got.ListSessions)
		}
		if got.PaneInfo.IsError || got.PaneInfo.Structured.PaneID != "%0" {
			t.Errorf("get_pane_info: %+v", got.PaneInfo)
		}
		if len(got.Resource) != 1 || got.Resource[0].URI != "tmux://sessions/main" || !strings.Contains(got.Resource[0].Text, `"session_name": "main"`) {
			t.Errorf("resources/read tmux://sessions/main: %+v", got.Resource)
		}
		if len(got.Prompt) == 0 || got.Prompt[0].Role != "user" || !strings.Contains(got.Prompt[0].Text, "pane %0") {
			t.Errorf("prompts/get diagnose_failing_pane: %+v", got.Prompt)
		}
		if !slices.Contains(got.Completion, "main") {
			t.Errorf("completion of session_name %q: %v", "ma", got.Completion)
		}
		if got.SendKeys.IsError || !slices.Contains(got.Updates, "tmux://panes/%250/content") {
			t.Errorf("send_keys %+v; resources/updated received: %v", got.SendKeys, got.Updates)
		}
		if !strings.Contains(got.Content, "ts-client-42") {
			t.Errorf("pane content after send_keys: %q", got.Content)
		}
		if got.AfterIdle == nil || got.AfterIdle.IsError || got.AfterIdle.Structured.PaneID != "%0" {
			t.Errorf("get_pane_info after 3.5 s of listening with a 1 s idle timeout: %+v; want the session alive", got.AfterIdle)
		}
		t.Logf("TypeScript SDK client: protocol %s, %d tools, notifications %v, session alive after 3.5 s idle: %v",
			got.ProtocolVersion, len(got.Tools), got.Updates, got.AfterIdle != nil && !got.AfterIdle.IsError)
	})

	t.Run("wrong token", func(t *testing.T) {
		stdout, stderr, err := run(newToken())
		if err == nil {
			t.Fatalf("a wrong token was accepted: %s", stdout)
		}
		if !strings.Contains(stderr, "Unauthorized") {
			t.Errorf("want the SDK to report the server's Unauthorized answer, got: %s", stderr)
		}
	})
}
