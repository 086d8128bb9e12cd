package termgrid

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// The package against a real tmux 3.3a: what it prints is what Parse
// reads, its widths are tmux's, and AppendANSI rebuilds a pane's grid.

// endMark follows every sample on a line of its own: the sample is all
// printed once the capture shows it.
const endMark = "@@END@@"

// printed starts one window per sample (its tty raw, so tmux gets the
// bytes as they are), waits until each has printed everything, and
// returns each window's pane id. The windows are w x h.
func printed(t testing.TB, ts *tmuxtest.Server, w, h int, samples [][]byte) []string {
	t.Helper()
	dir := t.TempDir()
	var ids []string
	for i, s := range samples {
		f := filepath.Join(dir, fmt.Sprintf("s%d", i))
		if err := os.WriteFile(f, append(append([]byte(nil), s...), "\x1b[0m\x1b(B\r\n"+endMark...), 0o600); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, catPane(t, ts, w, h, f))
	}
	for _, id := range ids {
		tmuxtest.WaitFor(t, 20*time.Second, func() bool {
			out, _ := ts.Run("capture-pane", "-p", "-J", "-t", id)
			return strings.Contains(out, endMark)
		})
	}
	return ids
}

// catPane starts a session of its own, w x h, whose pane prints file on
// a raw tty, and returns the pane's id.
func catPane(t testing.TB, ts *tmuxtest.Server, w, h int, file string) string {
	t.Helper()
	return ts.MustRun("new-session", "-d", "-P", "-F", "#{pane_id}", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h),
		"sh", "-c", `stty raw -echo; cat "$0"; exec sleep 600`, file)
}

// captureUntilMark is the pane's capture (with flags) up to the end
// mark's line.
func captureUntilMark(t testing.TB, ts *tmuxtest.Server, id string, flags ...string) []byte {
	t.Helper()
	out := ts.MustRun(append(append([]string{"capture-pane", "-p"}, flags...), "-t", id)...)
	before, ok := untilMark(out)
	if !ok {
		t.Fatalf("no end mark in %q", out)
	}
	return []byte(before)
}

// untilMark is s up to the line of the end mark (which may start with
// style codes).
func untilMark(s string) (string, bool) {
	before, _, ok := strings.Cut(s, endMark)
	return before[:strings.LastIndexByte(before, '\n')+1], ok
}

// newServer is a tmux server for samples, each in a session of its own.
func newServer(t testing.TB) *tmuxtest.Server {
	ts := tmuxtest.NewWith(t)
	ts.MustRun("new-session", "-d", "-s", "base", ";", "set-option", "-g", "history-limit", "500000")
	return ts
}

// rich is a sample of everything a capture can hold: each kind of
// colour, every attribute, line drawing, wide and combining characters,
// a background erase, trailing blanks of both kinds, a line that wraps.
var rich = []byte("" +
	"\x1b[1;31mred\x1b[0m \x1b[7mrev\x1b[0m \x1b[38;5;200mc200\x1b[0m \x1b[48;2;10;20;30mrgb\x1b[0m \x1b[91;104mbright\x1b[0m\r\n" +
	"\x1b[1mB\x1b[2mD\x1b[3mI\x1b[4mU\x1b[5mK\x1b[7mR\x1b[8mH\x1b[9mS\x1b[53mO\x1b[0m plain \x1b[4:2md\x1b[4:3mc\x1b[4:4mo\x1b[4:5ma\x1b[0m\r\n" +
	"\x1b[4;58;5;196mu256\x1b[58:2::1:2:3mrgb\x1b[59mnone\x1b[0m \x1b(0lqqk\x1b(B \x1b[32m\x1b(0x\x1b(Bgreen\x1b[0m\r\n" +
	"中文 wide, e\u0301 combined, \U0001F468\u200d\U0001F469 joined, ❤\ufe0f, \U0001F600 emoji\r\n" +
	"\x1b[41mbce\x1b[K\x1b[0m then \x1b[44m   \x1b[0m trailing styled\r\n" +
	"trailing default   \r\n" +
	"\x1b[7m" + strings.Repeat("wrap ", 20) + "\x1b[0m\r\n" +
	"\r\n" +
	"\x1b[38;5;1mpalette 1 is not red\x1b[0m \x1b[31mred\x1b[0m\r\n")

// TestCaptureExact: Parse reads a capture of a rich sample exactly
// (writing its cells back in tmux's format gives the capture byte for
// byte), and the screen's text is tmux's plain capture, both taken in one
// command so they see the same screen.
func TestCaptureExact(t *testing.T) {
	ts := newServer(t)
	ids := printed(t, ts, 80, 24, [][]byte{rich})
	out := ts.MustRun("capture-pane", "-p", "-e", "-N", "-t", ids[0], ";", "display-message", "-p", "@@PLAIN@@", ";", "capture-pane", "-p", "-t", ids[0])
	styled, plain, _ := strings.Cut(out, "@@PLAIN@@\n")
	styled, _ = untilMark(styled)
	plain, _ = untilMark(plain)
	s := Parse([]byte(styled))
	if got := appendCapture(nil, s); string(got) != styled {
		t.Errorf("capture not rebuilt exactly\n got %q\nwant %q", got, styled)
	}
	if got := s.Text(); got != plain {
		t.Errorf("text differs from tmux's plain capture\n got %q\nwant %q", got, plain)
	}
	// Spot checks that the sample reached tmux as meant.
	for _, want := range []struct {
		line, col int
		text      string
		st        Style
	}{
		{0, 0, "r", Style{Fg: ANSI(1), Attr: Bold}},
		{0, 8, "c", Style{Fg: Palette(200)}},
		{0, 13, "r", Style{Bg: RGB(10, 20, 30)}},
		{0, 17, "b", Style{Fg: ANSI(9), Bg: ANSI(12)}},
		{1, 8, "O", Style{Attr: Bold | Dim | Italic | Underline | Blink | Reverse | Hidden | Strikethrough | Overline}},
		{1, 17, "c", Style{Attr: CurlyUnderline}},
		{2, 0, "u", Style{Attr: Underline, Underline: Palette(196)}},
		{2, 4, "r", Style{Attr: Underline, Underline: RGB(1, 2, 3)}},
		{2, 13, "q", Style{Attr: Charset}},
		{2, 17, "x", Style{Fg: ANSI(2), Attr: Charset}},
		{3, 0, "中", Style{}},
		{3, 2, "文", Style{}}, // a wide character covers two columns
		{3, 4, " ", Style{}},
		{4, 2, "e", Style{Bg: ANSI(1)}},
		{4, 9, " ", Style{Bg: ANSI(4)}},
		{9, 0, "p", Style{Fg: Palette(1)}},
	} {
		c, ok := cellAt(s.Lines[want.line], want.col)
		if !ok || c.Text != want.text || c.Style != want.st {
			t.Errorf("line %d column %d: %+v, want %q in %+v", want.line, want.col, c, want.text, want.st)
		}
	}
}

// cellAt is the cell that covers column col.
func cellAt(l Line, col int) (Cell, bool) {
	x := 0
	for _, c := range l {
		if col < x+c.Width {
			return c, col >= x
		}
		x += c.Width
	}
	return Cell{}, false
}

// TestAppendANSIRebuildsTmuxGrid draws a parsed capture into a new pane:
// the new pane's capture (-e -N, and -e) is the first one's, and its
// cursor is where the screen said.
func TestAppendANSIRebuildsTmuxGrid(t *testing.T) {
	ts := newServer(t)
	ids := printed(t, ts, 80, 24, [][]byte{rich})
	// The screen up to the end mark's line.
	want := captureUntilMark(t, ts, ids[0], "-e", "-N")
	wantTrimmed := captureUntilMark(t, ts, ids[0], "-e")
	s := Parse(want)
	s.Cursor = Cursor{X: 7, Y: 3}
	id := catPane(t, ts, 80, 24, writeTemp(t, s.AppendANSI(nil)))
	// The redrawn screen has blank lines where the first had its end mark
	// and below.
	var got, gotTrimmed, cursor string
	deadline := time.Now().Add(20 * time.Second)
	for {
		out := ts.MustRun("capture-pane", "-p", "-e", "-N", "-t", id, ";", "display-message", "-p", "@@", ";",
			"capture-pane", "-p", "-e", "-t", id, ";", "display-message", "-p", "-t", id, "@@#{cursor_x},#{cursor_y},#{cursor_flag}")
		parts := strings.Split(out, "@@")
		got, cursor = strings.TrimRight(parts[0], "\n"), parts[2]
		gotTrimmed = strings.TrimRight(strings.TrimPrefix(parts[1], "\n"), "\n")
		if got == strings.TrimRight(string(want), "\n") && cursor == "7,3,1" || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if w := strings.TrimRight(string(want), "\n"); got != w {
		t.Errorf("redrawn capture (-e -N) differs\n got %q\nwant %q", got, w)
	}
	if w := strings.TrimRight(string(wantTrimmed), "\n"); gotTrimmed != w {
		t.Errorf("redrawn capture (-e) differs\n got %q\nwant %q", gotTrimmed, w)
	}
	if cursor != "7,3,1" {
		t.Errorf("cursor x,y,shown %s, want 7,3,1", cursor)
	}
}

func writeTemp(t testing.TB, b []byte) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "screen")
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// sgrAlphabet is what TestParseMatchesTmux prints: SGR parameters of every
// form tmux reads (colon ones too), separators, and text, wide and
// combining characters included. "5:3" is left out: tmux's input ignores
// it, while in a capture (and so to Parse) it is overline.
var sgrAlphabet = []string{
	"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "21", "22", "23", "24", "25", "27", "28", "29",
	"31", "39", "42", "49", "53", "55", "59", "93", "104", "38;5;", "48;5;", "58;5;", "38;2;", "48;2;", "58;2;",
	"4:2", "4:3", "4:0", "38:2::1:2:3", "48:5:9", "58:2:4:5:6", "300", "255", "17",
	";", ";", ";", ";", "", ":",
}

func randomSGRSample(r *rand.Rand) []byte {
	var b bytes.Buffer
	for range 1 + r.IntN(12) {
		b.WriteString("\x1b[")
		for range r.IntN(6) {
			b.WriteString(sgrAlphabet[r.IntN(len(sgrAlphabet))])
		}
		b.WriteString("m")
		b.WriteString([]string{"a", "bc", "中", "e\u0301", " ", "x "}[r.IntN(6)])
	}
	return b.Bytes()
}

// TestParseMatchesTmux prints random SGR sequences and text into tmux,
// one sample a line: Parse gives each sample's bytes the styles tmux gave
// them, cell by cell (Parse of tmux's capture), so it reads any SGR as tmux
// does, not only the forms a capture holds.
func TestParseMatchesTmux(t *testing.T) {
	ts := newServer(t)
	r := rand.New(rand.NewPCG(20, 5))
	const n = 400
	var samples [][]byte
	var all bytes.Buffer
	for range n {
		s := randomSGRSample(r)
		samples = append(samples, s)
		all.Write(s)
		all.WriteString("\x1b[0m\r\n")
	}
	ids := printed(t, ts, 200, n+2, [][]byte{all.Bytes()})
	lines := Parse(captureUntilMark(t, ts, ids[0], "-e", "-N")).Lines
	if len(lines) < n {
		t.Fatalf("%d lines captured, %d printed", len(lines), n)
	}
	for i, s := range samples {
		if got, want := Parse(s).Lines[0], lines[i]; !reflect.DeepEqual(got, want) {
			t.Errorf("sample %q\n Parse %+v\n tmux  %+v", s, got, want)
		}
	}
}

// TestWidthsMatchTmux prints every character Go's tables know (below
// U+40000; about 150,000) into a pane 3 columns wide as
// "a" + c + "bb": how tmux wraps it tells c's width (0: "acbb"; 1: "acb"
// "b"; 2: "ac" "bb"), which must be runeWidth's. Characters tmux drops
// (its C library does not know them) are counted, not compared.
func TestWidthsMatchTmux(t *testing.T) {
	ts := newServer(t)
	var runes []rune
	for r := rune(0xa0); r < 0x40000; r++ {
		switch {
		case !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Zs, unicode.Cf):
			continue
		case r == zwj:
			// tmux holds a joiner back until the next character that is
			// not ASCII, which it then joins to the cell before the
			// cursor: no wrapping shows its width (TestCaptureExact has
			// a joined pair).
			continue
		}
		runes = append(runes, r)
	}
	var sample bytes.Buffer
	for _, r := range runes {
		sample.WriteString("a" + string(r) + "bb\r\n")
	}
	ids := printed(t, ts, 3, 5, [][]byte{sample.Bytes()})
	// The end mark wraps too: the rows end where it starts.
	all := ts.MustRun("capture-pane", "-p", "-S", "-", "-t", ids[0])
	before, _, ok := strings.Cut(all, "\n@@E")
	if !ok {
		t.Fatalf("no end mark in the capture's last rows %q", all[max(0, len(all)-200):])
	}
	rows := strings.Split(before, "\n")
	dropped, checked, wrong := 0, 0, 0
	for _, r := range runes {
		if len(rows) == 0 {
			t.Fatalf("capture ended before %U", r)
		}
		c := string(r)
		var got int
		switch {
		case rows[0] == "abb":
			dropped++
			rows = rows[1:]
			continue
		case rows[0] == "a"+c+"bb":
			got, rows = 0, rows[1:]
		case len(rows) > 1 && rows[0] == "a"+c+"b" && rows[1] == "b":
			got, rows = 1, rows[2:]
		case len(rows) > 1 && rows[0] == "a"+c && rows[1] == "bb":
			got, rows = 2, rows[2:]
		default:
			t.Fatalf("%U: rows %q do not show a width", r, rows[:min(3, len(rows))])
		}
		checked++
		if w := runeWidth(r); w != got {
			wrong++
			if wrong <= 30 {
				t.Errorf("%U %q: runeWidth %d, tmux %d", r, c, w, got)
			}
		}
	}
	t.Logf("%d characters: %d compared (%d differ), %d dropped by tmux", len(runes), checked, wrong, dropped)
}
