package remote_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/remote"
	"github.com/tmux-mcp/tmux-mcp/internal/sshtest"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// TestSet: hosts by name, one engine each, an unknown name listed with the
// configured ones, and Close leaves no ssh process, no control client and
// no watcher on the remote server.
func TestSet(t *testing.T) {
	s := sshtest.Start(t)
	ts := tmuxtest.New(t)
	set, err := remote.NewSet([]remote.Spec{{Name: "b", Destination: sshtest.Alias}, {Name: "a", Destination: sshtest.Alias}}, fastOptions(s))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(set.Names(), ","); got != "a,b" {
		t.Fatalf("names %q", got)
	}
	if _, err := set.Get("nope"); !errors.Is(err, remote.ErrUnknownHost) || !strings.Contains(err.Error(), "configured: a, b") {
		t.Fatalf("unknown host: %v", err)
	}
	e1, err := set.Get("a")
	if err != nil {
		t.Fatal(err)
	}
	if e2, _ := set.Get("a"); e2 != e1 {
		t.Fatal("a second engine for the same host")
	}
	sock := tmux.Socket{Path: ts.SocketPath()}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, name := range []string{"a", "b"} {
		e, _ := set.Get(name)
		rows, err := e.Client.Rows(ctx, sock, tmux.Command{"list-panes", "-t", "main"}, []string{"pane_id"})
		if err != nil || len(rows) != 1 {
			t.Fatalf("%s: %v %v", name, rows, err)
		}
		sess := ts.MustRun("display-message", "-p", "-t", "main", "#{session_id}")
		if _, err := e.Watchers.Get(sock, sess); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(ts.MustRun("list-clients", "-F", "#{client_control_mode}"), "1"); n != 4 {
		t.Fatalf("%d control clients, want 4 (an engine and a watcher per host)", n)
	}
	if err := set.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := set.Get("a"); err == nil {
		t.Fatal("Get after Close")
	}
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		clients, _ := ts.Run("list-clients")
		return clients == "" && len(sshtest.Children()) == 0
	})
	if _, err := remote.NewSet([]remote.Spec{{Name: "a", Destination: "x"}, {Name: "a", Destination: "y"}}, remote.Options{}); err == nil {
		t.Fatal("duplicate names accepted")
	}
	if _, err := remote.NewSet([]remote.Spec{{Name: "a", Destination: "-oProxyCommand=x"}}, remote.Options{}); err == nil {
		t.Fatal("option injection accepted")
	}
}
