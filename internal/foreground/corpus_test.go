package foreground_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/tmux-mcp/tmux-mcp/internal/foreground"
	"github.com/tmux-mcp/tmux-mcp/internal/foreground/fgcorpus"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// TestCorpus runs real programs in real panes and checks the state each
// settles in, with every source and with only what a user without ptrace
// attach rights can read. It prints the table of expected and seen states.
func TestCorpus(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the corpus runs on Linux")
	}
	s := tmuxtest.New(t)
	s.MustRun("set-option", "-g", "remain-on-exit", "on")
	s.MustRun("set-option", "-g", "history-limit", "100")
	type row struct{ name, want, full, limited, dump string }
	var table []row
	for _, c := range fgcorpus.Cases(t) {
		t.Run(c.Name, func(t *testing.T) {
			if !fgcorpus.Require(t, c.Needs...) {
				return
			}
			pane := fgcorpus.Start(t, s, "main", c)
			tg := fgcorpus.Target(t, s, pane)
			seen := map[string]foreground.Report{}
			for _, label := range []string{"every source", "same-user sources only", "the remote dump"} {
				// As the server does (internal/server/foreground.go): tmux's
				// #{pane_dead} first, then the OS. A dead pane's pid may
				// already belong to another process on a busy machine
				// (pid_max 32768 wraps in seconds under parallel test runs),
				// which the OS read alone can only call unknown.
				inspect := func() foreground.Report {
					if dead, _ := s.Run("display-message", "-p", "-t", pane, "#{pane_dead}"); dead == "1" {
						return foreground.ExitedReport(tg.PanePID, "")
					}
					return foreground.Inspect(tg, foreground.Options{NoSyscall: label != "every source"})
				}
				if label == "the remote dump" {
					inspect = func() foreground.Report { return viaDump(t, s, pane, tg.PanePID) }
				}
				r := fgcorpus.Settle(t, inspect, c.Want)
				seen[label] = r
				for _, bad := range fgcorpus.Check(c, r) {
					t.Errorf("%s: %s", label, bad)
				}
			}
			want := fmt.Sprint(c.Want)
			if c.Secret {
				want += " secret"
			}
			table = append(table, row{c.Name, want, fgcorpus.Describe(seen["every source"]), fgcorpus.Describe(seen["same-user sources only"]), fgcorpus.Describe(seen["the remote dump"])})
			s.MustRun("kill-window", "-t", pane)
		})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-46s %-34s %-46s %-46s %s\n", "program / situation", "expected", "seen (every source)", "seen (same-user sources only)", "seen (the remote dump)")
	for _, r := range table {
		fmt.Fprintf(&b, "%-46s %-34s %-46s %-46s %s\n", r.name, r.want, r.full, r.limited, r.dump)
	}
	t.Log(b.String())
}

// viaDump inspects a pane as a remote host's is: the fixed script run by
// the pane's own tmux server (run-shell), its dump read back from a buffer.
func viaDump(t *testing.T, s *tmuxtest.Server, pane string, pid int) foreground.Report {
	t.Helper()
	buf := "tmux-mcp-fg-test"
	out, err := s.Run("run-shell", "-t", pane, foreground.RemoteScript(buf), ";", "show-buffer", "-b", buf, ";", "delete-buffer", "-b", buf)
	if err != nil {
		if dead, _ := s.Run("display-message", "-p", "-t", pane, "#{pane_dead}"); dead == "1" {
			return foreground.ExitedReport(pid, "")
		}
		t.Fatalf("the dump: %v", err)
	}
	return foreground.ParseRemote([]byte(out), pid)
}
