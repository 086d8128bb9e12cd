package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// tsConfirmRun is what scripts/ts-client/confirm.mjs reports.
type tsConfirmRun struct {
	Transport       string `json:"transport"`
	ProtocolVersion string `json:"protocolVersion"`
	Questions       []struct {
		Mode            string         `json:"mode"`
		Message         string         `json:"message"`
		RequestedSchema map[string]any `json:"requestedSchema"`
	} `json:"questions"`
	Answer string `json:"answer"`
	Result struct {
		IsError   bool   `json:"isError"`
		ErrorType string `json:"errorType"`
		Text      string `json:"text"`
	} `json:"result"`
}

// TestConfirmTypeScriptClient: the official TypeScript SDK client (which
// speaks 2025-11-25) declares form elicitation and is asked, as an
// elicitation/create request, before kill_session runs, over HTTP and over
// stdio; it accepts, declines or cancels. Without the capability it is not
// asked: the call runs as it always did, or under --confirm is refused.
func TestConfirmTypeScriptClient(t *testing.T) {
	node := tsClient(t)
	ts := tmuxtest.New(t)
	token := newToken()
	h := startHTTPD(t, ts, []string{"--safety", "destructive"}, "TMUX_MCP_HTTP_TOKEN="+token)
	hStrict := startHTTPD(t, ts, []string{"--safety", "destructive", "--confirm", "destructive"}, "TMUX_MCP_HTTP_TOKEN="+token)
	serverEnv := []string{"TMUX_MCP_SOCKET=" + ts.Socket.Name, "TMUX_MCP_TMUX_BIN=" + ts.Bin, "TMUX_MCP_SAFETY=destructive", "TMUX_MCP_AUDIT_LOG=/dev/null"}

	run := func(t *testing.T, mode, where, session, answer string, env ...string) tsConfirmRun {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		var got tsConfirmRun
		if err := runTSScript(ctx, node, append([]string{"TMUX_MCP_TOKEN=" + token}, env...), &got, "confirm.mjs", mode, where, session, answer); err != nil {
			t.Fatalf("%v\nserver log tail:\n%s", err, tail(h.log.String(), 2000))
		}
		return got
	}

	n := 0
	for _, tr := range []struct{ mode, where, strict string }{{"http", h.Endpoint, hStrict.Endpoint}, {"stdio", binary, binary}} {
		for _, answer := range []string{"accept", "decline", "cancel"} {
			t.Run(tr.mode+"/"+answer, func(t *testing.T) {
				n++
				name := fmt.Sprintf("ts%d", n)
				victimSession(t, ts, name)
				got := run(t, tr.mode, tr.where, name, answer, serverEnv...)
				if got.ProtocolVersion != legacyVersion || len(got.Questions) != 1 {
					t.Fatalf("protocol %q, %d questions: %+v", got.ProtocolVersion, len(got.Questions), got)
				}
				q := got.Questions[0]
				t.Logf("TypeScript SDK client, %s, %s\nquestion as received (mode %s, schema %v):\n%s\nanswer: %s\noutcome: isError=%v %s: %s",
					tr.mode, got.ProtocolVersion, q.Mode, q.RequestedSchema, q.Message, answer, got.Result.IsError, got.Result.ErrorType, got.Result.Text)
				for _, want := range []string{`kill session "` + name + `"`, `window 0 "editor"`, "cat, waiting for input", `window 1 "build"`, "sleep, busy"} {
					if !strings.Contains(q.Message, want) {
						t.Errorf("question lacks %q", want)
					}
				}
				if q.Mode != "form" || q.RequestedSchema["type"] != "object" {
					t.Errorf("mode %q, schema %v: want a form", q.Mode, q.RequestedSchema)
				}
				if killed := !sessionAlive(ts, name); killed != (answer == "accept") {
					t.Errorf("answer %s: session killed %v", answer, killed)
				}
				if answer != "accept" && got.Result.ErrorType != "ConfirmationDeclined" {
					t.Errorf("answer %s: error type %q", answer, got.Result.ErrorType)
				}
			})
		}
		t.Run(tr.mode+"/no elicitation", func(t *testing.T) {
			n++
			name := fmt.Sprintf("ts%d", n)
			victimSession(t, ts, name)
			got := run(t, tr.mode, tr.strict, name, "none", append(serverEnv, "TMUX_MCP_CONFIRM=destructive")...)
			if len(got.Questions) != 0 || got.Result.ErrorType != "ConfirmationRequired" || !sessionAlive(ts, name) {
				t.Errorf("--confirm destructive: %+v; alive %v", got, sessionAlive(ts, name))
			}
			t.Logf("TypeScript SDK client without elicitation, %s, --confirm destructive: %s: %s", tr.mode, got.Result.ErrorType, got.Result.Text)
			got = run(t, tr.mode, tr.where, name, "none", serverEnv...)
			if len(got.Questions) != 0 || got.Result.IsError || sessionAlive(ts, name) {
				t.Errorf("default: %+v; alive %v", got, sessionAlive(ts, name))
			}
		})
	}
}
