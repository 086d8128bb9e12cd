package termgrid

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func cells(st Style, text string) Line {
	var l Line
	for _, r := range text {
		l = append(l, Cell{Text: string(r), Width: runeWidth(r), Style: st})
	}
	return l
}

func join(ls ...Line) Line {
	var out Line
	for _, l := range ls {
		out = append(out, l...)
	}
	return out
}

var (
	def     = Style{}
	bold    = Style{Attr: Bold}
	red     = Style{Fg: ANSI(1)}
	boldRed = Style{Fg: ANSI(1), Attr: Bold}
	rev     = Style{Attr: Reverse}
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Line
	}{
		{"empty capture: one empty line", "", []Line{nil}},
		{"the final newline ends the last line", "ab\n", []Line{cells(def, "ab")}},
		{"blank lines stay", "a\n\nb\n", []Line{cells(def, "a"), nil, cells(def, "b")}},
		// What tmux 3.3a printed for printf '\e[1;31mred\e[0m \e[7mrev\e[0m'.
		{"tmux's codes for bold red, then reverse",
			"\x1b[1m\x1b[31mred\x1b[0m\x1b[39m\x1b[49m \x1b[7mrev\n",
			[]Line{join(cells(boldRed, "red"), cells(def, " "), cells(rev, "rev"))}},
		{"the style carries across lines", "\x1b[41mab\nc\x1b[49md\n",
			[]Line{cells(Style{Bg: ANSI(1)}, "ab"), join(cells(Style{Bg: ANSI(1)}, "c"), cells(def, "d"))}},
		{"256 colours and true colour", "\x1b[38;5;200ma\x1b[48;2;10;20;30mb\n",
			[]Line{join(cells(Style{Fg: Palette(200)}, "a"), cells(Style{Fg: Palette(200), Bg: RGB(10, 20, 30)}, "b"))}},
		{"bright colours", "\x1b[91ma\x1b[107mb\n",
			[]Line{join(cells(Style{Fg: ANSI(9)}, "a"), cells(Style{Fg: ANSI(9), Bg: ANSI(15)}, "b"))}},
		{"underline styles as tmux writes them", "\x1b[4:3ma\x1b[0m\x1b[39m\x1b[49m\x1b[4:2mb\n",
			[]Line{join(cells(Style{Attr: CurlyUnderline}, "a"), cells(Style{Attr: DoubleUnderline}, "b"))}},
		{"overline as tmux 3.3a captures it (5:3)", "\x1b[5:3mo\n", []Line{cells(Style{Attr: Overline}, "o")}},
		{"overline as a terminal gets it (53)", "\x1b[53mo\x1b[55mp\n",
			[]Line{join(cells(Style{Attr: Overline}, "o"), cells(def, "p"))}},
		{"underline colour", "\x1b[4m\x1b[58;5;3mu\x1b[58:2::1:2:3mv\x1b[59mw\n",
			[]Line{join(cells(Style{Attr: Underline, Underline: Palette(3)}, "u"),
				cells(Style{Attr: Underline, Underline: RGB(1, 2, 3)}, "v"), cells(Style{Attr: Underline}, "w"))}},
		{"all the attributes", "\x1b[1;2;3;5;7;8;9mx\x1b[22;23;25;27;28;29my\n",
			[]Line{join(cells(Style{Attr: Bold | Dim | Italic | Blink | Reverse | Hidden | Strikethrough}, "x"), cells(def, "y"))}},
		{"SO and SI: line drawing", "\x0elqk\x0f a\n", []Line{join(cells(Style{Attr: Charset}, "lqk"), cells(def, " a"))}},
		{"a reset keeps the line-drawing set", "\x1b[1m\x0eq\x1b[0mq\x0fq\n",
			[]Line{join(cells(Style{Attr: Bold | Charset}, "q"), cells(Style{Attr: Charset}, "q"), cells(def, "q"))}},
		{"a wide character is one cell of two columns", "中a\n",
			[]Line{{{Text: "中", Width: 2}, {Text: "a", Width: 1}}}},
		{"a combining accent joins its character", "e\u0301x\n",
			[]Line{{{Text: "e\u0301", Width: 1}, {Text: "x", Width: 1}}}},
		{"a joiner joins what follows it", "\U0001F468\u200d\U0001F469x\n",
			[]Line{{{Text: "\U0001F468\u200d\U0001F469", Width: 2}, {Text: "x", Width: 1}}}},
		{"codes between a character and its accent", "e\x1b[1m\u0301x\n",
			[]Line{{{Text: "e\u0301", Width: 1}, {Text: "x", Width: 1, Style: bold}}}},
		{"trailing blanks of -N are cells", "a  \x1b[7m  \n", []Line{join(cells(def, "a  "), cells(rev, "  "))}},
		{"an invalid byte is a cell of its own", "a\xffb\n", []Line{{{Text: "a", Width: 1}, {Text: "\ufffd", Width: 1}, {Text: "b", Width: 1}}}},
		{"a private or intermediate SGR is not SGR", "\x1b[>4;1ma\x1b[1 mb\n", []Line{cells(def, "ab")}},
		{"38;5 out of range: default foreground", "\x1b[31m\x1b[38;5;300ma\n", []Line{cells(def, "a")}},
		{"a bad RGB is skipped, its numbers read as codes", "\x1b[38;2;1;2;300ma\n", []Line{cells(Style{Attr: Bold | Dim}, "a")}},
		{"missing parameters are 0", "\x1b[1m\x1b[;4ma\n", []Line{cells(Style{Attr: Underline}, "a")}},
		{"an overlong parameter list is dropped", "\x1b[1" + strings.Repeat(";1", 23) + "m\x1b[3ma\n", []Line{cells(Style{Attr: Italic}, "a")}},
		{"a number beyond 2^31-1 drops the sequence", "\x1b[1;99999999999ma\n", []Line{cells(def, "a")}},
		{"other sequences are skipped", "a\x1b[2Kb\x1b(Bc\x1b\n", []Line{cells(def, "abc")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Parse([]byte(tt.in)).Lines
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Parse(%q)\n got %+v\nwant %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestRuneWidth(t *testing.T) {
	tests := []struct {
		r    rune
		want int
	}{
		{'a', 1}, {'é', 1}, {'\u00ad', 1}, {'中', 2}, {'ｱ', 1}, {'Ａ', 2}, {'한', 2},
		{'\u1160', 0}, {'\u0301', 0}, {'\u200b', 0}, {'\u200d', 0}, {'\ufe0f', 0},
		{'\U0001F600', 2}, {'❤', 1}, {'─', 1}, {'\u3000', 2},
	}
	for _, tt := range tests {
		if got := runeWidth(tt.r); got != tt.want {
			t.Errorf("runeWidth(%U) = %d, want %d", tt.r, got, tt.want)
		}
	}
}

func TestColorString(t *testing.T) {
	tests := []struct {
		c    Color
		want string
	}{
		{Color{}, "default"}, {ANSI(0), "black"}, {ANSI(1), "red"}, {ANSI(7), "white"},
		{ANSI(9), "bright-red"}, {ANSI(15), "bright-white"}, {Palette(1), "1"}, {Palette(208), "208"},
		{RGB(0, 0x7f, 0xff), "#007fff"},
	}
	for _, tt := range tests {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.c, got, tt.want)
		}
	}
}

func TestAttrWords(t *testing.T) {
	if got := (Bold | Reverse | Charset | CurlyUnderline).Words(); !reflect.DeepEqual(got, []string{"bold", "curly-underline", "reverse", "acs"}) {
		t.Errorf("words %q", got)
	}
	if got := Attr(0).Words(); got != nil {
		t.Errorf("no attributes: %q", got)
	}
}

func TestLineTextAndRuns(t *testing.T) {
	l := join(cells(def, "ab "), cells(boldRed, "中x"), cells(def, " "), cells(rev, "  "), cells(def, "  "))
	if got := l.Text(); got != "ab 中x" {
		t.Errorf("Text %q: trailing blanks are trimmed whatever their style, as tmux trims them", got)
	}
	if got := l.Width(); got != 11 {
		t.Errorf("Width %d", got)
	}
	want := []Run{
		{Col: 0, Width: 3, Text: "ab ", Style: def},
		{Col: 3, Width: 3, Text: "中x", Style: boldRed},
		{Col: 6, Width: 1, Text: " ", Style: def},
		{Col: 7, Width: 2, Text: "  ", Style: rev},
		{Col: 9, Width: 2, Text: "  ", Style: def},
	}
	if got := l.Runs(); !reflect.DeepEqual(got, want) {
		t.Errorf("Runs\n got %+v\nwant %+v", got, want)
	}
	if got := Line(nil).Runs(); got != nil {
		t.Errorf("an empty line has runs %+v", got)
	}
	s := &Screen{Lines: []Line{l, nil, cells(red, "z  ")}}
	if got := s.Text(); got != "ab 中x\n\nz\n" {
		t.Errorf("Screen.Text %q", got)
	}
}

func TestLineDrawing(t *testing.T) {
	if got := string([]rune{LineDrawing('l'), LineDrawing('q'), LineDrawing('k'), LineDrawing('x'), LineDrawing('A')}); got != "┌─┐│A" {
		t.Errorf("line drawing %q", got)
	}
}

// TestCaptureRoundTrip: writing a parsed capture back in tmux's capture
// format gives the same bytes (samples as tmux 3.3a printed them).
func TestCaptureRoundTrip(t *testing.T) {
	for _, in := range []string{
		"\x1b[1m\x1b[31mred\x1b[0m\x1b[39m\x1b[49m \x1b[7mrev\x1b[0m\x1b[39m\x1b[49m \x1b[38;5;200mc200\x1b[39m \x1b[38;2;10;20;30mrgb\x1b[39m \x1b[4:3mcurly\x1b[0m\x1b[39m\x1b[49m \x1b[5:3mover\x1b[0m\x1b[39m\x1b[49m 中文x e\u0301 \x0elqk\x0f \x1b[44m   \n\x1b[41mbce\n\x1b[1m\x1b[49mbold\x1b[0;2m\x1b[39m\x1b[49mdim\x1b[0m\x1b[39m\x1b[49mn\n",
		"plain\n\n  indented  \n",
	} {
		got := appendCapture(nil, Parse([]byte(in)))
		if !bytes.Equal(got, []byte(in)) {
			t.Errorf("round trip\n got %q\nwant %q", got, in)
		}
	}
}

func TestAppendANSI(t *testing.T) {
	s := &Screen{
		Lines: []Line{
			join(cells(boldRed, "ab"), cells(def, "c")),
			nil,
			join(cells(Style{Attr: Charset}, "lq"), cells(Style{Bg: Palette(208), Underline: RGB(1, 2, 3), Attr: CurlyUnderline | Overline}, "x"), cells(def, "  ")),
		},
		Cursor: Cursor{X: 4, Y: 2, Hidden: true},
	}
	want := "\x1b[0m\x1b(B\x1b[H\x1b[2J" +
		"\x1b[1H\x1b[0;1;31mab\x1b[0mc" +
		"\x1b[3H\x1b(0lq\x1b(B\x1b[0;4:3;53;48;5;208;58;2;1;2;3mx\x1b[0m..\x1b[4G  " +
		"\x1b[3;5H\x1b[?25l"
	if got := string(s.AppendANSI(nil)); got != want {
		t.Errorf("AppendANSI\n got %q\nwant %q", got, want)
	}
}

// FuzzParse: Parse never panics; what it makes of any input survives
// being written in tmux's capture format and parsed again; Text is each
// line's text without cells; lines parsed after Skip are the lines Parse
// makes.
func FuzzParse(f *testing.F) {
	f.Add([]byte("\x1b[1m\x1b[31mred\x1b[0m\x1b[39m\x1b[49m \x1b[7mrev\n中文 e\u0301\x0elqk\x0f\n"))
	f.Add([]byte("\x1b[38:2::1:2:3;4:3;58;5;9;5:3mx\x1b[38;2;1;2mq\xff\x1b["))
	f.Add([]byte("\u200d\u0301a\u200d\nb"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := Parse(b)
		for _, l := range s.Lines {
			for _, c := range l {
				if c.Text == "" || c.Width < 1 || c.Width > 2 {
					t.Fatalf("bad cell %+v from %q", c, b)
				}
				if n := c.Style.Attr & AnyUnderline; n&(n-1) != 0 {
					t.Fatalf("two underline styles in %+v from %q", c, b)
				}
			}
			_ = l.Runs()
			_ = l.Text()
		}
		raw := SplitLines(b)
		if len(raw) != len(s.Lines) {
			t.Fatalf("%d lines, SplitLines %d", len(s.Lines), len(raw))
		}
		var skipping Parser
		for i, l := range raw {
			if got, want := Text(l), s.Lines[i].Text(); got != want {
				t.Fatalf("Text(%q) = %q, the cells say %q", l, got, want)
			}
			if i < len(raw)/2 {
				skipping.Skip(l)
			} else if got := skipping.Line(l); !reflect.DeepEqual(got, s.Lines[i]) && len(got)+len(s.Lines[i]) > 0 {
				t.Fatalf("line %d after Skip: %+v, Parse: %+v", i, got, s.Lines[i])
			}
		}
		again := Parse(appendCapture(nil, s))
		if !reflect.DeepEqual(normalize(again), normalize(s)) {
			t.Fatalf("Parse(appendCapture(Parse(%q)))\n got %+v\nwant %+v", b, again.Lines, s.Lines)
		}
		_ = s.AppendANSI(nil)
	})
}

// normalize makes nil and empty lines equal.
func normalize(s *Screen) []Line {
	out := make([]Line, len(s.Lines))
	for i, l := range s.Lines {
		if len(l) > 0 {
			out[i] = l
		}
	}
	return out
}

func TestSpans(t *testing.T) {
	blue, white := Style{Bg: ANSI(4)}, Style{Bg: ANSI(7)}
	tests := []struct {
		name  string
		lines []Line
		want  []string
	}{
		{"default cells are in no span", []Line{cells(def, "plain text"), nil}, nil},
		{"attributes and colours of the same cells are one span", []Line{join(cells(def, "ls "), cells(Style{Fg: ANSI(6), Attr: Bold}, "broken"))},
			[]string{"0:3+6 bold fg:cyan"}},
		{"a foreground runs over blanks, which do not show it", []Line{join(cells(red, "return"), cells(def, " "), cells(red, "a"), cells(def, "  "))},
			[]string{"0:0+8 fg:red"}},
		{"but not over a character of another colour", []Line{join(cells(red, "a"), cells(def, " b "), cells(red, "c"))},
			[]string{"0:0+1 fg:red", "0:4+1 fg:red"}},
		{"a background shows on blanks", []Line{join(cells(blue, "a"), cells(def, " "), cells(blue, "b "))},
			[]string{"0:0+1 bg:blue", "0:2+2 bg:blue"}},
		{"a selection is one background span over text of several colours",
			[]Line{join(cells(Style{Fg: Palette(130), Bg: ANSI(7)}, "func"), cells(white, " Add("), cells(Style{Fg: ANSI(2), Bg: ANSI(7)}, "int"), cells(white, ") "))},
			[]string{"0:0+14 bg:white", "0:0+4 fg:130", "0:9+3 fg:green"}},
		{"reverse shows on blanks: a bar of spaces", []Line{join(cells(def, "x"), cells(rev, "  item  "))},
			[]string{"0:1+8 reverse"}},
		{"the same span on consecutive rows is one span", []Line{
			join(cells(def, "  1 "), cells(rev, "lorem"), cells(def, " x")),
			join(cells(def, "  2 "), cells(rev, "lorem"), cells(def, " y")),
			join(cells(def, "  3 "), cells(rev, "lorem")),
			cells(def, "  4 lorem"),
			join(cells(def, "  5 "), cells(rev, "lorem")),
		}, []string{"0-2:4+5 reverse", "4:4+5 reverse"}},
		{"columns count a wide character twice", []Line{join(cells(def, "中文 "), cells(bold, "粗"), cells(red, "x"))},
			[]string{"0:5+2 bold", "0:7+1 fg:red"}},
		{"an underline's colour only where there is an underline", []Line{
			join(cells(Style{Underline: Palette(9)}, "a"), cells(Style{Attr: CurlyUnderline, Underline: RGB(255, 0, 0)}, "b c"))},
			[]string{"0:1+3 curly-underline ul:#ff0000"}},
		{"line drawing", []Line{join(cells(Style{Attr: Charset}, "lqk"), cells(def, " "), cells(Style{Attr: Charset | Bold, Fg: ANSI(10)}, "x"))},
			[]string{"0:0+5 acs", "0:4+1 bold fg:bright-green"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, sp := range (&Screen{Lines: tt.lines}).Spans() {
				got = append(got, sp.String())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("spans\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}
