package tmux_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// captureDir is the runner's private capture directory under tmp (the
// test's TMPDIR), or "" when there is none.
func captureDir(t *testing.T, tmp string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(tmp, "tmux-mcp-capture-*"))
	if len(m) > 1 {
		t.Fatalf("several capture directories: %v", m)
	}
	if len(m) == 0 {
		return ""
	}
	return m[0]
}

// showPane opens a window whose pane prints text, and waits for sentinel.
func showPane(t *testing.T, srv *tmuxtest.Server, name, script, sentinel string) {
	t.Helper()
	srv.MustRun("new-window", "-d", "-n", name, script+"; exec cat")
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		out, _ := srv.Run("capture-pane", "-p", "-J", "-S", "-", "-t", "main:"+name)
		return strings.Contains(out, sentinel)
	})
}

// Captures go over the control connection in buffer form and answer
// exactly what exec answers, for every capture flag the tools use, alone,
// chained with reads, and failing; no process is spawned, no buffer is
// left behind, and the private directory is 0700, empty between calls and
// gone after Close.
func TestControlCaptureMatchesExec(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	srv := tmuxtest.New(t)
	showPane(t, srv, "text", `printf '\033[1;31mred\033[0m plain \001ctl  \n'; seq 1 60; printf '%0120d\n' 7; echo 'héllo ✓'`, "✓")
	exe := srv.Runner()
	ctl, conns, spawns := controlRunner(t, srv)
	if _, err := ctl.Run(context.Background(), srv.Socket, tmux.Command{"display-message", "-p", "warm"}); err != nil {
		t.Fatal(err)
	}
	C := func(a ...string) tmux.Command { return a }
	p := "main:text"
	cases := []struct {
		name string
		cmds []tmux.Command
	}{
		{"visible", []tmux.Command{C("capture-pane", "-p", "-t", p)}},
		{"alias", []tmux.Command{C("capturep", "-p", "-t", p)}},
		{"escapes", []tmux.Command{C("capture-pane", "-p", "-e", "-t", p)}},
		{"joined", []tmux.Command{C("capture-pane", "-p", "-J", "-t", p, "-S", "-", "-E", "-")}},
		{"no-trim", []tmux.Command{C("capture-pane", "-p", "-N", "-t", p)}},
		{"octal", []tmux.Command{C("capture-pane", "-p", "-C", "-t", p, "-S", "-100")}},
		{"range", []tmux.Command{C("capture-pane", "-p", "-t", p, "-S", "-30", "-E", "2")}},
		{"reversed-range", []tmux.Command{C("capture-pane", "-p", "-t", p, "-S", "5", "-E", "3")}},
		{"with-display", []tmux.Command{C("capture-pane", "-p", "-t", p), C("display-message", "-p", "-t", p, tmux.Format("pane_id", "pane_title"))}},
		{"two-captures", []tmux.Command{C("list-panes", "-t", p, "-F", ""), C("capture-pane", "-p", "-t", p), C("capture-pane", "-p", "-J", "-t", "main:0")}},
		{"missing-pane", []tmux.Command{C("capture-pane", "-p", "-t", "%999")}},
		{"missing-second", []tmux.Command{C("capture-pane", "-p", "-t", p), C("capture-pane", "-p", "-t", "%999"), C("display-message", "-p", "never")}},
		{"companion-fails", []tmux.Command{C("capture-pane", "-p", "-t", p), C("has-session", "-t", "=nosuch"), C("capture-pane", "-p", "-t", p)}},
	}
	for _, c := range cases {
		want := summarize(exe.Run(context.Background(), srv.Socket, c.cmds...))
		before := spawns.Load()
		got := summarize(ctl.Run(context.Background(), srv.Socket, c.cmds...))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n control %+v\n    exec %+v", c.name, got, want)
		}
		if n := spawns.Load() - before; n != 0 {
			t.Errorf("%s: spawned %d tmux processes", c.name, n)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d control connections, want 1", n)
	}
	if out := srv.MustRun("list-buffers", "-F", "#{buffer_name}"); out != "" {
		t.Errorf("buffers left behind: %q", out)
	}
	dir := captureDir(t, tmp)
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 || !fi.IsDir() {
		t.Fatalf("capture directory %q: %v %v", dir, fi, err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("files left in the capture directory: %v", left)
	}
	ctl.Close()
	if d := captureDir(t, tmp); d != "" {
		t.Errorf("capture directory %q left after Close", d)
	}
	// After Close, captures go to exec and make no directory.
	if outs, err := ctl.Run(context.Background(), srv.Socket, C("capture-pane", "-p", "-t", p)); err != nil || !strings.Contains(string(outs[0]), "\u2713") {
		t.Errorf("capture after Close: %q %v", outs, err)
	}
	if d := captureDir(t, tmp); d != "" {
		t.Errorf("capture directory %q made after Close", d)
	}
}

// Concurrent captures of different panes on one connection each get their
// own pane's text.
func TestControlCaptureConcurrent(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	for i := range 3 {
		showPane(t, srv, fmt.Sprintf("w%d", i), fmt.Sprintf("seq %d %d", 1000*i, 1000*i+15), fmt.Sprint(1000*i+15))
	}
	ctl, conns, spawns := controlRunner(t, srv)
	want := make([]string, 3)
	for i := range want {
		out, err := srv.Runner().Run(context.Background(), srv.Socket, tmux.Command{"capture-pane", "-p", "-t", fmt.Sprintf("main:w%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		want[i] = string(out[0])
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8*30)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 30 {
				i := (g + k) % 3
				outs, err := ctl.Run(context.Background(), srv.Socket, tmux.Command{"capture-pane", "-p", "-t", fmt.Sprintf("main:w%d", i)})
				if err != nil || string(outs[0]) != want[i] {
					errs <- fmt.Errorf("w%d: %q %v", i, outs, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if spawns.Load() > 1 || conns.Load() != 1 { // the one spawn: list-sessions to connect
		t.Errorf("%d spawns, %d connections", spawns.Load(), conns.Load())
	}
}

// When tmux cannot write the capture file (here: the directory vanished;
// in life, a server of another user or host), the call is answered by exec,
// the buffer is deleted, and the socket's captures keep going to exec.
func TestControlCaptureSaveFails(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	srv := tmuxtest.New(t)
	showPane(t, srv, "text", "seq 1 5", "5")
	ctl, conns, spawns := controlRunner(t, srv)
	capture := tmux.Command{"capture-pane", "-p", "-t", "main:text"}
	want, err := srv.Runner().Run(context.Background(), srv.Socket, capture)
	if err != nil {
		t.Fatal(err)
	}
	if outs, err := ctl.Run(context.Background(), srv.Socket, capture); err != nil || string(outs[0]) != string(want[0]) {
		t.Fatalf("first capture: %q %v", outs, err)
	}
	if err := os.RemoveAll(captureDir(t, tmp)); err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		before := spawns.Load()
		outs, err := ctl.Run(context.Background(), srv.Socket, capture, tmux.Command{"display-message", "-p", "after"})
		if err != nil || string(outs[0]) != string(want[0]) || string(outs[1]) != "after\n" {
			t.Fatalf("round %d: %q %v", round, outs, err)
		}
		// Round 0: the answer and the buffer clean-up by exec; then only
		// the answer. Other calls go on over a new connection meanwhile.
		if n := spawns.Load() - before; n != 1 && (round > 0 || n != 2) {
			t.Errorf("round %d: %d spawns", round, n)
		}
		if _, err := ctl.Run(context.Background(), srv.Socket, tmux.Command{"display-message", "-p", "x"}); err != nil {
			t.Fatal(err)
		}
	}
	if out := srv.MustRun("list-buffers", "-F", "#{buffer_name}"); out != "" {
		t.Errorf("buffers left behind: %q", out)
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d control connections, want 2 (one reconnect after the failed save)", n)
	}
}

// A call with more captures than buffer form pays for goes over the text
// connection (capture_text.go) with the same answer as exec, a failing
// capture in it included; only its first use spawns a process (the
// list-sessions that picks the session to attach to).
func TestControlCaptureManyGoOverTextConnection(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	// The pane's shell draws its prompt a moment after the server starts:
	// both captures must see the same screen.
	tmuxtest.WaitFor(t, 10*time.Second, func() bool {
		out, _ := srv.Run("capture-pane", "-p", "-t", "%0")
		return strings.TrimSpace(out) != ""
	})
	ctl, conns, spawns := controlRunner(t, srv)
	if _, err := ctl.Run(context.Background(), srv.Socket, tmux.Command{"display-message", "-p", "warm"}); err != nil {
		t.Fatal(err)
	}
	for round, n := range []int{16, 17, 40, 40} {
		var cmds []tmux.Command
		for range n {
			cmds = append(cmds, tmux.Command{"capture-pane", "-p", "-J", "-t", "%0"})
		}
		if round == 3 {
			cmds[20] = tmux.Command{"capture-pane", "-p", "-t", "%99"}
		}
		want := summarize(srv.Runner().Run(context.Background(), srv.Socket, cmds...))
		before := spawns.Load()
		got := summarize(ctl.Run(context.Background(), srv.Socket, cmds...))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%d captures: %+v, exec %+v", n, got, want)
		}
		wantSpawns := int32(0)
		if n == 17 {
			wantSpawns = 1
		}
		if d := spawns.Load() - before; d != wantSpawns {
			t.Errorf("%d captures: %d spawns, want %d", n, d, wantSpawns)
		}
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d control connections, want 2", n)
	}
}
