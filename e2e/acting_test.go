package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// TestActingSession drives the built binary as an agent would, with the
// server "running inside" pane %0 of the test server (TMUX and TMUX_PANE
// point there): create a session, split it, type, paste, use a buffer,
// respawn a pane, and be refused when targeting its own pane.
func TestActingSession(t *testing.T) {
	ts := tmuxtest.New(t)
	ts.MustRun("respawn-pane", "-k", "-t", "%0", "sh")
	cmd := serverCmd(ts, "TMUX="+ts.SocketPath()+",1,0", "TMUX_PANE=%0", "TMUX_MCP_SAFETY=destructive")
	cs := connect(t, cmd)
	ctx := context.Background()
	call := func(name string, args map[string]any) (*mcp.CallToolResult, map[string]any) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var sc map[string]any
		if res.StructuredContent != nil {
			raw, _ := json.Marshal(res.StructuredContent)
			_ = json.Unmarshal(raw, &sc)
		}
		summary := ""
		if len(res.Content) > 0 {
			summary = res.Content[0].(*mcp.TextContent).Text
			if len(summary) > 160 {
				summary = summary[:160] + "..."
			}
		}
		t.Logf("%s %v -> isError=%v %s", name, args, res.IsError, summary)
		return res, sc
	}
	ok := func(name string, args map[string]any) map[string]any {
		t.Helper()
		res, sc := call(name, args)
		if res.IsError {
			t.Fatalf("%s failed", name)
		}
		return sc
	}
	sess := ok("create_session", map[string]any{"session_name": "work"})
	a := sess["active_pane_id"].(string)
	split := ok("split_window", map[string]any{"pane_id": a, "direction": "right", "shell": "cat"})
	b := split["pane_id"].(string)
	ok("send_keys", map[string]any{"pane_id": b, "keys": "typed-by-agent"})
	ok("paste_text", map[string]any{"pane_id": b, "text": "pasted text\n"})
	buf := ok("load_buffer", map[string]any{"content": "from a buffer\n", "logical_name": "note"})
	name := buf["buffer_name"].(string)
	ok("paste_buffer", map[string]any{"buffer_name": name, "pane_id": b})
	shown := ok("show_buffer", map[string]any{"buffer_name": name})
	if shown["content"] != "from a buffer\n" {
		t.Errorf("show_buffer: %v", shown)
	}
	ok("delete_buffer", map[string]any{"buffer_name": name})
	deadline := time.Now().Add(5 * time.Second)
	var screen string
	for time.Now().Before(deadline) {
		screen = ts.MustRun("capture-pane", "-p", "-t", b)
		if strings.Contains(screen, "typed-by-agent") && strings.Contains(screen, "pasted text") && strings.Contains(screen, "from a buffer") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(screen, "from a buffer") {
		t.Errorf("pane %s shows %q", b, screen)
	}
	before := ok("get_pane_info", map[string]any{"pane_id": b})
	after := ok("respawn_pane", map[string]any{"pane_id": b, "shell": "cat"})
	if after["pane_id"] != b || after["pane_pid"] == before["pane_pid"] {
		t.Errorf("respawn: before %v after %v", before["pane_pid"], after["pane_pid"])
	}
	run := ok("run_command", map[string]any{"pane_id": "%0", "command": "echo from-run-$((40+2))"})
	if out, _ := json.Marshal(run["output"]); !strings.Contains(string(out), "from-run-42") {
		t.Errorf("run_command output %s", out)
	}
	// Its own pane, window and session are off limits.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"kill_pane", map[string]any{"pane_id": "%0"}},
		{"respawn_pane", map[string]any{"pane_id": "%0"}},
		{"kill_window", map[string]any{"window_id": "@0"}},
		{"kill_session", map[string]any{"session_name": "main"}},
		{"kill_server", map[string]any{}},
	} {
		res, _ := call(c.tool, c.args)
		if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "Refusing") {
			t.Errorf("%s on its own pane was not refused", c.tool)
		}
	}
	ok("kill_pane", map[string]any{"pane_id": b})
	ok("kill_session", map[string]any{"session_name": "work"})
	if out := ts.MustRun("list-sessions", "-F", "#{session_name}"); out != "main" {
		t.Errorf("sessions left: %q", out)
	}
}
