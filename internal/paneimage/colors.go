package paneimage

import (
	"image/color"

	"github.com/tmux-mcp/tmux-mcp/internal/termgrid"
)

// The colours a screen is drawn in. A capture names colours the way the
// program chose them (the 16 named ones, the 256-colour palette, true
// colour) and the terminal decides what they look like; these are xterm's
// defaults, on a dark background as most terminals start.
var (
	// DefaultFg is the terminal's default foreground (xterm's colour 7).
	DefaultFg = color.RGBA{0xe5, 0xe5, 0xe5, 0xff}
	// DefaultBg is the terminal's default background (colour 0).
	DefaultBg = color.RGBA{0x00, 0x00, 0x00, 0xff}
)

// ansi16 are xterm's 16 named colours.
var ansi16 = [16]color.RGBA{
	{0x00, 0x00, 0x00, 0xff}, {0xcd, 0x00, 0x00, 0xff}, {0x00, 0xcd, 0x00, 0xff}, {0xcd, 0xcd, 0x00, 0xff},
	{0x00, 0x00, 0xee, 0xff}, {0xcd, 0x00, 0xcd, 0xff}, {0x00, 0xcd, 0xcd, 0xff}, {0xe5, 0xe5, 0xe5, 0xff},
	{0x7f, 0x7f, 0x7f, 0xff}, {0xff, 0x00, 0x00, 0xff}, {0x00, 0xff, 0x00, 0xff}, {0xff, 0xff, 0x00, 0xff},
	{0x5c, 0x5c, 0xff, 0xff}, {0xff, 0x00, 0xff, 0xff}, {0x00, 0xff, 0xff, 0xff}, {0xff, 0xff, 0xff, 0xff},
}

// RGB is the colour c is drawn in, def for the default colour. The
// 256-colour palette is xterm's: the 16 named colours, a 6×6×6 cube and 24
// greys.
func RGB(c termgrid.Color, def color.RGBA) color.RGBA {
	switch c.Kind {
	case termgrid.ANSIColor:
		return ansi16[c.Index&15]
	case termgrid.PaletteColor:
		i := int(c.Index)
		switch {
		case i < 16:
			return ansi16[i]
		case i < 232:
			i -= 16
			return color.RGBA{cubeLevel(i / 36), cubeLevel(i / 6 % 6), cubeLevel(i % 6), 0xff}
		default:
			g := uint8(8 + 10*(i-232))
			return color.RGBA{g, g, g, 0xff}
		}
	case termgrid.RGBColor:
		return color.RGBA{c.R, c.G, c.B, 0xff}
	}
	return def
}

func cubeLevel(n int) uint8 {
	if n == 0 {
		return 0
	}
	return uint8(55 + 40*n)
}

// mix is a + (b-a)·k/n, channel by channel: the colour a pixel covered k/n
// by a shows over b is mix(b, a, k, n).
func mix(a, b color.RGBA, k, n int) color.RGBA {
	f := func(x, y uint8) uint8 { return uint8((int(x)*(n-k) + int(y)*k + n/2) / n) }
	return color.RGBA{f(a.R, b.R), f(a.G, b.G), f(a.B, b.B), 0xff}
}

// cellColors are the colours a cell is drawn in: what its style says, with
// reverse video, dim and hidden applied, and the cursor (a block: the
// cell in reverse) where it stands.
func cellColors(st termgrid.Style, cursor bool) (fg, bg, ul color.RGBA, glyph bool) {
	fgc := st.Fg
	if st.Attr&termgrid.Bold != 0 && fgc.Kind == termgrid.ANSIColor && fgc.Index < 8 {
		// Bold in one of the first eight colours shows its bright
		// twin, as xterm does (boldColors): a bold blue prompt is
		// #5c5cff, readable on black, not #0000ee.
		fgc = termgrid.ANSI(fgc.Index + 8)
	}
	fg, bg = RGB(fgc, DefaultFg), RGB(st.Bg, DefaultBg)
	if st.Attr&termgrid.Reverse != 0 {
		fg, bg = bg, fg
	}
	if st.Attr&termgrid.Dim != 0 {
		fg = mix(bg, fg, 1, 2)
	}
	glyph = st.Attr&termgrid.Hidden == 0
	if cursor {
		fg, bg = bg, fg
	}
	ul = fg
	if !st.Underline.IsDefault() {
		ul = RGB(st.Underline, fg)
	}
	return fg, bg, ul, glyph
}

// nearest256 is the colour of the 256-colour palette's cube or grey ramp
// nearest to c.
func nearest256(c color.RGBA) color.RGBA {
	level := func(v uint8) uint8 {
		best := uint8(0)
		for n := range 6 {
			if d, b := absDiff(cubeLevel(n), v), absDiff(best, v); d < b {
				best = cubeLevel(n)
			}
		}
		return best
	}
	cube := color.RGBA{level(c.R), level(c.G), level(c.B), 0xff}
	avg := (int(c.R) + int(c.G) + int(c.B)) / 3
	g := uint8(8 + 10*min(max((avg-3)/10, 0), 23))
	grey := color.RGBA{g, g, g, 0xff}
	if dist(grey, c) < dist(cube, c) {
		return grey
	}
	return cube
}

func absDiff(a, b uint8) int { return max(int(a)-int(b), int(b)-int(a)) }

func dist(a, b color.RGBA) int {
	r, g, bl := absDiff(a.R, b.R), absDiff(a.G, b.G), absDiff(a.B, b.B)
	return r*r + g*g + bl*bl
}
