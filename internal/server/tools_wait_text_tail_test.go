package server

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// The tail is the rows from the entry cursor row down as the pane shows
// them when the wait returns, whatever ended it, read as the reference
// reads them (capture-pane -J): the typed command on the entry row first,
// trailing spaces kept, a wrapped line joined, empty rows at the bottom
// dropped.
func TestWaitForTextTail(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("w", 100) // wider than the 80-column pane
	// \122 is R: the typed command line itself does not match.
	cmd := `printf 'one  \n\122EADY  \n` + long + `\n'`
	for _, c := range []struct {
		name     string
		args     map[string]any
		outcome  string
		shutdown bool
	}{
		{"matched", map[string]any{"patterns": []string{"READY"}}, "matched", false},
		{"stopped", map[string]any{"patterns": []string{"never"}, "stop": []string{"READY"}}, "stopped", false},
		{"timeout", map[string]any{"patterns": []string{"never"}, "timeout": 1}, "timeout", false},
		{"shutdown", map[string]any{"patterns": []string{"never"}, "timeout": 30}, "timeout", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := shellEnv(t)
			args := map[string]any{"pane_id": "%0", "timeout": 5}
			for k, v := range c.args {
				args[k] = v
			}
			wait := startWait(t, e, args)
			typeKeys(e, "%0", cmd)
			if c.shutdown {
				tmuxtest.WaitFor(t, 5*time.Second, func() bool {
					out, _ := e.tmux.Run("capture-pane", "-p", "-J", "-t", "%0")
					return strings.Contains(out, long)
				})
				e.srv.Shutdown()
			}
			r, _ := wait()
			if r.Outcome != c.outcome {
				t.Fatalf("outcome %s, want %s", r.Outcome, c.outcome)
			}
			if len(r.Tail) == 0 || !strings.HasSuffix(r.Tail[0], cmd) {
				t.Errorf("tail does not start at the entry row with the typed command: %q", r.Tail)
			}
			if !slices.Contains(r.Tail, "one  ") || !slices.Contains(r.Tail, "READY  ") {
				t.Errorf("tail lacks the printed rows with their trailing spaces: %q", r.Tail)
			}
			// A match can return before the rest of the write is drawn; a
			// wait that ran to its end has seen it all.
			if !r.Found && r.Outcome != "stopped" && !slices.Contains(r.Tail, long) {
				t.Errorf("tail lacks the wrapped line joined: %q", r.Tail)
			}
			if last := r.Tail[len(r.Tail)-1]; last == "" {
				t.Errorf("tail ends with an empty row: %q", r.Tail)
			}
		})
	}
}

// The tail and matched_lines caps count bytes as the reference's
// _limit_lines does: the lines joined by "\n".
func TestCapTail(t *testing.T) {
	t.Parallel()
	a, b := strings.Repeat("a", 999), strings.Repeat("b", 1000)
	many := make([]string, 30)
	for i := range many {
		many[i] = string(rune('A' + i))
	}
	for _, c := range []struct {
		name string
		in   []string
		want []string
	}{
		{"exactly 2000 bytes joined", []string{a, b}, []string{a, b}},
		{"2001 bytes joined", []string{a + "a", b}, []string{b}},
		{"lines cap first", many, many[10:]},
		{"one long line keeps its end", []string{"é" + strings.Repeat("x", 1999)}, []string{strings.Repeat("x", 1999)}},
		{"trailing spaces kept", []string{"x  ", "  "}, []string{"x  ", "  "}},
		{"empty", nil, []string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := capTail(c.in); !slices.Equal(got, c.want) || got == nil {
				t.Errorf("got %d lines %.40q, want %d lines", len(got), got, len(c.want))
			}
		})
	}
}
