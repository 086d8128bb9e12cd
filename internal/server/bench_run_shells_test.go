package server

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// BenchmarkRunCommandTrueByShell is BenchmarkRunCommandTrue in each shell
// run_command wraps differently. sh's wrapper has no job control: it is the
// baseline of the same run for the cost of bash's, zsh's and fish's (zsh's
// runs stty twice; fish starts two more fish processes, as before).
func BenchmarkRunCommandTrueByShell(b *testing.B) {
	home := b.TempDir()
	// sh, then the shells the job-control tests start, as they start them.
	shells := append([]jobShell{{bin: "sh", argv: func(bin, _ string) []string { return []string{"env", "PS1=$ ", bin} }}}, jobShells...)
	for _, sh := range shells {
		b.Run(sh.bin, func(b *testing.B) {
			if _, err := exec.LookPath(sh.bin); err != nil {
				if os.Getenv("CI") == "true" {
					b.Fatalf("%s is not installed", sh.bin)
				}
				b.Skipf("%s is not installed", sh.bin)
			}
			ts := tmuxtest.New(b)
			startShell(b, ts, sh.bin, sh.argv(sh.bin, home))
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
