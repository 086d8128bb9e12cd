// Package termgrid models a terminal screen the way tmux holds it (its
// grid): lines of cells, each cell one character with what combines with
// it, its width in columns and its style. It reads what "tmux capture-pane
// -p -e" prints (Parse) and writes a screen back as escape sequences that
// draw it on a terminal (Screen.AppendANSI).
//
// The model is exact for tmux 3.3a's capture format: every line of a
// capture taken with -N (no trimming) is rebuilt byte for byte from the
// cells it parses to. Plain text, the styled runs a model reads, a PNG of
// the screen and a recording's first frame are all derived from it.
package termgrid

import (
	"strconv"
	"strings"
)

// ColorKind says which of a terminal's colour spaces a Color is in.
type ColorKind uint8

const (
	// DefaultColor is the terminal's own foreground or background.
	DefaultColor ColorKind = iota
	// ANSIColor is one of the 16 named colours: Index 0-7 are set by SGR
	// 30-37 (40-47), 8-15 are the bright ones, SGR 90-97 (100-107).
	ANSIColor
	// PaletteColor is an index into the 256-colour palette (SGR 38;5;N).
	// tmux keeps it apart from ANSIColor even for indexes below 16.
	PaletteColor
	// RGBColor is a true colour (SGR 38;2;R;G;B).
	RGBColor
)

// Color is a foreground, background or underline colour. The zero value
// is the default colour, so a Style's zero value is the default style.
type Color struct {
	Kind    ColorKind
	Index   uint8 // ANSIColor (0-15), PaletteColor (0-255)
	R, G, B uint8 // RGBColor
}

// ANSI returns one of the 16 named colours (8-15: the bright ones).
func ANSI(i uint8) Color { return Color{Kind: ANSIColor, Index: i & 15} }

// Palette returns a colour of the 256-colour palette.
func Palette(i uint8) Color { return Color{Kind: PaletteColor, Index: i} }

// RGB returns a true colour.
func RGB(r, g, b uint8) Color { return Color{Kind: RGBColor, R: r, G: g, B: b} }

// IsDefault reports whether c is the terminal's default colour.
func (c Color) IsDefault() bool { return c.Kind == DefaultColor }

var ansiNames = [16]string{
	"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white",
	"bright-black", "bright-red", "bright-green", "bright-yellow",
	"bright-blue", "bright-magenta", "bright-cyan", "bright-white",
}

// String is the colour's shortest unambiguous name: "default", a name for
// the 16 ("red", "bright-red"), the index for the 256-colour palette
// ("208"), "#rrggbb" for a true colour.
func (c Color) String() string {
	switch c.Kind {
	case ANSIColor:
		return ansiNames[c.Index&15]
	case PaletteColor:
		return strconv.Itoa(int(c.Index))
	case RGBColor:
		const hex = "0123456789abcdef"
		return string([]byte{'#', hex[c.R>>4], hex[c.R&15], hex[c.G>>4], hex[c.G&15], hex[c.B>>4], hex[c.B&15]})
	}
	return "default"
}

// Attr is a set of the cell attributes tmux keeps.
type Attr uint16

// The attributes, in the order tmux writes their codes. The underline
// styles exclude each other in a cell tmux made (setting one clears the
// others), as do nothing else.
const (
	Bold Attr = 1 << iota
	Dim
	Italic
	Underline
	Blink
	Reverse
	Hidden
	Strikethrough
	DoubleUnderline
	CurlyUnderline
	DottedUnderline
	DashedUnderline
	Overline
	// Charset marks a cell drawn from the DEC line-drawing set (ACS): its
	// character is an ASCII letter ('q', 'x', 'l'...) that the terminal
	// shows as a line piece (LineDrawing maps it). tmux writes it as SO/SI
	// in a capture, not as an SGR code.
	Charset

	// AnyUnderline is every underline style.
	AnyUnderline = Underline | DoubleUnderline | CurlyUnderline | DottedUnderline | DashedUnderline
)

var attrWords = []struct {
	a    Attr
	word string
}{
	{Bold, "bold"}, {Dim, "dim"}, {Italic, "italic"}, {Underline, "underline"},
	{DoubleUnderline, "double-underline"}, {CurlyUnderline, "curly-underline"},
	{DottedUnderline, "dotted-underline"}, {DashedUnderline, "dashed-underline"},
	{Blink, "blink"}, {Reverse, "reverse"}, {Hidden, "hidden"}, {Strikethrough, "strike"},
	{Overline, "overline"}, {Charset, "acs"},
}

// Words returns the attributes as short words ("bold", "reverse",
// "acs"...), in a fixed order.
func (a Attr) Words() []string {
	var out []string
	for _, w := range attrWords {
		if a&w.a != 0 {
			out = append(out, w.word)
		}
	}
	return out
}

// Style is how a cell is drawn. The zero value is the default style.
type Style struct {
	Fg, Bg Color
	// Underline is the underline's own colour (SGR 58); default: the
	// foreground's.
	Underline Color
	Attr      Attr
}

// IsDefault reports whether s is the default style (a blank cell of the
// default style looks like no cell at all).
func (s Style) IsDefault() bool { return s == Style{} }

// Cell is one character on the screen: Text is the character with any
// zero-width characters that combine with it (accents, a zero-width
// joiner and what it joins), Width the columns it covers (1, or 2 for a
// wide East Asian character or emoji, which tmux prints once).
type Cell struct {
	Text  string
	Width int
	Style Style
}

// Line is one line of the screen, from its first column. A capture ends a
// line at its last used cell, so a line is often shorter than the screen
// is wide; the columns beyond it are blank, in the default style.
type Line []Cell

// Text is the line as tmux's plain capture-pane prints it: the cells'
// characters with trailing spaces removed.
func (l Line) Text() string {
	var b strings.Builder
	for _, c := range l {
		b.WriteString(c.Text)
	}
	return strings.TrimRight(b.String(), " ")
}

// Width is the columns the line's cells cover.
func (l Line) Width() int {
	n := 0
	for _, c := range l {
		n += c.Width
	}
	return n
}

// Run is a stretch of a line's cells in one style: Col is its first
// column and Width the columns it covers, both in terminal cells.
type Run struct {
	Col, Width int
	Text       string
	Style      Style
}

// Runs cuts the line into maximal runs of one style, in column order.
func (l Line) Runs() []Run {
	var out []Run
	col := 0
	for i := 0; i < len(l); {
		j, w := i, 0
		var b strings.Builder
		for ; j < len(l) && l[j].Style == l[i].Style; j++ {
			b.WriteString(l[j].Text)
			w += l[j].Width
		}
		out = append(out, Run{Col: col, Width: w, Text: b.String(), Style: l[i].Style})
		col += w
		i = j
	}
	return out
}

// Cursor is where a terminal's cursor is, in cells from the top left of
// the screen, and whether it is shown.
type Cursor struct {
	X, Y   int
	Hidden bool
}

// Screen is a terminal screen: its lines from the top, and its cursor. A
// capture does not say where the cursor is: Parse leaves Cursor zero and
// the caller sets it (tmux's cursor_x, cursor_y, cursor_flag).
type Screen struct {
	Lines  []Line
	Cursor Cursor
}

// Text is the screen as tmux's plain capture-pane prints it, each line
// followed by a newline.
func (s *Screen) Text() string {
	var b strings.Builder
	for _, l := range s.Lines {
		b.WriteString(l.Text())
		b.WriteByte('\n')
	}
	return b.String()
}

// lineDrawing maps the DEC special graphics characters to Unicode: tmux
// 3.3a's table (tty-acs.c), which it draws them with on a UTF-8 client.
var lineDrawing = map[rune]rune{
	'+': '→', ',': '←', '-': '↑', '.': '↓', '0': '▮', '`': '◆', 'a': '▒',
	'b': '␉', 'c': '␌', 'd': '␍', 'e': '␊', 'f': '°', 'g': '±', 'h': '␤',
	'i': '␋', 'j': '┘', 'k': '┐', 'l': '┌', 'm': '└', 'n': '┼', 'o': '⎺',
	'p': '⎻', 'q': '─', 'r': '⎼', 's': '⎽', 't': '├', 'u': '┤', 'v': '┴',
	'w': '┬', 'x': '│', 'y': '≤', 'z': '≥', '{': 'π', '|': '≠', '}': '£',
	'~': '·',
}

// LineDrawing returns what a cell with the Charset attribute shows: its
// line-drawing character, or r itself where the set has none.
func LineDrawing(r rune) rune {
	if d, ok := lineDrawing[r]; ok {
		return d
	}
	return r
}
