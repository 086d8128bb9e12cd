package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// typeAndWait types a command into the main pane's shell and waits until
// marker shows on the screen.
func typeAndWait(t *testing.T, e *env, pane, cmd, marker string) {
	t.Helper()
	e.tmux.MustRun("send-keys", "-t", pane, "-l", "--", cmd)
	e.tmux.MustRun("send-keys", "-t", pane, "Enter")
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		out, _ := e.tmux.Run("capture-pane", "-p", "-t", pane)
		return strings.Contains(out, marker)
	})
}

func TestCaptureSince(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tmux.MustRun("respawn-pane", "-k", "-t", "%0", "sh")
	typeAndWait(t, e, "%0", "echo first-$((1+1))", "first-2")
	var r1 CaptureSinceResult
	e.ok("capture_since", map[string]any{"pane_id": "%0"}, &r1)
	if !strings.Contains(strings.Join(r1.Lines, "\n"), "first-2") || r1.LinesMissed || r1.ElapsedSeconds != 0 {
		t.Fatalf("first call: %+v", r1)
	}
	typeAndWait(t, e, "%0", "echo second-$((2+1))", "second-3")
	var r2 CaptureSinceResult
	e.ok("capture_since", map[string]any{"cursor": r1.Cursor}, &r2)
	got := strings.Join(r2.Lines, "\n")
	if strings.Contains(got, "first-2") || !strings.Contains(got, "second-3") || r2.LinesMissed {
		t.Errorf("follow-up returned %q", r2.Lines)
	}
	// Nothing new: only the (unchanged) prompt area.
	var r3 CaptureSinceResult
	e.ok("capture_since", map[string]any{"cursor": r2.Cursor, "pane_id": "%0"}, &r3)
	if strings.Contains(strings.Join(r3.Lines, "\n"), "second-3") {
		t.Errorf("old output repeated: %q", r3.Lines)
	}
	// Scrolling past the screen: every line comes back, none lost.
	typeAndWait(t, e, "%0", "seq 1 60; echo done-$((3*3))", "done-9")
	var r4 CaptureSinceResult
	e.ok("capture_since", map[string]any{"cursor": r3.Cursor}, &r4)
	joined := "\n" + strings.Join(r4.Lines, "\n") + "\n"
	for i := 1; i <= 60; i++ {
		if !strings.Contains(joined, fmt.Sprintf("\n%d\n", i)) {
			t.Fatalf("line %d missing from %q", i, r4.Lines)
		}
	}
	// Limits keep the tail.
	typeAndWait(t, e, "%0", "seq 100 130; echo end-$((4*4))", "end-16")
	var r5 CaptureSinceResult
	e.ok("capture_since", map[string]any{"cursor": r4.Cursor, "max_lines": 5}, &r5)
	if len(r5.Lines) != 5 || !r5.Truncated || r5.TruncatedLines == 0 {
		t.Errorf("max_lines: %+v", r5)
	}
}

func TestCaptureSinceHistoryCleared(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tmux.MustRun("respawn-pane", "-k", "-t", "%0", "sh")
	typeAndWait(t, e, "%0", "seq 1 50; echo x-$((5*5))", "x-25")
	var r1 CaptureSinceResult
	e.ok("capture_since", map[string]any{"pane_id": "%0"}, &r1)
	e.tmux.MustRun("clear-history", "-t", "%0")
	var r2 CaptureSinceResult
	e.ok("capture_since", map[string]any{"cursor": r1.Cursor}, &r2)
	if !r2.LinesMissed {
		t.Errorf("cleared history not reported: %+v", r2)
	}
}

func TestCaptureSinceErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tmux.MustRun("split-window", "-d", "-t", "main")
	var r CaptureSinceResult
	e.ok("capture_since", map[string]any{"pane_id": "%0"}, &r)
	forged := r.Cursor[:len(r.Cursor)-3] + "abc"
	other := newEnvOn(t, e.tmux) // another server process: another key
	cases := []struct {
		name string
		env  *env
		args map[string]any
		want string
	}{
		{"forged", e, map[string]any{"cursor": forged}, "not a capture_since cursor"},
		{"garbage", e, map[string]any{"cursor": "capture-since-v1:e30"}, "not a capture_since cursor"},
		{"other process", other, map[string]any{"cursor": r.Cursor}, "not a capture_since cursor"},
		{"pane mismatch", e, map[string]any{"cursor": r.Cursor, "pane_id": "%1"}, "belongs to pane %0"},
		{"max_lines 0", e, map[string]any{"pane_id": "%0", "max_lines": 0}, "must be positive"},
		{"max_bytes -1", e, map[string]any{"pane_id": "%0", "max_bytes": -1}, "must be positive"},
		{"unknown pane", e, map[string]any{"pane_id": "%99"}, "not found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg, _ := c.env.fail("capture_since", c.args)
			if !strings.Contains(msg, c.want) {
				t.Errorf("%q lacks %q", msg, c.want)
			}
		})
	}
	// A respawned pane (new pid) invalidates the cursor.
	e.tmux.MustRun("respawn-pane", "-k", "-t", "%0")
	msg, _ := e.fail("capture_since", map[string]any{"cursor": r.Cursor})
	if !strings.Contains(msg, "respawned") {
		t.Errorf("respawn: %q", msg)
	}
	// After a tmux server restart pane ids start again at %0: the cursor
	// must not silently apply to the new %0.
	e.tmux.Kill()
	e.tmux.MustRun("new-session", "-d", "-s", "main")
	msg, _ = e.fail("capture_since", map[string]any{"cursor": r.Cursor})
	if !strings.Contains(msg, "another tmux server") && !strings.Contains(msg, "respawned") {
		t.Errorf("restart: %q", msg)
	}
}

func TestLimitLinesBytes(t *testing.T) {
	cases := []struct {
		lines        []string
		maxL, maxB   int
		want         []string
		dropL, dropB int
	}{
		{[]string{"a", "b", "c"}, 2, 100, []string{"b", "c"}, 1, 0},
		{[]string{"aaaa", "bbbb", "cc"}, 10, 8, []string{"bbbb", "cc"}, 0, 5},
		{[]string{"0123456789"}, 10, 4, []string{"6789"}, 0, 6},
		{[]string{"ééé"}, 10, 3, []string{"é"}, 0, 4},
	}
	for _, c := range cases {
		got, dl, db := limitLinesBytes(c.lines, c.maxL, c.maxB)
		if strings.Join(got, "|") != strings.Join(c.want, "|") || dl != c.dropL || db != c.dropB {
			t.Errorf("%q %d %d: got %q %d %d", c.lines, c.maxL, c.maxB, got, dl, db)
		}
	}
}
