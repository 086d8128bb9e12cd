package remote_test

import (
	"context"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/remote"
	"github.com/tmux-mcp/tmux-mcp/internal/sshtest"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// TestSetStates: the counts the metrics read (ssh hosts up, down, idle)
// follow the real connections: none before a call, up while a master
// lives, down once it is gone, and idle again after Close.
func TestSetStates(t *testing.T) {
	s := sshtest.Start(t)
	ts := tmuxtest.New(t)
	set, err := remote.NewSet([]remote.Spec{{Name: "a", Destination: sshtest.Alias}, {Name: "b", Destination: sshtest.Alias},
		{Name: "c", Destination: sshtest.Alias}}, fastOptions(s))
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	want := func(step string, up, down, idle int) {
		t.Helper()
		if u, d, i := set.States(); u != up || d != down || i != idle {
			t.Errorf("%s: up %d down %d idle %d, want %d %d %d", step, u, d, i, up, down, idle)
		}
	}
	want("before any call", 0, 0, 3)
	e, err := set.Get("a")
	if err != nil {
		t.Fatal(err)
	}
	want("an engine, not connected yet", 0, 0, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := e.Client.Rows(ctx, tmux.Socket{Path: ts.SocketPath()}, tmux.Command{"list-sessions"}, []string{"session_id"}); err != nil {
		t.Fatal(err)
	}
	want("after a call", 1, 0, 2)
	e.Host.Disconnect()
	want("after the connection was lost", 0, 1, 2)
	if err := set.Close(); err != nil {
		t.Fatal(err)
	}
	want("after Close", 0, 0, 3)
}
