package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// shellEnv is an env whose pane %0 runs a plain sh (fast, no rc files).
func shellEnv(t *testing.T, opts ...envOption) *env {
	t.Helper()
	e := newEnv(t, opts...)
	e.tmux.MustRun("respawn-pane", "-k", "-t", "%0", "sh")
	typeAndWait(t, e, "%0", "echo ready-$((1+1))", "ready-2")
	if sshMode() {
		// The first call to a host pays the ssh handshake (up to a second
		// on a loaded machine), which a test's one-second wait must not
		// spend: an agent's host connection is up after its first call.
		if r := e.call("list_sessions", map[string]any{}); r.IsError {
			t.Fatalf("list_sessions on the host: %s", text(r))
		}
	}
	return e
}

// startWait runs wait_for_text in the background and returns a func that
// waits for its result.
func startWait(t *testing.T, e *env, args map[string]any) func() (WaitForTextResult, time.Duration) {
	t.Helper()
	type out struct {
		res *mcp.CallToolResult
		el  time.Duration
	}
	ch := make(chan out, 1)
	start := time.Now()
	before := e.watchers().Subscriptions()
	go func() {
		r := e.call("wait_for_text", args)
		ch <- out{r, time.Since(start)}
	}()
	// Let the wait subscribe before the test writes anything.
	tmuxtest.WaitFor(t, 5*time.Second, func() bool { return e.watchers().Subscriptions() > before })
	return func() (WaitForTextResult, time.Duration) {
		o := <-ch
		if o.res.IsError {
			t.Fatalf("wait_for_text: %s", text(o.res))
		}
		var r WaitForTextResult
		decodeStructured(t, o.res, &r)
		return r, o.el
	}
}

func typeKeys(e *env, pane, keys string) {
	e.tmux.MustRun("send-keys", "-t", pane, "-l", "--", keys)
	e.tmux.MustRun("send-keys", "-t", pane, "Enter")
}

func TestWaitForTextOutcomes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		args       map[string]any
		keys       string
		outcome    string
		index      int
		matchedHas string
	}{
		{"matched", map[string]any{"patterns": []string{"nothing", "hello-42"}}, "echo hello-$((6*7))", "matched", 1, "hello-42"},
		{"case-insensitive by default", map[string]any{"patterns": []string{"HELLO-42"}}, "echo hello-$((6*7))", "matched", 0, "hello-42"},
		{"match_case", map[string]any{"patterns": []string{"HELLO-42"}, "match_case": true, "timeout": 1}, "echo hello-$((6*7))", "timeout", -1, ""},
		{"regex", map[string]any{"patterns": []string{`val=\d+!`}, "regex": true}, "echo val=$((6*7))!", "matched", 0, "val=42!"},
		{"literal is literal", map[string]any{"patterns": []string{`a.c`}, "timeout": 1}, "echo abc", "timeout", -1, ""},
		{"stop wins", map[string]any{"patterns": []string{"done-2"}, "stop": []string{"FAIL-1"}}, "echo FAIL-$((1)); echo done-$((1+1))", "stopped", 0, "FAIL-1"},
		{"any output", map[string]any{"patterns": nil}, "echo some-$((2))", "any_output", -1, "echo some"},
		{"prompt without newline", map[string]any{"patterns": []string{"name?"}}, "printf 'your name? '", "matched", 0, "your name?"},
		{"text drawn by cursor movement", map[string]any{"patterns": []string{"oneX"}}, `printf 'one\ntwo\033[AX\n'`, "matched", 0, "oneX"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := shellEnv(t)
			args := map[string]any{"pane_id": "%0", "timeout": 5}
			for k, v := range c.args {
				args[k] = v
			}
			wait := startWait(t, e, args)
			typeKeys(e, "%0", c.keys)
			r, _ := wait()
			if r.Outcome != c.outcome {
				t.Fatalf("outcome %s, want %s: %+v", r.Outcome, c.outcome, r)
			}
			if c.index >= 0 && (r.MatchedIndex == nil || *r.MatchedIndex != c.index) {
				t.Errorf("matched_index %v, want %d", r.MatchedIndex, c.index)
			}
			if c.matchedHas != "" && !strings.Contains(strings.Join(r.MatchedLines, "\n"), c.matchedHas) {
				t.Errorf("matched_lines %q lack %q", r.MatchedLines, c.matchedHas)
			}
			if r.Found != (c.outcome == "matched" || c.outcome == "any_output") || !r.SawNewOutput || r.PaneID != "%0" {
				t.Errorf("result %+v", r)
			}
		})
	}
}

// Only output written after the call starts counts; text already on the
// screen is reported as matched_at_entry.
func TestWaitForTextIgnoresOldOutput(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	typeAndWait(t, e, "%0", "echo old-$((3*3))", "old-9")
	var r WaitForTextResult
	e.ok("wait_for_text", map[string]any{"pane_id": "%0", "patterns": []string{"old-9"}, "timeout": 0.5}, &r)
	if r.Found || r.Outcome != "timeout" || !r.MatchedAtEntry || r.SawNewOutput {
		t.Errorf("%+v", r)
	}
	if len(r.Tail) == 0 {
		t.Errorf("tail %q", r.Tail)
	}
}

// interval cannot stretch the wait, and the ceiling clamps the timeout.
func TestWaitForTextBounded(t *testing.T) {
	t.Parallel()
	e := shellEnv(t, withConfig(func(c *configT) { c.WaitMax = 1 }))
	start := time.Now()
	var r WaitForTextResult
	e.ok("wait_for_text", map[string]any{"pane_id": "%0", "patterns": []string{"never"}, "timeout": 600, "interval": 600}, &r)
	el := time.Since(start)
	if r.EffectiveTimeout != 1 || el > 2500*time.Millisecond || el < 900*time.Millisecond || r.Outcome != "timeout" {
		t.Errorf("took %v: %+v", el, r)
	}
}

// A timeout shorter than finding the pane and attaching the watcher
// answers "timeout" with the pane's tail, not a deadline error (CI saw
// "tmux error: context deadline exceeded" for a 0.2 s wait on a loaded
// machine; over ssh the attach alone can take that long).
func TestWaitForTextTimeoutShorterThanSetup(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	var r WaitForTextResult
	e.ok("wait_for_text", map[string]any{"pane_id": "%0", "patterns": []string{"never"}, "timeout": 0.000001}, &r)
	if r.Outcome != "timeout" || r.Found || r.PaneID != "%0" || r.Tail == nil {
		t.Errorf("result %+v", r)
	}
}

func TestWaitForTextAlternateScreen(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	wait := startWait(t, e, map[string]any{"pane_id": "%0", "patterns": []string{"never-seen"}, "timeout": 1.5})
	typeKeys(e, "%0", `printf '\033[?1049halt'; sleep 3`)
	r, _ := wait()
	if r.Outcome != "alternate_screen" || !r.AlternateScreen {
		t.Errorf("%+v", r)
	}
}

func TestWaitForTextPaneDies(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	e.tmux.MustRun("split-window", "-d", "-t", "%0", "sh")
	go func() {
		time.Sleep(300 * time.Millisecond)
		e.tmux.MustRun("kill-pane", "-t", "%1")
	}()
	msg, _ := e.fail("wait_for_text", map[string]any{"pane_id": "%1", "patterns": []string{"x"}, "timeout": 5})
	if !strings.Contains(msg, "%1") {
		t.Errorf("%q", msg)
	}
}

// A pane whose program already exited (kept by remain-on-exit) will never
// print: the wait says so at once instead of running out its timeout.
func TestWaitForTextDeadPane(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tmux.MustRun("set-option", "-p", "-t", "%0", "remain-on-exit", "on")
	e.tmux.MustRun("respawn-pane", "-k", "-t", "%0", "true")
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		out, _ := e.tmux.Run("display-message", "-p", "-t", "%0", "#{pane_dead}")
		return out == "1"
	})
	start := time.Now()
	msg, _ := e.fail("wait_for_text", map[string]any{"pane_id": "%0", "patterns": []string{"x"}, "timeout": 10})
	if !strings.Contains(msg, "pane %0 is dead") || time.Since(start) > 3*time.Second {
		t.Errorf("after %v: %q", time.Since(start), msg)
	}
}

func TestWaitForTextValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cases := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"patterns": []string{}}, "must not be empty"},
		{map[string]any{"patterns": []string{""}}, "is empty"},
		{map[string]any{"stop": []string{"("}, "regex": true}, "not a valid regular expression"},
		{map[string]any{"timeout": 0}, "greater than 0"},
		{map[string]any{"interval": 0.001}, "at least 0.01"},
		{map[string]any{"pane_id": "%77"}, "not found"},
	}
	for _, c := range cases {
		msg, _ := e.fail("wait_for_text", c.args)
		if !strings.Contains(msg, c.want) {
			t.Errorf("%v: %q lacks %q", c.args, msg, c.want)
		}
	}
}

// Cancelling a wait returns at once and leaves no watcher subscription.
func TestWaitForTextCancel(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		_, _ = e.cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait_for_text", Arguments: map[string]any{"pane_id": "%0", "timeout": 20}})
		close(done)
	}()
	time.Sleep(200 * time.Millisecond)
	cancel()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("cancel did not end the wait")
	}
}
