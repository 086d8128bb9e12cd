// Package e2e drives the built tmux-mcp binary the way MCP clients do.
package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tmux-mcp-e2e")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "tmux-mcp")
	build := exec.Command("go", "build", "-o", binary, "../cmd/tmux-mcp")
	// As the release builds it (.goreleaser.yaml, Dockerfile, README): a
	// static binary, without libc mapped into it, so what these tests
	// measure (VmRSS in TestMemoryAfterCalls, cold start) is what ships.
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		panic("build failed: " + err.Error())
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// serverCmd runs the binary against the test's tmux server, with TMUX and
// TMUX_PANE removed so the developer's own tmux is never reached.
func serverCmd(ts *tmuxtest.Server, extraEnv ...string) *exec.Cmd {
	cmd := exec.Command(binary)
	cmd.Env = append(tmuxtest.CleanEnv(), "TMUX_MCP_SOCKET="+ts.Socket.Name, "TMUX_MCP_TMUX_BIN="+ts.Bin)
	cmd.Env = append(cmd.Env, extraEnv...)
	return cmd
}

// stdoutPipe is cmd.StdoutPipe without its race at exit: exec closes the
// pipe it makes as soon as Wait sees the process exit, so a reader still
// behind (a loaded machine) loses the last lines the process wrote, its
// answers at end of input, which is what several tests check. The read
// end of this pipe is the test's: it reads to EOF, which comes once the
// process has exited and everything it wrote has been read, whenever Wait
// runs. Call started after cmd.Start: it closes this process's copy of the
// write end.
func stdoutPipe(t testing.TB, cmd *exec.Cmd) (r *os.File, started func()) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = pw
	t.Cleanup(func() { _ = pr.Close(); _ = pw.Close() })
	return pr, func() { _ = pw.Close() }
}

// missing skips t for want of a program or package (why says which),
// except under CI (CI set), which installs everything the e2e tests use
// (.ci/run): there it fails.
func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (.ci/run installs it)", why)
	}
	t.Skip(why)
}

func connect(t *testing.T, cmd *exec.Cmd) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "0"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func TestStdioSession(t *testing.T) {
	ts := tmuxtest.New(t)
	cs := connect(t, serverCmd(ts))
	ctx := context.Background()

	init := cs.InitializeResult()
	if init.ServerInfo.Name != "tmux" {
		t.Errorf("server name %q", init.ServerInfo.Name)
	}
	if !strings.Contains(init.Instructions, "Safety tier: mutating") {
		t.Errorf("instructions: %q", init.Instructions)
	}
	names := map[string]bool{}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names[tool.Name] = true
		if tool.Annotations == nil {
			t.Errorf("%s has no annotations", tool.Name)
		}
	}
	for _, want := range []string{"list_panes", "get_pane_info"} {
		if !names[want] {
			t.Errorf("tools/list lacks %s", want)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_panes", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("list_panes: %v %+v", err, res)
	}
	var listed struct {
		Result []struct {
			PaneID string `json:"pane_id"`
		} `json:"result"`
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &listed); err != nil || len(listed.Result) != 1 || listed.Result[0].PaneID != "%0" {
		t.Errorf("list_panes result %s", raw)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_pane_info", Arguments: map[string]any{"pane_id": "%77"}})
	if err != nil || !res.IsError || res.Meta["error_type"] != "PaneNotFound" {
		t.Errorf("unknown pane: %v %+v", err, res)
	}
}

// TestAnswersBeforeExitOnEOF: requests written before stdin closes are all
// answered, and the process exits 0 with nothing but JSON-RPC on stdout.
func TestAnswersBeforeExitOnEOF(t *testing.T) {
	ts := tmuxtest.New(t)
	cmd := serverCmd(ts)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	msgs := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_pane_info","arguments":{"pane_id":"%0"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
	}
	_, _ = io.WriteString(stdin, strings.Join(msgs, "\n")+"\n")
	_ = stdin.Close()
	seen := map[float64]bool{}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("non-JSON on stdout: %q", sc.Text())
		}
		if id, ok := m["id"].(float64); ok {
			seen[id] = true
		}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit: %v", err)
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("server did not exit after stdin closed")
	}
	for _, id := range []float64{1, 2, 3} {
		if !seen[id] {
			t.Errorf("request %v not answered", id)
		}
	}
}
