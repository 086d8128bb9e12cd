package server

import (
	"context"
	"os/exec"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// BenchmarkGetPaneInfo compares one get_pane_info call through the whole
// server (MCP client, validation, tmux round trip, result) with the floor
// of the exec transport: one bare `tmux display-message` process.
func BenchmarkGetPaneInfo(b *testing.B) {
	ts := tmuxtest.New(b)
	b.Run("bare-exec-display-message", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command(ts.Bin, "-L", ts.Socket.Name, "display-message", "-p", "-t", "%0", "#{pane_id}")
			cmd.Env = tmuxtest.CleanEnv()
			if out, err := cmd.Output(); err != nil || len(out) == 0 {
				b.Fatal(err)
			}
		}
	})
	b.Run("server-get_pane_info", func(b *testing.B) {
		e := newEnvOn(b, ts)
		args := &mcp.CallToolParams{Name: "get_pane_info", Arguments: map[string]any{"pane_id": "%0"}}
		for b.Loop() {
			res, err := e.cs.CallTool(context.Background(), args)
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	})
}
