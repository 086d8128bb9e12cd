package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// Issue 21 item 8: a run pending in pane %0 of a tmux server holds no
// input of pane %0 of the server started after it on the same socket (a
// new server numbers its panes from %0 again), nor makes that pane busy.
func TestRunHoldIsPerServer(t *testing.T) {
	skipOverSSH(t, "restarts the test's tmux server")
	cases := []struct {
		name string
		// pending makes a run pending in %0 and returns it.
		pending func(t *testing.T, e *env) *runRecord
	}{
		// A real run: its wrapper is typed into a program named like a
		// shell that never reads it, so the start marker never comes.
		// The server's end ends the run's watcher, and the run with it.
		{"run", func(t *testing.T, e *env) *runRecord {
			fake := filepath.Join(t.TempDir(), "sh")
			if err := os.Symlink("/bin/sleep", fake); err != nil {
				t.Fatal(err)
			}
			e.tmux.MustRun("respawn-pane", "-k", "-t", "%0", fake, "600")
			tmuxtest.WaitFor(t, 5*time.Second, func() bool {
				out, _ := e.tmux.Run("display-message", "-p", "-t", "%0", "#{pane_current_command}")
				return out == "sh"
			})
			var res RunCommandResult
			e.ok("run_command", map[string]any{"pane_id": "%0", "command": "echo never", "timeout": 0.3, "suppress_history": false}, &res)
			if !res.TimedOut || res.RunID == nil {
				t.Fatalf("the run did not stay pending: %+v", res)
			}
			return e.srv.runs().get(LocalOwner, *res.RunID)
		}},
		// A run whose end has not been seen yet when input comes for the
		// new server's %0 (its pump is still busy, as under load): the
		// input must not wait for it, which it did for inputHoldMax.
		{"run not yet ended", func(t *testing.T, e *env) *runRecord {
			rec := &runRecord{id: "stale", owner: LocalOwner, pane: "%0", sock: tmux.Socket{Name: e.srv.cfg.SocketName},
				server: e.tmux.MustRun("display-message", "-p", "#{pid}/#{start_time}"), started: time.Now(),
				done: make(chan struct{}), begun: make(chan struct{})}
			reg := e.srv.runs()
			reg.mu.Lock()
			reg.busy[paneKey{e.host, rec.sock, "%0"}] = rec
			reg.runs[runKey{rec.owner, rec.id}] = rec
			reg.mu.Unlock()
			return rec
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			rec := tc.pending(t, e)
			// The server is killed and another starts on the same socket.
			e.tmux.Kill()
			e.tmux.MustRun("new-session", "-d", "-s", "main", "-x", "80", "-y", "24")
			e.tmux.MustRun("respawn-pane", "-k", "-t", "%0", "sh")
			typeAndWait(t, e, "%0", "echo fresh-$((2+2))", "fresh-4")

			start := time.Now()
			e.ok("send_keys", map[string]any{"pane_id": "%0", "keys": "echo typed-$((3+3))"}, nil)
			if el := time.Since(start); el > time.Second {
				t.Errorf("send_keys to the new server's %%0 took %v: held by the old server's run", el)
			}
			waitScreen(t, e, "typed-6")
			if !rec.ended() {
				t.Error("the old server's run did not end")
			}
			r := e.call("run_command", map[string]any{"pane_id": "%0", "command": "echo ran-$((4+4))", "timeout": 10})
			if r.IsError {
				t.Fatalf("run_command on the new server's %%0: %s", text(r))
			}
			var res RunCommandResult
			decodeStructured(t, r, &res)
			if res.ExitStatus == nil || !strings.Contains(strings.Join(res.Output, "\n"), "ran-8") {
				t.Fatalf("run on the new server: %+v", res)
			}
		})
	}
}
