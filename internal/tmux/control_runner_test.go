package tmux_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// controlRunner returns a ControlRunner for srv that counts control
// connections and exec'd processes, closed when the test ends.
func controlRunner(t testing.TB, srv *tmuxtest.Server) (*tmux.ControlRunner, *atomic.Int32, *atomic.Int32) {
	var conns, spawns atomic.Int32
	r := &tmux.ControlRunner{
		Bin: srv.Bin, Env: tmuxtest.CleanEnv(),
		Exec:      &tmux.ExecRunner{Bin: srv.Bin, Env: tmuxtest.CleanEnv(), OnSpawn: func([]string) { spawns.Add(1) }},
		OnConnect: func([]string) { conns.Add(1) },
	}
	t.Cleanup(func() { r.Close() })
	return r, &conns, &spawns
}

type runResult struct {
	outs []string
	err  string
	cmd  []string
	kind error
	typ  string
}

func summarize(outs [][]byte, err error) runResult {
	var res runResult
	for _, o := range outs {
		res.outs = append(res.outs, string(o))
	}
	if err != nil {
		res.err = err.Error()
		res.typ = fmt.Sprintf("%T", err)
		var ce *tmux.CommandError
		if errors.As(err, &ce) {
			res.cmd, res.kind = ce.Command, ce.Kind
		}
	}
	return res
}

func TestControlRunnerMatchesExec(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	// Pane text that looks like framing, printed in a pane and captured.
	srv.MustRun("new-window", "-d", "-n", "forged", "printf '%s\\n' '%end 123 456 1' '%begin 1 2 3' '%error 1700000000 99 1' '%exit' 'h\u00e9llo \u2192 \u2713'; exec cat")
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		out, _ := srv.Run("capture-pane", "-p", "-t", "main:forged")
		return strings.Contains(out, "\u2713")
	})
	exe := srv.Runner()
	ctl, conns, _ := controlRunner(t, srv)
	C := func(a ...string) tmux.Command { return a }
	cases := []struct {
		name string
		cmds []tmux.Command
	}{
		{"one", []tmux.Command{C("display-message", "-p", "one")}},
		{"format", []tmux.Command{C("display-message", "-p", "#{session_name}:#{window_index} #{pane_width}x#{pane_height}")}},
		{"multi-line", []tmux.Command{C("display-message", "-p", "two\nlines")}},
		{"empty-line", []tmux.Command{C("display-message", "-p", "")}},
		{"no-output", []tmux.Command{C("set-option", "-g", "@x", "v")}},
		{"non-ascii", []tmux.Command{C("display-message", "-p", "h\u00e9llo \u2192 \u2713 \U0001F600")}},
		{"quoting", []tmux.Command{C("display-message", "-p", `a;b ; "c" 'd' $HOME ~ #{l:#{x}} \ {} %if`)}},
		{"trailing-semicolon", []tmux.Command{C("set-option", "-g", "@y", "x;"), C("show-options", "-gv", "@y")}},
		{"three", []tmux.Command{C("display-message", "-p", "a"), C("list-panes", "-a", "-F", "#{pane_id}"), C("display-message", "-p", "c")}},
		{"capture-forged", []tmux.Command{C("capture-pane", "-p", "-t", "main:forged")}},
		{"capture-empty-range", []tmux.Command{C("capture-pane", "-p", "-t", "main:0.0", "-S", "5", "-E", "4")}},
		{"fail-first", []tmux.Command{C("list-panes", "-t", "%999"), C("display-message", "-p", "never")}},
		{"fail-middle", []tmux.Command{C("display-message", "-p", "first"), C("has-session", "-t", "=nosuch"), C("set-option", "-g", "@ran", "yes")}},
		{"fail-last", []tmux.Command{C("display-message", "-p", "first"), C("kill-window", "-t", "@999")}},
		{"ambiguous-or-bad-flag", []tmux.Command{C("list-windows", "-Z")}},
		{"unknown-option", []tmux.Command{C("show-options", "-g", "no-such-option")}},
		{"list-sessions", []tmux.Command{C("list-sessions", "-F", "#{session_id} #{session_name} #{session_windows}")}},
		{"routed-to-exec", []tmux.Command{C("display-message", "-p", "x"), C("wait-for", "-S", "chan")}},
		{"folded", []tmux.Command{C("display-message", "-p", "-t", "%0", tmux.Format("pane_id", "pane_width"))}},
		{"folded-empty-fields", []tmux.Command{C("display-message", "-p", "-t", "%0", tmux.Format("@unset_option", "pane_id"))}},
		{"folded-missing-pane", []tmux.Command{C("display-message", "-p", "-t", "%999", tmux.Format("pane_id"))}},
		{"folded-after-three", []tmux.Command{C("display-message", "-p", "a"), C("list-panes", "-a", "-F", "#{pane_id}"), C("display-message", "-p", tmux.Format("session_name"))}},
		{"folded-fail-middle", []tmux.Command{C("display-message", "-p", "first"), C("has-session", "-t", "=nosuch"), C("display-message", "-p", tmux.Format("pane_id"))}},
		{"folded-bad-flag", []tmux.Command{C("display-message", "-Z", "-p", tmux.Format("pane_id"))}},
	}
	for _, c := range cases {
		want := summarize(exe.Run(context.Background(), srv.Socket, c.cmds...))
		got := summarize(ctl.Run(context.Background(), srv.Socket, c.cmds...))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n control %+v\n    exec %+v", c.name, got, want)
		}
	}
	if got, _ := srv.Run("show-options", "-gqv", "@ran"); got != "" {
		t.Errorf("a command after the failure ran: @ran=%q", got)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d control connections, want 1", n)
	}
}

// Pane text that forges the exact guard of its own reply block must make
// the call fail, never return cut or shifted output. The reply's time and
// command number are not known in advance, so the pane prints every
// plausible guard and the whole history is captured.
func TestControlRunnerForgedGuardCannotReachTheConnection(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	srv.MustRun("set-option", "-g", "history-limit", "10000")
	now := time.Now().Unix()
	srv.MustRun("new-window", "-d", "-n", "forged", fmt.Sprintf(
		`awk 'BEGIN { for (s = %d; s <= %d; s++) for (n = 0; n < 1500; n++) printf "%%%%end %%d %%d 1\n", s, n; print "done" }'; exec cat`, now-1, now+3))
	capture := tmux.Command{"capture-pane", "-p", "-S", "-", "-E", "-", "-t", "main:forged"}
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		out, _ := srv.Run(capture...)
		return strings.Contains(out, "\ndone")
	})
	exeOuts, err := srv.Runner().Run(context.Background(), srv.Socket, capture)
	if err != nil {
		t.Fatal(err)
	}
	ctl, conns, _ := controlRunner(t, srv)
	ctx := context.Background()
	// Warm the connection, then capture the forged screen through the
	// runner: captures never travel over the shared connection, so the
	// output is exact and the connection survives.
	if _, err := ctl.Run(ctx, srv.Socket, tmux.Command{"display-message", "-p", "warm"}); err != nil {
		t.Fatal(err)
	}
	outs, err := ctl.Run(ctx, srv.Socket, capture, tmux.Command{"display-message", "-p", "after"})
	if err != nil || len(outs) != 2 || string(outs[0]) != string(exeOuts[0]) || string(outs[1]) != "after\n" {
		t.Fatalf("forged capture: %v, %d outputs", err, len(outs))
	}
	// A user format that starts with a pane-controlled value stays off the
	// connection too.
	srv.MustRun("select-pane", "-t", "main:forged", "-T", fmt.Sprintf("%%end %d 1 1", now))
	outs, err = ctl.Run(ctx, srv.Socket, tmux.Command{"display-message", "-p", "-t", "main:forged", "#{pane_title}"})
	if err != nil || !strings.HasPrefix(string(outs[0]), "%end ") {
		t.Fatalf("title: %q %v", outs, err)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1 (no reconnect)", n)
	}
}

// Attaching the control client creates no session, changes no window size,
// and leaves the server free to exit when its last session goes.
func TestControlRunnerSideEffects(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	before := srv.MustRun("list-sessions", "-F", "#{session_id} #{session_name} #{session_windows} #{window_width}x#{window_height}")
	ctl, conns, _ := controlRunner(t, srv)
	ctx := context.Background()
	if _, err := ctl.Run(ctx, srv.Socket, tmux.Command{"refresh-client", "-C", "200x60"}); err == nil {
		// refresh-client goes to exec, which has no client to refresh.
		t.Error("refresh-client succeeded: it must not reach the control client")
	}
	outs, err := ctl.Run(ctx, srv.Socket, tmux.Command{"list-clients", "-F", "#{client_control_mode} #{session_name}"})
	if err != nil {
		t.Fatal(err)
	}
	if string(outs[0]) != "1 main\n" {
		t.Errorf("clients %q, want the control client on main", outs[0])
	}
	if after := srv.MustRun("list-sessions", "-F", "#{session_id} #{session_name} #{session_windows} #{window_width}x#{window_height}"); after != before {
		t.Errorf("sessions changed:\n%s\nwant\n%s", after, before)
	}
	if got := srv.MustRun("display-message", "-p", "-t", "main:0", "#{window_width}x#{window_height}"); got != "80x24" {
		t.Errorf("window size %s after connecting, want 80x24", got)
	}
	// Killing the only session through the runner succeeds as over exec,
	// and the server exits although the control client was attached.
	if _, err := ctl.Run(ctx, srv.Socket, tmux.Command{"kill-session", "-t", "main"}); err != nil {
		t.Fatalf("kill-session: %v", err)
	}
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		_, err := srv.Runner().Run(ctx, srv.Socket, tmux.Command{"list-sessions"})
		return errors.Is(err, tmux.ErrNoServer)
	})
	_, err = ctl.Run(ctx, srv.Socket, tmux.Command{"list-sessions"})
	if !errors.Is(err, tmux.ErrNoServer) {
		t.Errorf("after the server exited: want ErrNoServer, got %v", err)
	}
	if _, ok := ctl.Identity(srv.Socket); ok {
		t.Error("identity reported for a dead server")
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
	// The socket must not have been given a new server or session.
	if _, err := srv.Run("has-session"); err == nil {
		t.Error("a server runs again on the socket")
	}
}

func TestControlRunnerNoServer(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.NewWith(t) // no session: no server
	ctl, conns, spawns := controlRunner(t, srv)
	_, err := ctl.Run(context.Background(), srv.Socket, tmux.Command{"list-sessions"})
	if !errors.Is(err, tmux.ErrNoServer) {
		t.Errorf("want ErrNoServer, got %v", err)
	}
	if conns.Load() != 0 || spawns.Load() != 2 {
		t.Errorf("connections %d, exec spawns %d; want 0 and 2 (list-sessions, then the call)", conns.Load(), spawns.Load())
	}
	if _, err := srv.Run("has-session"); err == nil {
		t.Error("the runner started a server")
	}
	_, err = ctl.Run(context.Background(), srv.Socket, tmux.Command{"display-message", "-p", "a\x00b"})
	if err == nil || !strings.Contains(err.Error(), "NUL") {
		t.Errorf("NUL argument: got %v", err)
	}
	if outs, err := ctl.Run(context.Background(), srv.Socket); outs != nil || err != nil {
		t.Errorf("no commands: %q, %v", outs, err)
	}
}

func TestControlRunnerReconnectsToNewServer(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	ctl, conns, _ := controlRunner(t, srv)
	ctx := context.Background()
	pid := func() string {
		t.Helper()
		outs, err := ctl.Run(ctx, srv.Socket, tmux.Command{"display-message", "-p", tmux.Format("pid")})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := tmux.ParseRows(outs[0], []string{"pid"})
		if err != nil || len(rows) != 1 {
			t.Fatalf("%q %v", outs[0], err)
		}
		return rows[0]["pid"]
	}
	first := pid()
	id1, ok := ctl.Identity(srv.Socket)
	if !ok || id1.PID != first || id1.StartTime == "" {
		t.Fatalf("identity %+v %v, pid %s", id1, ok, first)
	}
	srv.MustRun("kill-server")
	// The old server may still be exiting: retry until the new one starts.
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		_, err := srv.Run("new-session", "-d", "-s", "other", "-x", "80", "-y", "24")
		return err == nil
	})
	second := pid()
	if second == first {
		t.Fatalf("still talking to the old server (pid %s)", first)
	}
	id2, _ := ctl.Identity(srv.Socket)
	if id2.PID != second {
		t.Errorf("identity %+v, want pid %s", id2, second)
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
	if got := srv.MustRun("list-sessions", "-F", "#{session_name}"); got != "other" {
		t.Errorf("sessions %q", got)
	}
}

func TestControlRunnerConcurrent(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	ctl, conns, spawns := controlRunner(t, srv)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				a, b := fmt.Sprintf("g%d-i%d", g, i), fmt.Sprintf("line\n%d;", i)
				cmds := []tmux.Command{{"display-message", "-p", a}, {"display-message", "-p", b}}
				fail := i%5 == 0
				if fail {
					cmds = append(cmds, tmux.Command{"list-panes", "-t", "%999"}, tmux.Command{"display-message", "-p", "never"})
				}
				outs, err := ctl.Run(ctx, srv.Socket, cmds...)
				if fail != (err != nil) || len(outs) != 2 || string(outs[0]) != a+"\n" || string(outs[1]) != b+"\n" {
					errs <- fmt.Errorf("g%d i%d: %q, %v", g, i, outs, err)
				}
				if fail && !errors.Is(err, tmux.ErrNotFound) {
					errs <- fmt.Errorf("g%d i%d: %v is not ErrNotFound", g, i, err)
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if conns.Load() != 1 || spawns.Load() != 1 {
		t.Errorf("connections %d, exec spawns %d; want 1 and 1 (the list-sessions)", conns.Load(), spawns.Load())
	}
}

func TestControlRunnerDeadlinesAndClose(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	ctl, conns, spawns := controlRunner(t, srv)
	cmd := tmux.Command{"display-message", "-p", "x"}
	if _, err := ctl.Run(context.Background(), srv.Socket, cmd); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ctl.Run(ctx, srv.Socket, cmd); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	ctx, cancel = context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	if _, err := ctl.Run(ctx, srv.Socket, cmd); !errors.Is(err, tmux.ErrTimeout) {
		t.Errorf("past deadline: %v", err)
	}
	// A later call still works on the same connection.
	if outs, err := ctl.Run(context.Background(), srv.Socket, cmd); err != nil || string(outs[0]) != "x\n" {
		t.Errorf("after cancellations: %q, %v", outs, err)
	}
	if conns.Load() != 1 {
		t.Errorf("%d connections", conns.Load())
	}
	ctl.Close()
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		return srv.MustRun("list-clients", "-F", "#{client_control_mode}") == ""
	})
	before := spawns.Load()
	if outs, err := ctl.Run(context.Background(), srv.Socket, cmd); err != nil || string(outs[0]) != "x\n" {
		t.Errorf("after Close: %q, %v", outs, err)
	}
	if spawns.Load() != before+1 || conns.Load() != 1 {
		t.Errorf("after Close the call must go to exec: spawns %d->%d, connections %d", before, spawns.Load(), conns.Load())
	}
}

// FuzzControlQuoteRoundTrip sets a user option through the control
// connection and reads it back through exec: the value must come back as
// when set through exec. The seed corpus runs in every go test; longer
// fuzzing is manual (go test -fuzz FuzzControlQuoteRoundTrip ./internal/tmux).
func FuzzControlQuoteRoundTrip(f *testing.F) {
	for _, s := range []string{"", "plain", "a b", ";", "a;", `\;`, "x ; kill-server", `"`, `'`, `\`, `\\n`, "$HOME", "${HOME}", "~", "~/x", "#", "# c", "#{pane_id}", "{", "}", "%if 1", "line1\nline2", "\n", "\r\t\x01\x1b[31m\x7f", "h\u00e9llo \u2192", "\xff\xfe", "-x", "--", "\u00a0\u2028"} {
		f.Add(s)
	}
	srv := tmuxtest.New(f)
	exe := srv.Runner()
	ctl, _, _ := controlRunner(f, srv)
	ctx := context.Background()
	get := func(t *testing.T) string {
		outs, err := exe.Run(ctx, srv.Socket, tmux.Command{"show-options", "-gv", "@v"})
		if err != nil {
			t.Fatal(err)
		}
		return string(outs[0])
	}
	f.Fuzz(func(t *testing.T, v string) {
		if strings.IndexByte(v, 0) >= 0 || len(v) > 2000 {
			return
		}
		set := tmux.Command{"set-option", "-g", "--", "@v", v}
		if _, err := exe.Run(ctx, srv.Socket, set); err != nil {
			t.Fatalf("exec set %q: %v", v, err)
		}
		want := get(t)
		if _, err := exe.Run(ctx, srv.Socket, tmux.Command{"set-option", "-gu", "@v"}); err != nil {
			t.Fatal(err)
		}
		if _, err := ctl.Run(ctx, srv.Socket, set); err != nil {
			t.Fatalf("control set %q: %v", v, err)
		}
		if got := get(t); got != want {
			t.Fatalf("value %q: control set gives %q, exec set gives %q", v, got, want)
		}
	})
}

// BenchmarkDisplayMessage compares one round trip per transport; run with
// go test -run XXX -bench DisplayMessage ./internal/tmux. The format is one
// of our row formats (tmux.Format): a bare "#{pane_id}" is a format the
// control runner keeps off the shared connection (overControl), so it
// would measure exec twice.
func BenchmarkDisplayMessage(b *testing.B) {
	srv := tmuxtest.New(b)
	ctl, conns, spawns := controlRunner(b, srv)
	cmd := tmux.Command{"display-message", "-p", "-t", "main:0.0", tmux.Format("pane_id")}
	for _, bc := range []struct {
		name string
		r    tmux.Runner
	}{{"exec", srv.Runner()}, {"control", ctl}} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			if _, err := bc.r.Run(ctx, srv.Socket, cmd); err != nil {
				b.Fatal(err)
			}
			conns0, spawns0 := conns.Load(), spawns.Load()
			for b.Loop() {
				if _, err := bc.r.Run(ctx, srv.Socket, cmd); err != nil {
					b.Fatal(err)
				}
			}
			if bc.r == tmux.Runner(ctl) && (conns.Load() != conns0 || spawns.Load() != spawns0) {
				b.Errorf("the control runner connected %d times and spawned %d processes; want neither", conns.Load()-conns0, spawns.Load()-spawns0)
			}
		})
	}
}

// Calls over a live connection do not look at the socket file: a server
// that exits ends the connection by itself. A server started beside a live
// one (the old socket file moved away) is noticed when a call fails, and
// the calls after that one reach the new server.
func TestControlRunnerLooksAtTheSocketOnConnectAndOnError(t *testing.T) {
	srv := tmuxtest.New(t)
	ctl, conns, _ := controlRunner(t, srv)
	var stats atomic.Int32
	tmux.SetStat(ctl, func(p string) (os.FileInfo, error) { stats.Add(1); return os.Stat(p) })
	ctx := context.Background()
	pid := func() string {
		t.Helper()
		outs, err := ctl.Run(ctx, srv.Socket, tmux.Command{"display-message", "-p", tmux.Format("pid")})
		if err != nil {
			t.Fatal(err)
		}
		return strings.Trim(string(outs[0]), "\x1e\n")
	}
	first := pid()
	atConnect := stats.Load()
	for i := 0; i < 20; i++ {
		pid()
	}
	if n := stats.Load() - atConnect; n != 0 {
		t.Errorf("20 calls over a live connection looked at the socket %d times", n)
	}

	// Another server takes the socket path while the first one runs.
	old := srv.SocketPath() + ".old"
	if err := os.Rename(srv.SocketPath(), old); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd := exec.Command(srv.Bin, "-S", old, "kill-server")
		cmd.Env = tmuxtest.CleanEnv()
		_ = cmd.Run()
		_ = os.Remove(old)
	})
	srv.MustRun("new-session", "-d", "-s", "second", "-x", "80", "-y", "24")
	_, err := ctl.Run(ctx, srv.Socket, tmux.Command{"has-session", "-t", "=second"})
	var ce *tmux.CommandError
	if err != nil && !errors.As(err, &ce) {
		t.Fatalf("has-session: %v", err)
	}
	if second := pid(); second == first {
		t.Errorf("after a failed call, still talking to the old server (pid %s)", first)
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

// A call whose last command is a display-message of a row format carries
// its end marker in that command's own reply: tmux runs one command for a
// get_pane_info, not two (tmux numbers commands server-wide, so the count
// between two probes shows it).
func TestControlRunnerFoldsTheEndMarker(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	ctl, _, _ := controlRunner(t, srv)
	ctx := context.Background()
	cmd := tmux.Command{"display-message", "-p", "-t", "%0", tmux.Format("pane_id")}
	if _, err := ctl.Run(ctx, srv.Socket, cmd); err != nil {
		t.Fatal(err)
	}
	before := commandNumber(t, srv)
	const calls = 20
	for range calls {
		outs, err := ctl.Run(ctx, srv.Socket, cmd)
		if err != nil || string(outs[0]) != "\x1e%0\n" {
			t.Fatalf("%q %v", outs, err)
		}
	}
	// Between the probes: the calls, and the second probe's attach
	// and whatever else the probes cost tmux (a few commands).
	if d := commandNumber(t, srv) - before; d > calls*3/2 {
		t.Errorf("tmux ran %d commands for %d calls, want about one each", d, calls)
	}
}

// commandNumber is the number tmux gives a command of a new control client
// of the test's own.
func commandNumber(t *testing.T, srv *tmuxtest.Server) int {
	t.Helper()
	args := append(append([]string{}, srv.Socket.Args()...), "-C", "attach-session", "-f", "no-output", "-t", "main")
	cmd := exec.Command(srv.Bin, args...)
	cmd.Env = tmuxtest.CleanEnv()
	cmd.Stdin = strings.NewReader("display-message -p x\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	n := -1
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) == 4 && f[0] == "%begin" && f[3] == "1" {
			fmt.Sscan(f[2], &n)
		}
	}
	if n < 0 {
		t.Fatalf("no %%begin in %q", out)
	}
	return n
}

// TestBlockedQueueGoesToExec: a user's hook whose run-shell blocks (here
// after-send-keys running "sleep 4") holds the control client's command
// queue, so every later call on the connection would wait behind it. The
// call that fired it waits, as it would from a shell; a call made while the
// queue is blocked goes to exec and answers at once; once the hook ended,
// calls use the connection again.
func TestBlockedQueueGoesToExec(t *testing.T) {
	srv := tmuxtest.New(t)
	r, conns, spawns := controlRunner(t, srv)
	ctx := context.Background()
	paneID := []tmux.Command{{"display-message", "-p", "-t", "main", tmux.Format("pane_id")}}
	if _, err := r.Run(ctx, srv.Socket, paneID...); err != nil {
		t.Fatal(err)
	}
	srv.MustRun("set-hook", "-g", "after-send-keys", "run-shell 'sleep 4'")

	fired := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := r.Run(ctx, srv.Socket, tmux.Command{"send-keys", "-t", "main", "-l", "x"})
		fired <- err
	}()
	// Notifications keep coming while the queue is held (another client
	// renames the window every 100 ms): they are not replies and must not
	// hide the stall.
	noise := make(chan struct{})
	noiseDone := make(chan struct{})
	go func() {
		defer close(noiseDone)
		for i := 0; ; i++ {
			select {
			case <-noise:
				return
			case <-time.After(100 * time.Millisecond):
				_, _ = srv.Run("rename-window", "-t", "main", fmt.Sprintf("w%d", i))
			}
		}
	}()
	stopNoise := sync.OnceFunc(func() { close(noise); <-noiseDone })
	defer stopNoise()
	time.Sleep(1200 * time.Millisecond) // past stallAfter
	before := spawns.Load()
	callStart := time.Now()
	outs, err := r.Run(ctx, srv.Socket, paneID...)
	took := time.Since(callStart)
	if err != nil || !strings.Contains(string(outs[0]), "%") {
		t.Fatalf("a call while the queue is blocked: %q %v", outs, err)
	}
	stopNoise()
	if took > time.Second {
		t.Errorf("a call while the queue is blocked took %v (waited behind the hook)", took)
	}
	if spawns.Load() == before {
		t.Error("the call did not go to exec")
	}
	if err := <-fired; err != nil {
		t.Fatalf("the call that fired the hook: %v", err)
	}
	if d := time.Since(start); d < 3500*time.Millisecond {
		t.Errorf("the call that fired the hook returned after %v, before its hook ended", d)
	}
	before = spawns.Load()
	if _, err := r.Run(ctx, srv.Socket, paneID...); err != nil {
		t.Fatal(err)
	}
	if spawns.Load() != before || conns.Load() != 1 {
		t.Errorf("after the hook: %d spawns, %d connections; want the same connection again", spawns.Load()-before, conns.Load())
	}
}
