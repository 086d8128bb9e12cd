package tmux_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

func TestExecRunnerChainsAndSplitsOutputs(t *testing.T) {
	srv := tmuxtest.New(t)
	r := srv.Runner()
	outs, err := r.Run(context.Background(), srv.Socket,
		tmux.Command{"display-message", "-p", "one"},
		tmux.Command{"display-message", "-p", "two\nlines"},
		tmux.Command{"display-message", "-p", "three"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"one\n", "two\nlines\n", "three\n"}
	if len(outs) != len(want) {
		t.Fatalf("got %d outputs, want %d: %q", len(outs), len(want), outs)
	}
	for i := range want {
		if string(outs[i]) != want[i] {
			t.Errorf("output %d = %q, want %q", i, outs[i], want[i])
		}
	}
}

func TestExecRunnerStopsAtFailingCommand(t *testing.T) {
	srv := tmuxtest.New(t)
	outs, err := srv.Runner().Run(context.Background(), srv.Socket,
		tmux.Command{"display-message", "-p", "first"},
		tmux.Command{"list-panes", "-t", "%999"},
		tmux.Command{"set-option", "-g", "@ran", "yes"})
	var ce *tmux.CommandError
	if !errors.As(err, &ce) {
		t.Fatalf("want *CommandError, got %v", err)
	}
	if !errors.Is(err, tmux.ErrNotFound) {
		t.Errorf("want ErrNotFound classification, got %v", err)
	}
	if ce.Command[0] != "list-panes" || ce.Command[2] != "%999" {
		t.Errorf("failing command = %q", ce.Command)
	}
	if len(outs) != 1 || string(outs[0]) != "first\n" {
		t.Errorf("outputs before the failure = %q", outs)
	}
	if got, _ := srv.Run("show-options", "-gqv", "@ran"); got != "" {
		t.Errorf("command after the failure ran: @ran=%q", got)
	}
}

// An argument that ends in ";" must reach tmux as itself, never as a command
// separator.
func TestExecRunnerTrailingSemicolonIsLiteral(t *testing.T) {
	srv := tmuxtest.New(t)
	for _, v := range []string{";", "a;", `a\;`, `\\;`, "x ; kill-server;", "; ;"} {
		if _, err := srv.Runner().Run(context.Background(), srv.Socket, tmux.Command{"set-option", "-g", "@v", v}); err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		got := srv.MustRun("show-options", "-gv", "@v")
		if got != v {
			t.Errorf("value %q came back as %q", v, got)
		}
	}
}

func TestExecRunnerErrors(t *testing.T) {
	srv := tmuxtest.NewWith(t) // no session: no server
	ctx := context.Background()
	_, err := srv.Runner().Run(ctx, srv.Socket, tmux.Command{"list-sessions"})
	if !errors.Is(err, tmux.ErrNoServer) {
		t.Errorf("dead server: want ErrNoServer, got %v", err)
	}
	_, err = (&tmux.ExecRunner{Bin: "/nonexistent/tmux"}).Run(ctx, srv.Socket, tmux.Command{"list-sessions"})
	if !errors.Is(err, tmux.ErrTmuxMissing) {
		t.Errorf("missing binary: want ErrTmuxMissing, got %v", err)
	}
	_, err = srv.Runner().Run(ctx, srv.Socket, tmux.Command{"display-message", "-p", "a\x00b"})
	if err == nil || !strings.Contains(err.Error(), "NUL") {
		t.Errorf("NUL argument: got %v", err)
	}
}

// A chain longer than one tmux client message is split over processes and
// still returns every output in order; a single oversized command is a
// typed error, not tmux's bare "command too long".
func TestExecRunnerSplitsLongChains(t *testing.T) {
	srv := tmuxtest.New(t)
	var spawns int
	r := srv.Runner()
	r.OnSpawn = func([]string) { spawns++ }
	var cmds []tmux.Command
	for i := 0; i < 400; i++ {
		cmds = append(cmds, tmux.Command{"display-message", "-p", fmt.Sprintf("line-%03d-%s", i, strings.Repeat("x", 40))})
	}
	outs, err := r.Run(context.Background(), srv.Socket, cmds...)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 400 || !strings.HasPrefix(string(outs[399]), "line-399-") || !strings.HasPrefix(string(outs[0]), "line-000-") {
		t.Fatalf("%d outputs", len(outs))
	}
	if spawns < 2 {
		t.Errorf("expected the chain to be split, %d spawns", spawns)
	}
	_, err = r.Run(context.Background(), srv.Socket, tmux.Command{"display-message", "-p", strings.Repeat("y", 20000)})
	if !errors.Is(err, tmux.ErrTooLong) {
		t.Errorf("oversized command: %v", err)
	}
}
