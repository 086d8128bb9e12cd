package termgrid

import (
	"context"
	"testing"

	"github.com/tmux-mcp/tmux-mcp/internal/termgrid/screentest"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// TestCorpusExact holds Parse to real programs' screens (screentest): each
// capture (-e -N) is rebuilt byte for byte from its cells, and the cells'
// text is tmux's plain capture of the same moment (one command).
func TestCorpusExact(t *testing.T) {
	ts := tmuxtest.NewWith(t)
	ts.MustRun("new-session", "-d", "-s", "base")
	for _, sc := range screentest.Start(t, ts) {
		outs, err := ts.Runner().Run(context.Background(), ts.Socket,
			tmux.Command{"capture-pane", "-p", "-e", "-N", "-t", sc.Pane}, tmux.Command{"capture-pane", "-p", "-t", sc.Pane})
		if err != nil {
			t.Fatal(err)
		}
		styled, plain := string(outs[0]), string(outs[1])
		s := Parse(outs[0])
		if got := string(appendCapture(nil, s)); got != styled {
			t.Errorf("%s: capture not rebuilt exactly\n got %q\nwant %q", sc.Name, got, styled)
		}
		if got := s.Text(); got != plain {
			t.Errorf("%s: text differs from tmux's plain capture\n got %q\nwant %q", sc.Name, got, plain)
		}
		t.Logf("%s:\n%s", sc.Name, plain)
	}
}
