package server

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// BenchmarkRunCommandTrueByShell is BenchmarkRunCommandTrue in each shell
// run_command wraps differently. sh's wrapper has no job control: it is the
// baseline of the same run for the cost of bash's, zsh's and fish's (zsh's
// runs stty twice; fish starts two more fish processes, as before).
func BenchmarkRunCommandTrueByShell(b *testing.B) {
	home := b.TempDir()
	shells := []struct {
		name string
		argv []string
	}{
		{"sh", []string{"env", "PS1=$ ", "sh"}},
		{"bash", []string{"env", "PS1=$ ", "bash", "--norc", "--noprofile"}},
		{"zsh", []string{"env", "ZDOTDIR=" + home, "PS1=%% ", "zsh", "-f"}},
		{"fish", []string{"env", "HOME=" + home, "fish_greeting=", "fish", "--no-config", "-C", "function fish_prompt; echo -n '> '; end"}},
	}
	for _, sh := range shells {
		b.Run(sh.name, func(b *testing.B) {
			if _, err := exec.LookPath(sh.name); err != nil {
				if os.Getenv("CI") == "true" {
					b.Fatalf("%s is not installed", sh.name)
				}
				b.Skipf("%s is not installed", sh.name)
			}
			ts := tmuxtest.New(b)
			ts.MustRun(append([]string{"respawn-pane", "-k", "-t", "%0"}, sh.argv...)...)
			tmuxtest.WaitFor(b, 10*time.Second, func() bool {
				out, _ := ts.Run("display-message", "-p", "-t", "%0", "#{pane_current_command}")
				screen, _ := ts.Run("capture-pane", "-p", "-t", "%0")
				return out == sh.name && strings.TrimSpace(screen) != ""
			})
			e := benchEnv(b, ts, "control")
			args := &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"pane_id": "%0", "command": "true", "timeout": 10}}
			e.ok("run_command", args.Arguments, nil) // attach the watcher
			for b.Loop() {
				res, err := e.cs.CallTool(context.Background(), args)
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}
