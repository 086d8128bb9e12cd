package termgrid

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
)

// What "capture-pane -p -e" prints (tmux 3.3a, grid_string_cells): each
// line's cells, their characters as stored (a wide character once, with
// no padding), each preceded by the codes that change the style from the
// previous cell's. The previous cell is carried across lines: a line
// starts in the style the last one ended in, and nothing resets it at a
// line's end. The codes are
//
//   - one SGR with the attributes newly set, led by 0 when any attribute
//     was removed (or the underline colour dropped): 1 2 3 4 5 7 8 9, and
//     4:2 to 4:5 for the underline styles; overline, 53, comes out as
//     "5:3" (tmux writes every two-digit code as tens:units);
//   - one SGR each for the foreground, background and underline colours
//     that changed (all of them after a 0): 30-37, 39, 90-97, 38;5;N,
//     38;2;R;G;B, the 4x/10x forms, 58;5;N and 58;2;R;G;B;
//   - SO (0x0e) and SI (0x0f) around line-drawing (ACS) characters.
//
// Parse reads any SGR the way tmux's input parser does (input.c), so a
// sequence tmux would never capture still means what it means to tmux,
// with two exceptions for the capture format: "5:3" is overline, and SGR 0
// leaves the character set alone (SO/SI carry it). Other escape and
// control sequences are skipped.

// Parse reads the output of "tmux capture-pane -p -e" (with -N, trailing
// blanks are kept as cells; without it tmux drops them) into a screen, one
// Line per captured line (SplitLines). A byte that is not valid UTF-8
// becomes a one-column cell of U+FFFD; tmux never captures one.
func Parse(capture []byte) *Screen {
	var p Parser
	s := &Screen{}
	for _, line := range SplitLines(capture) {
		s.Lines = append(s.Lines, p.Line(line))
	}
	return s
}

// SplitLines cuts a capture into its lines: a final newline ends the last
// line rather than starting another.
func SplitLines(capture []byte) [][]byte {
	return bytes.Split(bytes.TrimSuffix(capture, []byte("\n")), []byte("\n"))
}

// A Parser reads a capture's lines in order, carrying the style from cell
// to cell and line to line as tmux writes it. A caller that needs the
// cells of only some lines parses the lines before them with Skip, which
// keeps the style and makes no cells. The zero value is ready to use.
type Parser struct {
	style Style
}

// Line parses the next line into cells.
func (p *Parser) Line(b []byte) Line {
	l, _ := p.scan(b, true)
	return l
}

// Skip parses the next line for the style it leaves, making no cells.
func (p *Parser) Skip(b []byte) { p.scan(b, false) }

// Text is a captured line's text as tmux's plain capture prints it: what
// Line(b).Text() is, without making cells (and without the lines before:
// text does not depend on style).
func Text(b []byte) string {
	var p Parser
	_, text := p.scan(b, false)
	return strings.TrimRight(string(text), " ")
}

// scan reads one line: its cells when cells is set, else the characters
// the cells would hold.
func (p *Parser) scan(b []byte, cells bool) (Line, []byte) {
	var l Line
	var text []byte
	var src string // b as a string: cells' texts are slices of it
	if cells {
		src = string(b)
		l = make(Line, 0, utf8.RuneCount(b)) // at most one cell a character
	}
	// The last cell's text is src[start:end] while it is one stretch of
	// the line (start -1 once it is not).
	start, end := -1, -1
	joined := false // the last character was a zero-width joiner
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == 0x1b:
			i = p.escape(b, i+1)
			continue
		case c == 0x0e:
			p.style.Attr |= Charset
		case c == 0x0f:
			p.style.Attr &^= Charset
		case c < 0x20 || c == 0x7f:
			// No cell holds a control character.
		default:
			r, n := utf8.DecodeRune(b[i:])
			if !cells {
				text = utf8.AppendRune(text, r) // an invalid byte: U+FFFD
				i += n
				continue
			}
			ch := src[i : i+n]
			if r == utf8.RuneError && n == 1 {
				ch = string(utf8.RuneError)
			}
			w := runeWidth(r)
			// tmux combines a zero-width character, and whatever follows
			// a zero-width joiner, with the cell before it; at a line's
			// start there is none, and tmux drops the character (a
			// one-column cell stands for it here).
			switch last := len(l) - 1; {
			case (w == 0 || joined) && last >= 0 && start >= 0 && end == i && ch == src[i:i+n]:
				l[last].Text = src[start : i+n]
			case (w == 0 || joined) && last >= 0:
				l[last].Text += ch
				start = -1
			default:
				l = append(l, Cell{Text: ch, Width: max(w, 1), Style: p.style})
				start = i
				if ch != src[i:i+n] {
					start = -1
				}
			}
			i += n
			end = i
			joined = r == zwj
			continue
		}
		i++
	}
	if len(l) == 0 {
		l = nil // an empty line is nil, however it was made
	}
	return l, text
}

const zwj = '\u200d'

// escape skips the escape sequence whose ESC is just before b[i] and
// applies it if it is an SGR; it returns the index after it.
func (p *Parser) escape(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	if b[i] != '[' {
		// ESC, intermediates and a final byte (ESC ( B); no capture
		// holds one.
		for i < len(b) && b[i] >= 0x20 && b[i] < 0x30 {
			i++
		}
		return min(i+1, len(b))
	}
	i++
	start := i
	for i < len(b) && b[i] >= 0x20 && b[i] < 0x40 {
		i++ // parameters, intermediates, private markers
	}
	if i >= len(b) {
		return i
	}
	final := b[i]
	if final == 'm' {
		p.sgr(b[start:i])
	}
	if final < 0x40 || final > 0x7e {
		return i // not a final byte: the sequence ends here
	}
	return i + 1
}

// tmux's limits on a control sequence's parameters: a longer sequence is
// dropped whole.
const (
	maxParamBytes = 63
	maxParams     = 24 // a list reaching this many is dropped
	maxSubParams  = 8  // a colon parameter reaching this many is ignored
)

// param is one SGR parameter as tmux's input_split reads it.
type param struct {
	missing bool
	colon   []int // sub-parameters of a "a:b:c" parameter; -1 for an empty one
	num     int
	isColon bool
}

// splitParams splits an SGR's parameter bytes; ok is false where tmux
// drops the sequence (a private marker or intermediate, an overlong list, a
// number beyond 2^31-1).
func splitParams(b []byte) (ps []param, ok bool) {
	if len(b) > maxParamBytes {
		return nil, false
	}
	for _, c := range b {
		if c < '0' || c > ';' {
			return nil, false // '<' '=' '>' '?' or an intermediate
		}
	}
	if len(b) == 0 {
		return nil, true
	}
	for f := range bytes.SplitSeq(b, []byte(";")) {
		switch {
		case len(f) == 0:
			ps = append(ps, param{missing: true})
		case bytes.IndexByte(f, ':') >= 0:
			p := param{isColon: true}
			for sub := range bytes.SplitSeq(f, []byte(":")) {
				n := int64(-1)
				if len(sub) > 0 {
					var err error
					if n, err = strconv.ParseInt(string(sub), 10, 32); err != nil {
						p.colon = nil
						break
					}
				}
				p.colon = append(p.colon, int(n))
				if len(p.colon) == maxSubParams {
					p.colon = nil // tmux ignores the whole parameter
					break
				}
			}
			ps = append(ps, p)
		default:
			n, err := strconv.ParseInt(string(f), 10, 32)
			if err != nil {
				return nil, false
			}
			ps = append(ps, param{num: int(n)})
		}
		if len(ps) == maxParams {
			return nil, false
		}
	}
	return ps, true
}

// get is tmux's input_get: the parameter's number, def when it is absent
// or missing, -1 for a colon parameter; below min, min.
func get(ps []param, i, min, def int) int {
	if i >= len(ps) || ps[i].missing {
		return def
	}
	if ps[i].isColon {
		return -1
	}
	return max(ps[i].num, min)
}

// reset is SGR 0: the default style, keeping the character set.
func (p *Parser) reset() {
	p.style = Style{Attr: p.style.Attr & Charset}
}

// sgr applies one SGR sequence as tmux's input_csi_dispatch_sgr does.
func (p *Parser) sgr(b []byte) {
	ps, ok := splitParams(b)
	if !ok {
		return
	}
	if len(ps) == 0 {
		p.reset()
		return
	}
	st := &p.style
	for i := 0; i < len(ps); i++ {
		if ps[i].isColon {
			p.sgrColon(ps[i].colon)
			continue
		}
		n := get(ps, i, 0, 0)
		if n == 38 || n == 48 || n == 58 {
			i++
			switch get(ps, i, 0, -1) {
			case 2:
				r, g, bl := get(ps, i+1, 0, -1), get(ps, i+2, 0, -1), get(ps, i+3, 0, -1)
				if p.rgb(n, r, g, bl) {
					i += 3
				}
			case 5:
				p.palette(n, get(ps, i+1, 0, -1))
				i++
			}
			continue
		}
		switch {
		case n == 0:
			p.reset()
		case n == 1:
			st.Attr |= Bold
		case n == 2:
			st.Attr |= Dim
		case n == 3:
			st.Attr |= Italic
		case n == 4:
			st.Attr = st.Attr&^AnyUnderline | Underline
		case n == 5, n == 6:
			st.Attr |= Blink
		case n == 7:
			st.Attr |= Reverse
		case n == 8:
			st.Attr |= Hidden
		case n == 9:
			st.Attr |= Strikethrough
		case n == 21:
			st.Attr = st.Attr&^AnyUnderline | DoubleUnderline
		case n == 22:
			st.Attr &^= Bold | Dim
		case n == 23:
			st.Attr &^= Italic
		case n == 24:
			st.Attr &^= AnyUnderline
		case n == 25:
			st.Attr &^= Blink
		case n == 27:
			st.Attr &^= Reverse
		case n == 28:
			st.Attr &^= Hidden
		case n == 29:
			st.Attr &^= Strikethrough
		case n >= 30 && n <= 37:
			st.Fg = ANSI(uint8(n - 30))
		case n == 39:
			st.Fg = Color{}
		case n >= 40 && n <= 47:
			st.Bg = ANSI(uint8(n - 40))
		case n == 49:
			st.Bg = Color{}
		case n == 53:
			st.Attr |= Overline
		case n == 55:
			st.Attr &^= Overline
		case n == 59:
			st.Underline = Color{}
		case n >= 90 && n <= 97:
			st.Fg = ANSI(uint8(n - 90 + 8))
		case n >= 100 && n <= 107:
			st.Bg = ANSI(uint8(n - 100 + 8))
		}
	}
}

// set stores a colour for SGR 38 (foreground), 48 (background) or 58
// (underline).
func (p *Parser) set(which int, c Color) {
	switch which {
	case 38:
		p.style.Fg = c
	case 48:
		p.style.Bg = c
	case 58:
		p.style.Underline = c
	}
}

// palette is "38;5;N": an index out of range makes the foreground or
// background default (and leaves the underline colour alone).
func (p *Parser) palette(which, n int) {
	if n < 0 || n > 255 {
		if which != 58 {
			p.set(which, Color{})
		}
		return
	}
	p.set(which, Palette(uint8(n)))
}

// rgb is "38;2;R;G;B"; false (nothing set) when a component is missing or
// out of range.
func (p *Parser) rgb(which, r, g, b int) bool {
	for _, v := range []int{r, g, b} {
		if v < 0 || v > 255 {
			return false
		}
	}
	p.set(which, RGB(uint8(r), uint8(g), uint8(b)))
	return true
}

// sgrColon applies a colon parameter ("4:3", "38:2::R:G:B", "38:5:N") as
// tmux's input_csi_dispatch_sgr_colon does, and "5:3", which is how tmux
// 3.3a captures overline.
func (p *Parser) sgrColon(v []int) {
	n := len(v)
	if n == 0 {
		return
	}
	st := &p.style
	switch v[0] {
	case 4:
		if n != 2 {
			return
		}
		styles := []Attr{0, Underline, DoubleUnderline, CurlyUnderline, DottedUnderline, DashedUnderline}
		if v[1] >= 0 && v[1] < len(styles) {
			st.Attr = st.Attr&^AnyUnderline | styles[v[1]]
		}
		return
	case 5:
		if n == 2 && v[1] == 3 {
			st.Attr |= Overline
		}
		return
	case 38, 48, 58:
	default:
		return
	}
	if n < 2 {
		return
	}
	switch v[1] {
	case 2:
		if n < 3 {
			return
		}
		i := 3
		if n == 5 {
			i = 2
		}
		if n < i+3 {
			return
		}
		p.rgb(v[0], v[i], v[i+1], v[i+2])
	case 5:
		if n < 3 {
			return
		}
		p.palette(v[0], v[2])
	}
}
