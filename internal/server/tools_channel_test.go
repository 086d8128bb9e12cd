package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestWaitForChannel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// A signal sent before the wait is latched by tmux.
	var out string
	e.ok("signal_channel", map[string]any{"channel": "ready.1"}, &out)
	if out != "Channel 'ready.1' signalled" {
		t.Errorf("signal: %q", out)
	}
	e.ok("wait_for_channel", map[string]any{"channel": "ready.1", "timeout": 5}, &out)
	if out != "Channel 'ready.1' was signalled (timeout 5.0s)" {
		t.Errorf("wait: %q", out)
	}
	// A signal that arrives while waiting.
	go func() {
		time.Sleep(200 * time.Millisecond)
		e.tmux.MustRun("wait-for", "-S", "later")
	}()
	e.ok("wait_for_channel", map[string]any{"channel": "later", "timeout": 10}, &out)

	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"timeout", map[string]any{"channel": "never", "timeout": 0.3}, "was not signalled within 0.3s"},
		{"zero timeout", map[string]any{"channel": "x", "timeout": 0}, "timeout must be greater than 0"},
		{"negative timeout", map[string]any{"channel": "x", "timeout": -1}, "timeout must be greater than 0"},
		{"bad name", map[string]any{"channel": "a b;c"}, "channel must match"},
		{"empty name", map[string]any{"channel": ""}, "channel must match"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg, _ := e.fail("wait_for_channel", c.args)
			if !strings.Contains(msg, c.want) {
				t.Errorf("%q lacks %q", msg, c.want)
			}
		})
	}
}

func TestWaitForChannelClampsToCeiling(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *configT) { c.WaitMax = 1 }))
	start := time.Now()
	msg, _ := e.fail("wait_for_channel", map[string]any{"channel": "never", "timeout": 600})
	if el := time.Since(start); el > 3*time.Second || !strings.Contains(msg, "within 1.0s") {
		t.Errorf("took %v: %q", el, msg)
	}
}

// The tmux server dying during a wait is an error, not a signal.
func TestWaitForChannelServerDies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	go func() {
		time.Sleep(300 * time.Millisecond)
		e.tmux.Kill()
	}()
	msg, _ := e.fail("wait_for_channel", map[string]any{"channel": "c", "timeout": 10})
	if !strings.Contains(msg, "server") {
		t.Errorf("dead server: %q", msg)
	}
}

// Cancelling the request ends the wait at once and leaves no tmux child.
func TestWaitForChannelCancel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait_for_channel", Arguments: map[string]any{"channel": "cancelme", "timeout": 20}})
		done <- err
	}()
	tmuxWaitFor := func() int { return countProcs(e.tmux.Socket.Name, "cancelme") }
	deadline := time.Now().Add(5 * time.Second)
	for tmuxWaitFor() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if tmuxWaitFor() == 0 {
		t.Fatal("the wait-for child never started")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Fatal("cancel did not end the call")
	}
	deadline = time.Now().Add(3 * time.Second)
	for tmuxWaitFor() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := tmuxWaitFor(); n > 0 {
		t.Errorf("%d tmux wait-for children left behind", n)
	}
}

// countProcs counts processes whose command line holds every needle.
func countProcs(needles ...string) int {
	n := 0
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		cmd := string(b)
		all := true
		for _, s := range needles {
			if !strings.Contains(cmd, s) {
				all = false
			}
		}
		if all {
			n++
		}
	}
	return n
}

func TestWaitForChannelProgress(t *testing.T) {
	old := progressInterval
	progressInterval = 100 * time.Millisecond
	defer func() { progressInterval = old }()
	e := newEnv(t)
	var mu sync.Mutex
	var msgs []string
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, _ := e.srv.MCP().Connect(ctx, st, nil)
	defer ss.Close()
	cs, _ := mcp.NewClient(&mcp.Implementation{Name: "p", Version: "0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			msgs = append(msgs, r.Params.Message)
			mu.Unlock()
		}}).Connect(ctx, ct, nil)
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "wait_for_channel", Arguments: map[string]any{"channel": "p", "timeout": 0.55}}
	params.SetProgressToken("tok")
	_, _ = cs.CallTool(ctx, params)
	mu.Lock()
	defer mu.Unlock()
	if len(msgs) < 3 || !strings.Contains(msgs[0], "Waiting on channel 'p'") {
		t.Errorf("progress: %q", msgs)
	}
}

// TestPyFloat: timeouts in channel messages read as the reference's
// f-strings print them ("2.0s", not "2s").
func TestPyFloat(t *testing.T) {
	for f, want := range map[float64]string{2: "2.0", 0.5: "0.5", 30: "30.0", 0.3: "0.3", 123456789: "123456789.0", 0: "0.0", 1.25: "1.25"} {
		if got := pyFloat(f); got != want {
			t.Errorf("pyFloat(%v) = %q, want %q", f, got, want)
		}
	}
}
