package server

import (
	"context"
	"encoding/json"
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
	_, id, _ := strings.Cut(strings.TrimPrefix(r.Cursor, cursorPrefix), ":")
	cases := []struct {
		name string
		env  *env
		args map[string]any
		want string
	}{
		{"old format", e, map[string]any{"cursor": "capture-since-v1:e30"}, "not a capture_since cursor"},
		{"garbage", e, map[string]any{"cursor": "hello"}, "not a capture_since cursor"},
		{"short id", e, map[string]any{"cursor": cursorPrefix + "%0:abc"}, "not a capture_since cursor"},
		{"bad pane", e, map[string]any{"cursor": cursorPrefix + "%x:" + id}, "not a capture_since cursor"},
		{"pane edited", e, map[string]any{"cursor": cursorPrefix + "%1:" + id}, "not a capture_since cursor"},
		{"pane mismatch", e, map[string]any{"cursor": r.Cursor, "pane_id": "%1"}, "belongs to pane %0"},
		{"max_lines 0", e, map[string]any{"pane_id": "%0", "max_lines": 0}, "max_lines must be a positive integer"},
		{"max_bytes -1", e, map[string]any{"pane_id": "%0", "max_bytes": -1}, "max_bytes must be a positive integer"},
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

// fixedPromptPane opens a window whose pane has the given history-limit
// and runs a plain bash whose prompt is always "$ ", so prompt rows repeat
// exactly, and waits for its first prompt.
func fixedPromptPane(t *testing.T, e *env, limit int) string {
	t.Helper()
	// history-limit is read when a pane is made: set it, make the pane.
	e.tmux.MustRun("set-option", "-g", "history-limit", fmt.Sprint(limit))
	pane := strings.TrimSpace(e.tmux.MustRun("new-window", "-d", "-t", "main", "-P", "-F", "#{pane_id}",
		"env", "-i", "PS1=$ ", "TERM=screen", "HISTFILE=", "PATH=/usr/local/bin:/usr/bin:/bin", "bash", "--norc", "--noprofile"))
	waitPrompt(t, e, pane)
	return pane
}

// waitPrompt waits until the pane's cursor sits just after a "$ " prompt
// at the start of its row: the shell is idle and the cursor row is a
// prompt.
func waitPrompt(t *testing.T, e *env, pane string) {
	t.Helper()
	tmuxtest.WaitFor(t, 10*time.Second, func() bool {
		out, err := e.tmux.Run("display-message", "-p", "-t", pane, "#{cursor_x} #{cursor_y}")
		if err != nil {
			return false
		}
		var x, y int
		if _, err := fmt.Sscan(out, &x, &y); err != nil || x != 2 {
			return false
		}
		rows, _ := e.tmux.Run("capture-pane", "-p", "-N", "-t", pane, "-S", fmt.Sprint(y), "-E", fmt.Sprint(y))
		return strings.TrimRight(rows, "\n") == "$ "
	})
}

// historyFill reads history_size and history_limit.
func historyFill(t *testing.T, e *env, pane string) (int, int) {
	t.Helper()
	var hs, limit int
	out := e.tmux.MustRun("display-message", "-p", "-t", pane, "#{history_size} #{history_limit}")
	if _, err := fmt.Sscan(out, &hs, &limit); err != nil {
		t.Fatal(err)
	}
	return hs, limit
}

// typeLine types a command line into pane and waits until its last output
// row, last, shows on the screen followed by the next prompt.
func typeLine(t *testing.T, e *env, pane, line, last string) {
	t.Helper()
	e.tmux.MustRun("send-keys", "-t", pane, "-l", "--", line)
	e.tmux.MustRun("send-keys", "-t", pane, "Enter")
	tmuxtest.WaitFor(t, 10*time.Second, func() bool {
		out, _ := e.tmux.Run("capture-pane", "-p", "-t", pane)
		return strings.Contains(out, "\n"+last+"\n$")
	})
	waitPrompt(t, e, pane)
}

func hasLine(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}

// TestCaptureSinceNearHistoryLimit is issue 9 item 3: with history at 90%
// or more of history-limit and the cursor row a prompt, new output was
// answered with lines: [] and lines_missed: false. Every round starts at
// another fill of the history, so several phases of tmux's trimming (10% of
// the limit at a time) are crossed.
func TestCaptureSinceNearHistoryLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pane := fixedPromptPane(t, e, 100)
	for round, fill := range []int{95, 3, 4, 7, 120} {
		typeLine(t, e, pane, fmt.Sprintf("seq %d %d", 10000*(round+1), 10000*(round+1)+fill-1), fmt.Sprint(10000*(round+1)+fill-1))
		hs, limit := historyFill(t, e, pane)
		if round > 0 && hs*10 < limit*9 {
			t.Fatalf("round %d: history %d/%d is not near the limit", round, hs, limit)
		}
		var first CaptureSinceResult
		e.ok("capture_since", map[string]any{"pane_id": pane}, &first)

		// Two new rows (the command and its output) after the prompt row.
		cmd := fmt.Sprintf("echo two-$((%d+1))", round*100)
		want := fmt.Sprintf("two-%d", round*100+1)
		typeLine(t, e, pane, cmd, want)
		var two CaptureSinceResult
		e.ok("capture_since", map[string]any{"cursor": first.Cursor}, &two)
		if two.LinesMissed || !hasLine(two.Lines, want) || !hasLine(two.Lines, "$ "+cmd) {
			t.Errorf("round %d (history %d/%d): 2 new lines answered with %+v", round, hs, limit, two)
		}

		// 50 lines: the history is trimmed under the cursor, but the
		// output is all still in the grid and must all come back.
		base := 20000 * (round + 1)
		typeLine(t, e, pane, fmt.Sprintf("seq %d %d", base, base+49), fmt.Sprint(base+49))
		var fifty CaptureSinceResult
		e.ok("capture_since", map[string]any{"cursor": two.Cursor}, &fifty)
		if fifty.LinesMissed {
			t.Errorf("round %d: 50 lines reported missed: %+v", round, fifty)
		}
		for i := base; i < base+50; i++ {
			if !fifty.LinesMissed && !hasLine(fifty.Lines, fmt.Sprint(i)) {
				t.Errorf("round %d: line %d missing from %q", round, i, fifty.Lines)
				break
			}
		}

		// 301 lines: more than history-limit plus the screen, so some are
		// gone for good. The answer must say so.
		base = 30000 * (round + 1)
		typeLine(t, e, pane, fmt.Sprintf("seq %d %d", base, base+300), fmt.Sprint(base+300))
		var many CaptureSinceResult
		e.ok("capture_since", map[string]any{"cursor": fifty.Cursor}, &many)
		if !many.LinesMissed || !hasLine(many.Lines, fmt.Sprint(base+300)) {
			t.Errorf("round %d: 301 new lines answered with missed=%v, %d lines %q", round, many.LinesMissed, len(many.Lines), many.Lines)
		}
	}
}

// TestCaptureSinceAfterInterrupt is issue 9 item 3's other report: a full
// screen just after C-c. The screen and history are full of identical rows
// (so no row, and no short run of rows, is unique), the program is
// interrupted, and the cursor row is the new prompt.
func TestCaptureSinceAfterInterrupt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pane := fixedPromptPane(t, e, 100)
	for round, fill := range []struct{ cmd, last string }{{"yes | head -n 150", "y"}, {"seq 1 200", "200"}} {
		typeLine(t, e, pane, fill.cmd, fill.last)
		e.tmux.MustRun("send-keys", "-t", pane, "-l", "--", "cat")
		e.tmux.MustRun("send-keys", "-t", pane, "Enter")
		tmuxtest.WaitFor(t, 5*time.Second, func() bool {
			out, _ := e.tmux.Run("display-message", "-p", "-t", pane, "#{pane_current_command}")
			return out == "cat"
		})
		e.tmux.MustRun("send-keys", "-t", pane, "C-c")
		waitPrompt(t, e, pane)
		var first CaptureSinceResult
		e.ok("capture_since", map[string]any{"pane_id": pane}, &first)
		cmd := fmt.Sprintf("echo after-$((%d*3))", round+3)
		want := fmt.Sprintf("after-%d", (round+3)*3)
		typeLine(t, e, pane, cmd, want)
		var r CaptureSinceResult
		e.ok("capture_since", map[string]any{"cursor": first.Cursor}, &r)
		// Either the exact new rows, or lines_missed with the screen (which
		// holds them): never an answer that hides them.
		if !hasLine(r.Lines, want) {
			t.Errorf("round %d: %q lost: %+v", round, want, r)
		}
		if !r.LinesMissed && len(r.Lines) > 3 {
			t.Errorf("round %d: exact answer holds old rows: %q", round, r.Lines)
		}
	}
}

// TestCaptureSinceQuiet: when nothing at all was printed since the cursor,
// the answer is exact (no rows, nothing missed) even where the rows repeat
// so much that aligning them alone would be ambiguous.
func TestCaptureSinceQuiet(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pane := fixedPromptPane(t, e, 100)
	typeLine(t, e, pane, "yes | head -n 150", "y")
	// Let a second pass: tmux stamps activity in whole seconds, and the
	// proof that nothing was printed needs the last output to be in an
	// earlier second than the cursor.
	time.Sleep(1100 * time.Millisecond)
	var first, second CaptureSinceResult
	e.ok("capture_since", map[string]any{"pane_id": pane}, &first)
	e.ok("capture_since", map[string]any{"cursor": first.Cursor}, &second)
	if second.LinesMissed || len(second.Lines) != 0 {
		t.Fatalf("nothing printed, answered %+v", second)
	}
}

// TestCaptureSinceCursorShort: the cursor is a short handle to state kept
// in the server, not the state itself (it was ~2.3 KB for 30 rows).
func TestCaptureSinceCursorShort(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tmux.MustRun("resize-window", "-t", "main", "-x", "200", "-y", "60")
	var r CaptureSinceResult
	e.ok("capture_since", map[string]any{"pane_id": "%0"}, &r)
	if len(r.Cursor) >= 200 {
		t.Fatalf("cursor is %d bytes: %s", len(r.Cursor), r.Cursor)
	}
}

// TestCaptureSinceUnknownCursor: a cursor this process no longer knows
// (evicted, from another process, or another client's) is answered like a
// first call on its pane, with lines_missed.
func TestCaptureSinceUnknownCursor(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tmux.MustRun("respawn-pane", "-k", "-t", "%0", "sh")
	typeAndWait(t, e, "%0", "echo known-$((2*2))", "known-4")
	var r CaptureSinceResult
	e.ok("capture_since", map[string]any{"pane_id": "%0"}, &r)

	other := newEnvOn(t, e.tmux) // another server process
	var o CaptureSinceResult
	e2 := other
	e2.ok("capture_since", map[string]any{"cursor": r.Cursor}, &o)
	if !o.LinesMissed || o.PaneID != "%0" || !strings.Contains(strings.Join(o.Lines, "\n"), "known-4") || o.Cursor == "" {
		t.Errorf("unknown cursor: %+v", o)
	}
	// The fresh cursor works as usual there.
	var o2 CaptureSinceResult
	e2.ok("capture_since", map[string]any{"cursor": o.Cursor}, &o2)
	if o2.LinesMissed || len(o2.Lines) != 0 {
		t.Errorf("follow-up of a fresh cursor: %+v", o2)
	}

	// Another client (owner) of the same process cannot use the cursor.
	tool := e.srv.tool("capture_since")
	raw, _ := json.Marshal(map[string]any{"cursor": r.Cursor})
	res := e.srv.invoke(WithOwner(context.Background(), "someone-else"), tool, nil, raw, "")
	if res.IsError {
		t.Fatalf("other owner: %s", text(res))
	}
	var b CaptureSinceResult
	decodeStructured(t, res, &b)
	if !b.LinesMissed || !strings.Contains(strings.Join(b.Lines, "\n"), "known-4") {
		t.Errorf("another owner's cursor was honoured: %+v", b)
	}
}

// TestCaptureSinceNullLimits is issue 10 item 3: max_lines and max_bytes
// accept null (no limit), as the reference's int|None does.
func TestCaptureSinceNullLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var r CaptureSinceResult
	e.ok("capture_since", map[string]any{"pane_id": "%0", "max_lines": nil, "max_bytes": nil}, &r)
	if r.Truncated {
		t.Errorf("null limits truncated: %+v", r)
	}
}
