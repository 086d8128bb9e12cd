package record

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/termgrid"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// rawPane is a pane that prints, on a raw tty, whatever is written to its
// fifo: a terminal to draw into.
type rawPane struct {
	id   string
	fifo *os.File
}

func newRawPane(t *testing.T, ts *tmuxtest.Server, w, h int) *rawPane {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	id := ts.MustRun("new-session", "-d", "-P", "-F", "#{pane_id}", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h),
		"sh", "-c", `stty raw -echo; exec cat <>"$0"`, p)
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return &rawPane{id: id, fifo: f}
}

// draw writes b to the pane and waits until tmux has taken it: a
// sentinel option set after the write is read back once the bytes before
// it are parsed (cat writes in order; tmux parses in order).
func (p *rawPane) draw(t *testing.T, ts *tmuxtest.Server, b string) {
	t.Helper()
	if _, err := p.fifo.WriteString(b); err != nil {
		t.Fatal(err)
	}
	// An OSC title set last: once the pane's title is the mark, what came
	// before it is on the screen.
	mark := "drawn-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if _, err := p.fifo.WriteString("\x1b]2;" + mark + "\x1b\\"); err != nil {
		t.Fatal(err)
	}
	tmuxtest.WaitFor(t, 10*time.Second, func() bool {
		out, _ := ts.Run("display-message", "-p", "-t", p.id, "#{pane_title}")
		return out == mark
	})
}

var stateFields = []string{"cursor_x", "cursor_y", "cursor_flag", "alternate_on", "alternate_saved_x", "alternate_saved_y",
	"scroll_region_upper", "scroll_region_lower", "origin_flag", "insert_flag", "wrap_flag", "pane_height"}

// state is what a pane's terminal is: its screens and modes.
func state(t *testing.T, ts *tmuxtest.Server, pane string) (shown, normal string, modes map[string]string) {
	t.Helper()
	f := "#{" + strings.Join(stateFields, "},#{") + "}"
	vals := strings.Split(ts.MustRun("display-message", "-p", "-t", pane, f), ",")
	modes = map[string]string{}
	for i, k := range stateFields {
		modes[k] = vals[i]
	}
	shown = ts.MustRun("capture-pane", "-p", "-e", "-N", "-t", pane)
	if modes["alternate_on"] == "1" {
		normal = ts.MustRun("capture-pane", "-p", "-e", "-N", "-a", "-t", pane)
	}
	return shown, normal, modes
}

// TestAppendFrameRebuildsTerminal: a terminal in the middle of a
// full-screen program (normal screen kept under the alternate one, a
// scroll region, origin and insert mode, autowrap off, a hidden cursor)
// is read as tmux holds it, drawn into a fresh pane with AppendFrame, and
// the fresh pane is then the same terminal: the same screens, cursor and
// modes, and the same screens again after both are given the program's
// next output (a scroll inside the region, leaving the alternate screen).
func TestAppendFrameRebuildsTerminal(t *testing.T) {
	ts := tmuxtest.NewWith(t, "base")
	a := newRawPane(t, ts, 60, 15)
	a.draw(t, ts, "normal \x1b[1;31mred\x1b[0m line\r\n\x1b[44mblue   \x1b[0m  \r\nprompt$ vi"+
		"\x1b[?1049h\x1b[H\x1b[2J"+
		"\x1b[7m title bar \x1b[0m\r\n"+
		"\x1b(0lqqqk\x1b(B box\r\n"+
		"row 3\r\nrow 4\r\nrow 5 \x1b[32mgreen\x1b[0m\r\nrow 6\r\nrow 7\r\nrow 8\r\nrow 9\r\nrow 10"+
		"\x1b[3;10r\x1b[?6h\x1b[4;5H\x1b[4h\x1b[?7l\x1b[?25l")
	shown, normal, modes := state(t, ts, a.id)
	if modes["alternate_on"] != "1" || modes["scroll_region_upper"] != "2" || modes["origin_flag"] != "1" || modes["cursor_flag"] != "0" {
		t.Fatalf("the terminal to copy is not in the state meant: %v", modes)
	}

	s := Screen{Height: atoi(modes["pane_height"]), Shown: termgrid.Parse([]byte(shown)),
		ScrollTop: atoi(modes["scroll_region_upper"]), ScrollBottom: atoi(modes["scroll_region_lower"]),
		Origin: modes["origin_flag"] == "1", Insert: modes["insert_flag"] == "1", NoWrap: modes["wrap_flag"] == "0"}
	s.Shown.Cursor = termgrid.Cursor{X: atoi(modes["cursor_x"]), Y: atoi(modes["cursor_y"]), Hidden: modes["cursor_flag"] == "0"}
	s.Normal = termgrid.Parse([]byte(normal))
	s.Normal.Cursor = termgrid.Cursor{X: atoi(modes["alternate_saved_x"]), Y: atoi(modes["alternate_saved_y"])}

	b := newRawPane(t, ts, 60, 15)
	b.draw(t, ts, string(s.AppendFrame(nil)))
	compare := func(when string) {
		t.Helper()
		gs, gn, gm := state(t, ts, b.id)
		ws, wn, wm := state(t, ts, a.id)
		if gs != ws {
			t.Errorf("%s: shown screen\n got %q\nwant %q", when, gs, ws)
		}
		if gn != wn {
			t.Errorf("%s: normal screen\n got %q\nwant %q", when, gn, wn)
		}
		for _, k := range stateFields {
			if gm[k] != wm[k] {
				t.Errorf("%s: %s %s, want %s", when, k, gm[k], wm[k])
			}
		}
	}
	compare("after the frame")

	// The program goes on: text in insert mode, a scroll inside the
	// region (origin mode: row 8 is the region's 8th row), then it
	// leaves.
	next := "INS\x1b[8;1H\n\n\nscrolled" + "\x1b[?6l\x1b[r\x1b[?7h\x1b[4l\x1b[?25h\x1b[?1049l" + "m back"
	a.draw(t, ts, next)
	b.draw(t, ts, next)
	compare("after the program's next output")
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }
