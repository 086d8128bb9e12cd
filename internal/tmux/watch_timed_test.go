package tmux_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// nextChunks waits for the subscription's chunks until one satisfies
// until, and returns all of them.
func nextChunks(t *testing.T, s *tmux.Subscription, timeout time.Duration, until func(tmux.Chunk) bool) []tmux.Chunk {
	t.Helper()
	var got []tmux.Chunk
	deadline := time.After(timeout)
	for {
		select {
		case <-s.Notify():
			for _, c := range s.TakeChunks() {
				got = append(got, c)
				if until(c) {
					return got
				}
			}
		case <-deadline:
			t.Fatalf("no such chunk in %v; got %+v", timeout, got)
		}
	}
}

func outputHas(sub string) func(tmux.Chunk) bool {
	return func(c tmux.Chunk) bool { return c.Kind == tmux.ChunkOutput && strings.Contains(string(c.Data), sub) }
}

func isChanged(c tmux.Chunk) bool { return c.Kind == tmux.ChunkChanged }

// A timed subscription keeps each output event apart with the time it
// arrived (a pause in the program is the gap between two chunks), starts
// exactly after its entry commands, and reports a resize of the pane's
// window and the death of a pane kept by remain-on-exit as changes, in
// order with the output.
func TestWatcherTimedSubscription(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.MustRun("set-option", "-g", "remain-on-exit", "on")
	srv.MustRun("respawn-pane", "-k", "-t", "%0", "sh")
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
		return strings.Count(out, "before") >= 2
	})
	sub, outs, err := w.SubscribeTimedAndRun(context.Background(), "%0", "@0", tmux.Command{"capture-pane", "-p", "-t", "%0"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if !strings.Contains(string(outs[0]), "before") {
		t.Errorf("entry capture lacks earlier output: %q", outs[0])
	}
	// The pane-state subscription reports the pane's first state soon
	// after it is made; what counts is what follows.
	srv.MustRun("send-keys", "-t", "%0", "-l", "printf 'one\\n'; sleep 0.5; printf 'two\\n'")
	srv.MustRun("send-keys", "-t", "%0", "Enter")
	chunks := nextChunks(t, sub, 10*time.Second, outputHas("two\r\n"))
	var one, two *tmux.Chunk
	for i, c := range chunks {
		if strings.Contains(string(c.Data), "before") {
			t.Errorf("output from before the subscription: %q", c.Data)
		}
		if i > 0 && c.At.Before(chunks[i-1].At) {
			t.Errorf("chunk %d arrived before chunk %d", i, i-1)
		}
		d := string(c.Data)
		if c.Kind != tmux.ChunkOutput || strings.Contains(d, "printf") {
			continue // the echo of the typed line
		}
		if strings.Contains(d, "one\r\n") {
			one = &chunks[i]
		}
		if strings.Contains(d, "two\r\n") {
			two = &chunks[i]
		}
	}
	if one == nil || two == nil {
		t.Fatalf("output chunks %+v", chunks)
	}
	if gap := two.At.Sub(one.At); gap < 450*time.Millisecond || gap > 700*time.Millisecond {
		t.Errorf("the 0.5 s pause is %v between the chunks", gap)
	}
	if sub.Take() != nil {
		t.Error("a timed subscription also buffered bytes for Take")
	}

	srv.MustRun("resize-window", "-t", "@0", "-x", "70")
	nextChunks(t, sub, 5*time.Second, isChanged)
	if got := srv.MustRun("display-message", "-p", "-t", "%0", "#{pane_width}"); got != "70" {
		t.Fatalf("pane width %s after the resize", got)
	}

	// The program ends; remain-on-exit keeps the pane: no output, no
	// layout change, only the pane-state subscription tells.
	for _, c := range sub.TakeChunks() {
		t.Logf("left over: %+v", c)
	}
	srv.MustRun("send-keys", "-t", "%0", "-l", "exit")
	srv.MustRun("send-keys", "-t", "%0", "Enter")
	nextChunks(t, sub, 5*time.Second, func(c tmux.Chunk) bool {
		if !isChanged(c) {
			return false
		}
		dead, _ := srv.Run("display-message", "-p", "-t", "%0", "#{pane_dead}")
		return dead == "1"
	})
}
