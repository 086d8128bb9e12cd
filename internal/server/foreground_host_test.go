package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tmux-mcp/tmux-mcp/internal/foreground"
	"github.com/tmux-mcp/tmux-mcp/internal/foreground/fgcorpus"
)

// TestRemoteForegroundCorpus: the corpus of real programs, each inspected
// through a remote host over the loopback sshd (get_pane_info with
// foreground=true and host=box), as an agent would. It prints the table.
func TestRemoteForegroundCorpus(t *testing.T) {
	he := newHostEnv(t)
	e, box := he.env, he.box
	box.MustRun("set-option", "-g", "remain-on-exit", "on")
	var table []string
	for _, c := range fgcorpus.Cases(t) {
		t.Run(c.Name, func(t *testing.T) {
			if !fgcorpus.Require(t, c.Needs...) {
				return
			}
			e := e.with(t)
			pane := fgcorpus.Start(t, box, "main", c)
			defer box.Run("kill-window", "-t", pane)
			r := fgcorpus.Settle(t, func() foreground.Report {
				var p PaneInfoForeground
				e.ok("get_pane_info", on(map[string]any{"pane_id": pane, "foreground": true}), &p)
				if p.Foreground == nil {
					t.Fatalf("no foreground object: %+v", p)
				}
				f := p.Foreground
				return foreground.Report{State: foreground.State(f.State), Basis: foreground.Basis(f.Basis), Secret: f.Secret, Command: f.Command, PID: f.PID}
			}, c.Want)
			for _, bad := range fgcorpus.Check(c, r) {
				t.Error(bad)
			}
			table = append(table, fmt.Sprintf("%-46s %-34s %s", c.Name, fmt.Sprint(c.Want), fgcorpus.Describe(r)))
		})
	}
	t.Log("\n" + strings.Join(table, "\n"))
}
