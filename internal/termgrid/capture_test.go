package termgrid

import (
	"fmt"
	"slices"
	"strings"
)

// appendCapture writes s the way tmux 3.3a's "capture-pane -p -e -N"
// prints a grid (grid_string_cells and grid_string_cells_code, line by
// line, the previous cell carried across lines), with the final newline.
// It is the inverse the tests hold Parse to: for a capture tmux made,
// appendCapture(Parse(capture)) is the capture, byte for byte.
func appendCapture(dst []byte, s *Screen) []byte {
	var last Style
	for _, l := range s.Lines {
		for _, c := range l {
			dst = appendCaptureCodes(dst, last, c.Style)
			last = c.Style
			dst = append(dst, c.Text...)
		}
		dst = append(dst, '\n')
	}
	return dst
}

// captureAttrs are the attributes in the order grid_string_cells_code
// lists them, with the code it writes (two-digit codes as tens:units).
var captureAttrs = []struct {
	a    Attr
	code string
}{
	{Bold, "1"}, {Dim, "2"}, {Italic, "3"}, {Underline, "4"}, {Blink, "5"},
	{Reverse, "7"}, {Hidden, "8"}, {Strikethrough, "9"}, {DoubleUnderline, "4:2"},
	{CurlyUnderline, "4:3"}, {DottedUnderline, "4:4"}, {DashedUnderline, "4:5"},
	{Overline, "5:3"},
}

func appendCaptureCodes(dst []byte, last, st Style) []byte {
	lastAttr := last.Attr
	var codes []string
	removed := !last.Underline.IsDefault() && st.Underline.IsDefault()
	for _, a := range captureAttrs {
		if st.Attr&a.a == 0 && lastAttr&a.a != 0 {
			removed = true
		}
	}
	if removed {
		codes = append(codes, "0")
		lastAttr &= Charset
	}
	for _, a := range captureAttrs {
		if st.Attr&a.a != 0 && lastAttr&a.a == 0 {
			codes = append(codes, a.code)
		}
	}
	if len(codes) > 0 {
		dst = fmt.Appendf(dst, "\x1b[%sm", strings.Join(codes, ";"))
	}
	reset := len(codes) > 0 && codes[0] == "0"
	for _, pair := range [][2][]int{
		{captureColor(st.Fg, 30, 90, 38, 39), captureColor(last.Fg, 30, 90, 38, 39)},
		{captureColor(st.Bg, 40, 100, 48, 49), captureColor(last.Bg, 40, 100, 48, 49)},
		{captureColor(st.Underline, -1, -1, 58, -1), captureColor(last.Underline, -1, -1, 58, -1)},
	} {
		now, was := pair[0], pair[1]
		if len(now) != 0 && (!slices.Equal(now, was) || reset) {
			s := make([]string, len(now))
			for i, v := range now {
				s[i] = fmt.Sprint(v)
			}
			dst = fmt.Appendf(dst, "\x1b[%sm", strings.Join(s, ";"))
		}
	}
	if st.Attr&Charset != 0 && lastAttr&Charset == 0 {
		dst = append(dst, 0x0e)
	}
	if st.Attr&Charset == 0 && lastAttr&Charset != 0 {
		dst = append(dst, 0x0f)
	}
	return dst
}

// captureColor is grid_string_cells_fg/bg/us: the colour's parameters, or
// none (def < 0: the underline colour has no code for default).
func captureColor(c Color, base, bright, ext, def int) []int {
	switch c.Kind {
	case PaletteColor:
		return []int{ext, 5, int(c.Index)}
	case RGBColor:
		return []int{ext, 2, int(c.R), int(c.G), int(c.B)}
	case ANSIColor:
		if base < 0 {
			return nil
		}
		if c.Index < 8 {
			return []int{base + int(c.Index)}
		}
		return []int{bright + int(c.Index) - 8}
	}
	if def < 0 {
		return nil
	}
	return []int{def}
}
