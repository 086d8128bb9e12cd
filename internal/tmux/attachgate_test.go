package tmux_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// TestControlStartsSurviveDetaches starts and detaches control clients
// (watchers) on many sessions of one server at once, as an HTTP server
// under load does. tmux up to 3.6 crashes (SIGSEGV in control_write) when
// a notification sent to every control client, such as the
// %client-detached of another control client going away, meets a control
// client that has sent its identify flags but not yet finished
// identifying (tmux PR 4980, fixed in 3.7). The server must still run at
// the end, and no attach may have failed.
func TestControlStartsSurviveDetaches(t *testing.T) {
	const sessions = 8
	srv := tmuxtest.New(t)
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = srv.MustRun("new-session", "-d", "-s", fmt.Sprintf("s%d", i), "-x", "80", "-y", "24", "-P", "-F", "#{session_id}")
	}
	ws := &tmux.Watchers{Bin: srv.Bin, Env: tmuxtest.CleanEnv()}
	defer ws.CloseAll()
	var (
		mu    sync.Mutex
		errs  []error
		n     int
		wg    sync.WaitGroup
		until = time.Now().Add(2 * time.Second)
	)
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5 && time.Now().Before(until); i++ {
				w, err := ws.Get(srv.Socket, id)
				mu.Lock()
				n++
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
				if err != nil {
					if errors.Is(err, tmux.ErrNoServer) {
						return
					}
					continue
				}
				w.Close()
			}
		}()
	}
	wg.Wait()
	if _, err := srv.Run("list-sessions"); err != nil {
		t.Fatalf("the tmux server died under %d control client starts and detaches: %v (first attach errors: %v)", n, err, errs[:min(len(errs), 3)])
	}
	for _, err := range errs {
		// A loaded machine may let an attach time out; none may say
		// that the server is gone while it runs.
		if !errors.Is(err, tmux.ErrTimeout) {
			t.Errorf("attach failed: %v", err)
		}
	}
	t.Logf("%d control clients started and detached, %d attaches timed out", n, len(errs))
}
