package server

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// Our own control clients (the engine's connection, the watchers) are not
// counted in session_attached; a real client is.
func TestSessionAttachedLeavesOutOwnClients(t *testing.T) {
	e := shellEnv(t)
	// Attach a watcher too (a wait on the session's pane).
	e.ok("wait_for_text", map[string]any{"pane_id": "%0", "timeout": 0.2}, nil)
	var sessions []SessionInfo
	e.list("list_sessions", map[string]any{}, &sessions)
	if len(sessions) != 1 || *sessions[0].SessionAttached != "0" {
		t.Fatalf("with only our clients attached: %+v (tmux says %s)", sessions, e.tmux.MustRun("display-message", "-p", "-t", "main", "#{session_attached}"))
	}
	// A user's control-mode client (iTerm2 uses these) does count.
	user := exec.Command(e.tmux.Bin, "-L", e.tmux.Socket.Name, "-C", "attach-session", "-t", "main")
	user.Env = tmuxtest.CleanEnv()
	stdin, _ := user.StdinPipe()
	if err := user.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stdin.Close(); _ = user.Wait() }()
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		out, _ := e.tmux.Run("list-clients", "-F", "#{client_pid}")
		return strings.Contains("\n"+out+"\n", "\n"+strconv.Itoa(user.Process.Pid)+"\n")
	})
	var s SessionInfo
	e.ok("get_session_info", map[string]any{"session_name": "main"}, &s)
	if *s.SessionAttached != "1" {
		t.Errorf("with a user's client: session_attached %s", *s.SessionAttached)
	}
}

// Concurrent waits on many panes of a session share one watcher.
func TestConcurrentWaitsShareOneWatcher(t *testing.T) {
	e := shellEnv(t)
	for i := 0; i < 4; i++ {
		e.tmux.MustRun("split-window", "-d", "-t", "%0", "sh")
		e.tmux.MustRun("select-layout", "-t", "@0", "tiled")
	}
	var wg sync.WaitGroup
	for i := 0; i < 5; i++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			e.call("wait_for_text", map[string]any{"pane_id": "%" + string(rune('0'+p)), "patterns": []string{"never"}, "timeout": 1})
		}(i)
	}
	tmuxtest.WaitFor(t, 5*time.Second, func() bool { return e.watchers().Subscriptions() >= 5 })
	if n := e.watchers().Count(); n != 1 {
		t.Errorf("%d watchers for five waits in one session", n)
	}
	wg.Wait()
}

// A run handle does not survive a tmux server restart onto a new pane that
// happens to have the same id.
func TestRunDoesNotFollowRestartedServer(t *testing.T) {
	e := shellEnv(t)
	var r RunCommandResult
	e.ok("run_command", map[string]any{"pane_id": "%0", "command": "sleep 30", "timeout": 0.3}, &r)
	if r.RunID == nil {
		t.Fatalf("%+v", r)
	}
	e.tmux.Kill()
	e.tmux.MustRun("new-session", "-d", "-s", "main", "sh")
	msg, _ := e.fail("wait_for_run", map[string]any{"run_id": *r.RunID, "timeout": 3})
	if !strings.Contains(msg, "restarted") && !strings.Contains(msg, "went away") {
		t.Errorf("%q", msg)
	}
}

// The first session query of a process (and the first after a tmux server
// restart) must not count the control client that query itself attaches:
// the own-client set is known before the answer is built.
func TestSessionAttachedFirstQueryLeavesOutOwnClient(t *testing.T) {
	e := newEnv(t)
	check := func(when, tool string, args map[string]any) {
		t.Helper()
		var got []SessionInfo
		if tool == "list_sessions" {
			e.list(tool, args, &got)
		} else {
			var s SessionInfo
			e.ok(tool, args, &s)
			got = []SessionInfo{s}
		}
		if len(got) != 1 || got[0].SessionAttached == nil {
			t.Fatalf("%s, %s: %+v", when, tool, got)
		}
		if *got[0].SessionAttached != "0" {
			t.Errorf("%s, %s: session_attached %q, want \"0\" (tmux says %s)", when, tool, *got[0].SessionAttached,
				e.tmux.MustRun("display-message", "-p", "-t", "main", "#{session_attached}"))
		}
	}
	check("first call of the process", "list_sessions", map[string]any{})
	check("second call", "list_sessions", map[string]any{})

	e.tmux.Kill()
	e.tmux.MustRun("new-session", "-d", "-s", "main", "sh")
	check("first call after a tmux restart", "list_sessions", map[string]any{})

	e.tmux.Kill()
	e.tmux.MustRun("new-session", "-d", "-s", "main", "sh")
	check("first call after another restart", "get_session_info", map[string]any{"session_name": "main"})
}

// hangingTmux writes a fake tmux that records each invocation in the
// returned file and then hangs.
func hangingTmux(t *testing.T) (bin, calls string) {
	t.Helper()
	dir := t.TempDir()
	calls = filepath.Join(dir, "calls")
	bin = filepath.Join(dir, "tmux")
	script := "#!/bin/sh\necho \"$*\" >> '" + calls + "'\nexec sleep 1000\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, calls
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// A hanging tmux binary costs a read-only call its timeout once: the call
// fails with a timeout error naming the wait, and is not tried again.
func TestHangingTmuxTimesOutOnceWithoutRetry(t *testing.T) {
	const timeout = 300 * time.Millisecond
	for _, engine := range []string{"exec", "control"} {
		t.Run(engine, func(t *testing.T) {
			bin, calls := hangingTmux(t)
			var r tmux.Runner = &tmux.ExecRunner{Bin: bin, Env: tmuxtest.CleanEnv(), Timeout: timeout}
			if engine == "control" {
				cr := &tmux.ControlRunner{Bin: bin, Env: tmuxtest.CleanEnv(), Timeout: timeout}
				t.Cleanup(func() { _ = cr.Close() })
				r = cr
			}
			cfg := configT{SocketName: "tmux-mcp-hang-" + engine, TmuxBin: bin, Safety: config.Destructive, WaitMax: config.DefaultWaitMax}
			e := newEnvWith(t, nil, cfg, r)
			start := time.Now()
			msg, meta := e.fail("list_sessions", map[string]any{})
			took := time.Since(start)
			t.Logf("%s: %q after %s", engine, msg, took)
			if !strings.Contains(msg, "timed out after") || meta["error_type"] != "TmuxTimeout" {
				t.Errorf("error %q (%v)", msg, meta["error_type"])
			}
			if n := countLines(t, calls); n != 1 {
				t.Errorf("tmux was started %d times for one call; a timed-out read must not be retried", n)
			}
			if took > 3*timeout+time.Second {
				t.Errorf("the call took %s with a %s timeout", took, timeout)
			}
		})
	}
}
