package termgrid

import "strconv"

// AppendANSI appends to dst the escape sequences that draw s on a terminal
// that starts in its default state: the screen is cleared, each line is
// drawn from the first column of its row, and the cursor is left where
// s.Cursor says, shown or hidden, in the default style. It is how a
// recording starts from a pane's current screen.
//
// Drawn into a tmux pane of the screen's size, it rebuilds the grid tmux
// holds, down to which cells are used: "capture-pane -p -e -N" of that
// pane prints what it printed for the pane s was captured from (tmux skips
// writing a blank default cell onto an unused one, so the blank cells that
// end a line are written over a placeholder to make tmux keep them).
func (s *Screen) AppendANSI(dst []byte) []byte {
	dst = append(dst, "\x1b[0m\x1b(B\x1b[H\x1b[2J"...)
	for y, l := range s.Lines {
		if len(l) == 0 {
			continue
		}
		dst = append(dst, "\x1b["...)
		dst = strconv.AppendInt(dst, int64(y+1), 10)
		dst = append(dst, 'H')
		// Blank default cells at the end of the line.
		end := len(l)
		for end > 0 && l[end-1].Text == " " && l[end-1].Style.IsDefault() {
			end--
		}
		var cur Style
		col := 0
		for _, c := range l[:end] {
			dst = appendStyle(dst, cur, c.Style)
			cur = c.Style
			dst = append(dst, c.Text...)
			col += c.Width
		}
		dst = appendStyle(dst, cur, Style{})
		if n := len(l) - end; n > 0 {
			for range n {
				dst = append(dst, '.')
			}
			// Back to the first blank by column: after the last column a
			// terminal's cursor waits on it, so a relative move would be
			// one short.
			dst = append(dst, "\x1b["...)
			dst = strconv.AppendInt(dst, int64(col+1), 10)
			dst = append(dst, 'G')
			for range n {
				dst = append(dst, ' ')
			}
		}
	}
	dst = append(dst, "\x1b["...)
	dst = strconv.AppendInt(dst, int64(s.Cursor.Y+1), 10)
	dst = append(dst, ';')
	dst = strconv.AppendInt(dst, int64(s.Cursor.X+1), 10)
	dst = append(dst, 'H')
	if s.Cursor.Hidden {
		return append(dst, "\x1b[?25l"...)
	}
	return append(dst, "\x1b[?25h"...)
}

// appendStyle appends what changes the terminal's style from cur to next:
// the line-drawing set chosen or left (ESC ( 0, ESC ( B) and one SGR that
// resets and sets the whole style, when they differ.
func appendStyle(dst []byte, cur, next Style) []byte {
	if cur.Attr&Charset != next.Attr&Charset {
		if next.Attr&Charset != 0 {
			dst = append(dst, "\x1b(0"...)
		} else {
			dst = append(dst, "\x1b(B"...)
		}
	}
	cur.Attr &^= Charset
	next.Attr &^= Charset
	if cur == next {
		return dst
	}
	return appendSGR(dst, next)
}

// sgrCodes are the attributes' SGR codes for a terminal (tmux reads the
// underline styles in the colon form).
var sgrCodes = []struct {
	a    Attr
	code string
}{
	{Bold, "1"}, {Dim, "2"}, {Italic, "3"}, {Underline, "4"}, {Blink, "5"},
	{Reverse, "7"}, {Hidden, "8"}, {Strikethrough, "9"}, {DoubleUnderline, "4:2"},
	{CurlyUnderline, "4:3"}, {DottedUnderline, "4:4"}, {DashedUnderline, "4:5"},
	{Overline, "53"},
}

// appendSGR appends one SGR that sets exactly st (its character set
// aside), starting from a reset.
func appendSGR(dst []byte, st Style) []byte {
	dst = append(dst, "\x1b[0"...)
	for _, c := range sgrCodes {
		if st.Attr&c.a != 0 {
			dst = append(dst, ';')
			dst = append(dst, c.code...)
		}
	}
	dst = appendColor(dst, st.Fg, 30, 90, 38)
	dst = appendColor(dst, st.Bg, 40, 100, 48)
	dst = appendColor(dst, st.Underline, -1, -1, 58)
	return append(dst, 'm')
}

// appendColor appends ";" and c's SGR parameters: base+i for the first 8
// named colours, bright+i-8 for the other 8, ext;5;N and ext;2;R;G;B
// beyond them. A default colour needs nothing after the reset. There is no
// named form for the underline colour: tmux keeps a named one as a palette
// index, and so does this.
func appendColor(dst []byte, c Color, base, bright, ext int) []byte {
	num := func(n int) { dst = strconv.AppendInt(append(dst, ';'), int64(n), 10) }
	switch {
	case c.Kind == ANSIColor && base >= 0 && c.Index < 8:
		num(base + int(c.Index))
	case c.Kind == ANSIColor && base >= 0:
		num(bright + int(c.Index) - 8)
	case c.Kind == ANSIColor, c.Kind == PaletteColor:
		num(ext)
		num(5)
		num(int(c.Index))
	case c.Kind == RGBColor:
		num(ext)
		num(2)
		num(int(c.R))
		num(int(c.G))
		num(int(c.B))
	}
	return dst
}
