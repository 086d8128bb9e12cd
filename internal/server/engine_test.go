package server

import (
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

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
	tmuxtest.WaitFor(t, 5*time.Second, func() bool { return e.srv.watch.Subscriptions() >= 5 })
	if n := e.srv.watch.Count(); n != 1 {
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
