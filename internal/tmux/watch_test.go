package tmux_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

func waitOutput(t *testing.T, s *tmux.Subscription, want string, timeout time.Duration) string {
	t.Helper()
	var got []byte
	deadline := time.After(timeout)
	for !bytes.Contains(got, []byte(want)) {
		select {
		case <-s.Notify():
			got = append(got, s.Take()...)
		case <-deadline:
			t.Fatalf("output %q never arrived; got %q", want, got)
		}
	}
	return string(got)
}

func TestWatcherStreamsPaneOutput(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.MustRun("respawn-pane", "-k", "-t", "%0", "sh")
	lsBefore := srv.MustRun("list-sessions", "-F", "#{session_id} #{session_name}")
	ws := &tmux.Watchers{Bin: srv.Bin, Env: tmuxtest.CleanEnv()}
	defer ws.CloseAll()
	w, err := ws.Get(srv.Socket, "$0")
	if err != nil {
		t.Fatal(err)
	}
	srv.MustRun("send-keys", "-t", "%0", "-l", "echo before")
	srv.MustRun("send-keys", "-t", "%0", "Enter")
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		out, _ := srv.Run("capture-pane", "-p", "-t", "%0")
		return strings.Count(out, "before") >= 2 // the command line and its output
	})
	sub, outs, err := w.SubscribeAndRun(context.Background(), "%0", "@0", tmux.Command{"capture-pane", "-p", "-t", "%0"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if !strings.Contains(string(outs[0]), "before") {
		t.Errorf("entry capture lacks earlier output: %q", outs[0])
	}
	srv.MustRun("send-keys", "-t", "%0", "-l", "echo after-$((6*7))")
	srv.MustRun("send-keys", "-t", "%0", "Enter")
	got := waitOutput(t, sub, "after-42", 5*time.Second)
	if strings.Contains(got, "before") {
		t.Errorf("output from before the subscription leaked in: %q", got)
	}
	// Our control client adds no session and resizes nothing.
	if ls := srv.MustRun("list-sessions", "-F", "#{session_id} #{session_name}"); ls != lsBefore {
		t.Errorf("sessions changed: %q -> %q", lsBefore, ls)
	}
	if size := srv.MustRun("display-message", "-p", "-t", "@0", "#{window_width}x#{window_height}"); size != "80x24" {
		t.Errorf("window resized to %s", size)
	}
	// Commands on the watcher connection work and are ordered.
	outs, err = w.Command(context.Background(), tmux.Command{"display-message", "-p", "#{session_id}"})
	if err != nil || strings.TrimSpace(string(outs[0])) != "$0" {
		t.Errorf("command: %q %v", outs, err)
	}
	_, err = w.Command(context.Background(), tmux.Command{"list-panes", "-t", "%99"})
	if err == nil {
		t.Error("failing command did not fail")
	}
}

// The watcher never keeps the server alive: killing the user's last
// session still ends the server, and the watcher notices.
func TestWatcherDoesNotKeepServerAlive(t *testing.T) {
	srv := tmuxtest.New(t)
	ws := &tmux.Watchers{Bin: srv.Bin, Env: tmuxtest.CleanEnv()}
	defer ws.CloseAll()
	w, err := ws.Get(srv.Socket, "$0")
	if err != nil {
		t.Fatal(err)
	}
	sub := w.Subscribe("%0", "@0")
	defer sub.Close()
	srv.MustRun("kill-session", "-t", "main")
	select {
	case <-w.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("watcher did not end when the session went away")
	}
	if !sub.Moved() {
		t.Error("subscription not told the stream ended")
	}
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		_, err := srv.Run("list-sessions")
		return err != nil
	})
	if ws.Count() != 0 {
		t.Errorf("%d watchers still registered", ws.Count())
	}
}

// A flood pauses the stream instead of stalling the program; the
// subscription reports the loss and the stream resumes.
func TestWatcherFloodDoesNotStall(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.MustRun("respawn-pane", "-k", "-t", "%0", "sh")
	ws := &tmux.Watchers{Bin: srv.Bin, Env: tmuxtest.CleanEnv()}
	defer ws.CloseAll()
	w, err := ws.Get(srv.Socket, "$0")
	if err != nil {
		t.Fatal(err)
	}
	sub := w.Subscribe("%0", "@0")
	defer sub.Close()
	srv.MustRun("send-keys", "-t", "%0", "-l", "seq 1 200000; echo flood-$((2*21))")
	srv.MustRun("send-keys", "-t", "%0", "Enter")
	waitOutput(t, sub, "flood-42", 20*time.Second)
}

// Pane text that forges reply guards cannot shift a watcher's replies: the
// capture either comes back exact or the call reports ErrOutOfStep.
func TestWatcherForgedGuard(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.MustRun("set-option", "-g", "history-limit", "10000")
	now := time.Now().Unix()
	srv.MustRun("respawn-pane", "-k", "-t", "%0", fmt.Sprintf(
		`awk 'BEGIN { for (s = %d; s <= %d; s++) for (n = 0; n < 1500; n++) printf "%%%%end %%d %%d 1\n", s, n; print "done" }'; exec cat`, now-1, now+3))
	capture := tmux.Command{"capture-pane", "-p", "-S", "-", "-E", "-", "-t", "%0"}
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		out, _ := srv.Run(capture...)
		return strings.Contains(out, "\ndone")
	})
	exeOuts, err := srv.Runner().Run(context.Background(), srv.Socket, capture)
	if err != nil {
		t.Fatal(err)
	}
	ws := &tmux.Watchers{Bin: srv.Bin, Env: tmuxtest.CleanEnv()}
	defer ws.CloseAll()
	w, err := ws.Get(srv.Socket, "$0")
	if err != nil {
		t.Fatal(err)
	}
	outs, err := w.Command(context.Background(), capture, tmux.Command{"display-message", "-p", "after"})
	switch {
	case errors.Is(err, tmux.ErrOutOfStep):
		t.Log("forgery detected: ErrOutOfStep")
	case err != nil:
		t.Fatal(err)
	default:
		if string(outs[0]) != string(exeOuts[0]) || string(outs[1]) != "after\n" {
			t.Fatal("forged capture shifted the replies")
		}
	}
}

// A structure subscriber hears about panes that appear or close in a
// session the watcher is not attached to: tmux sends no event for those,
// so the watcher's format subscription has to catch them.
func TestWatcherStructureCoversOtherSessions(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	srv.MustRun("new-session", "-d", "-s", "other", "sh")
	ws := &tmux.Watchers{Bin: srv.Bin, Env: tmuxtest.CleanEnv()}
	defer ws.CloseAll()
	w, err := ws.Get(srv.Socket, "$0")
	if err != nil {
		t.Fatal(err)
	}
	sub := w.Subscribe(tmux.StructurePane, "")
	defer sub.Close()
	// tmux reports the subscription's first value about a second in;
	// that wake says nothing yet, so wait until it has passed.
	select {
	case <-sub.Notify():
	case <-time.After(3 * time.Second):
		t.Fatal("no first value from the format subscription")
	}
	drain := func() {
		for {
			select {
			case <-sub.Notify():
			case <-time.After(1500 * time.Millisecond):
				return
			}
		}
	}
	drain()
	for _, step := range []struct {
		what string
		args []string
	}{
		{"a pane split off, without focus, in the other session", []string{"split-window", "-d", "-t", "other:", "sh"}},
		{"that pane killed", []string{"kill-pane", "-t", "other:0.1"}},
	} {
		srv.MustRun(step.args...)
		select {
		case <-sub.Notify():
		case <-time.After(4 * time.Second):
			t.Fatalf("%s: no structure wake", step.what)
		}
		drain()
	}
}

// Concurrent callers for one session share one attach, and the lock is not
// held while it runs: PIDs answers while the watchers attach.
func TestWatchersGetConcurrently(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	srv.MustRun("new-session", "-d", "-s", "other")
	ws := &tmux.Watchers{Bin: srv.Bin, Env: tmuxtest.CleanEnv()}
	defer ws.CloseAll()
	got := make(chan *tmux.Watcher, 16)
	for i := 0; i < 16; i++ {
		go func(i int) {
			session := []string{"$0", "$1"}[i%2]
			w, err := ws.Get(srv.Socket, session)
			if err != nil {
				t.Error(err)
			}
			got <- w
		}(i)
		_ = ws.PIDs()
	}
	seen := map[*tmux.Watcher]bool{}
	for i := 0; i < 16; i++ {
		seen[<-got] = true
	}
	if len(seen) != 2 || ws.Count() != 2 {
		t.Errorf("%d distinct watchers, %d attached; want one per session", len(seen), ws.Count())
	}
}

// A watcher for a session that does not exist fails with tmux's reason
// (not found), not as if the server were gone.
func TestWatcherMissingSession(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	ws := &tmux.Watchers{Bin: srv.Bin, Env: tmuxtest.CleanEnv()}
	defer ws.CloseAll()
	_, err := ws.Get(srv.Socket, "$99")
	if !errors.Is(err, tmux.ErrNotFound) || errors.Is(err, tmux.ErrNoServer) {
		t.Errorf("err = %v, want not found", err)
	}
}

// A watcher handed out by Get stays usable while its caller subscribes,
// even when its idle time runs out meanwhile: Get never returns one that is
// about to close, and the idle close spares one that was just handed out.
// Before, the idle close could detach it between Get and Subscribe, and the
// subscribe failed with "no tmux server running" though the server ran.
func TestWatcherIdleCloseSparesGet(t *testing.T) {
	srv := tmuxtest.New(t)
	const idle = 200 * time.Millisecond
	tmux.SetWatchIdle(t, idle)
	ws := &tmux.Watchers{Bin: srv.Bin, Env: tmuxtest.CleanEnv()}
	defer ws.CloseAll()
	const tries = 12
	fails := 0
	for i := 0; i < tries; i++ {
		w, err := ws.Get(srv.Socket, "$0")
		if err != nil {
			t.Fatal(err)
		}
		// Between Get and Subscribe the idle time that began when the
		// last subscription closed runs out (the sleep after Close
		// below plus this one exceed it), though this gap alone does not.
		time.Sleep(idle / 2)
		sub, _, err := w.SubscribeAndRun(context.Background(), "%0", "@0", tmux.Command{"display-message", "-p", "x"})
		if err != nil {
			fails++
			t.Logf("try %d: %v", i, err)
			continue
		}
		sub.Close()
		time.Sleep(idle * 7 / 10)
	}
	if fails > 0 {
		t.Errorf("%d of %d subscriptions failed on a watcher Get had just returned", fails, tries)
	}
}
