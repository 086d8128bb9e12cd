package paneimage

import (
	"image"
	"math"

	"golang.org/x/image/vector"
)

// Box drawing (U+2500–U+257F), block elements (U+2580–U+259F), braille
// (U+2800–U+28FF) and the triangles of prompts and menus (Powerline's
// U+E0B0–U+E0B3, ▲ ▶ ▼ ◀) are drawn here rather than taken from the font:
// Go Mono has 40 of the 128 box-drawing characters, 8 of the 32 blocks and
// none of the rest, and a font's line pieces rarely meet across cells,
// where a TUI's frames, bars and graphs need them to. Each is drawn to
// fill its cell exactly, so lines join from cell to cell and blocks tile.

// Arm weights of a box-drawing character.
const (
	none = iota
	light
	heavy
	double
)

// boxArms lists U+2500–U+257F, four arms each, up right down left:
// '.' none, 'l' light, 'h' heavy, 'd' double. The dashed lines are their
// solid forms here (dashes says how many dashes); the arcs (U+256D–U+2570)
// and the diagonals (U+2571–U+2573, "x") are drawn apart, the arcs' rows
// saying which arms they join.
const boxArms = "" +
	".l.l" + ".h.h" + "l.l." + "h.h." + ".l.l" + ".h.h" + "l.l." + "h.h." + // 2500
	".l.l" + ".h.h" + "l.l." + "h.h." + ".ll." + ".hl." + ".lh." + ".hh." + // 2508
	"..ll" + "..lh" + "..hl" + "..hh" + "ll.." + "lh.." + "hl.." + "hh.." + // 2510
	"l..l" + "l..h" + "h..l" + "h..h" + "lll." + "lhl." + "hll." + "llh." + // 2518
	"hlh." + "hhl." + "lhh." + "hhh." + "l.ll" + "l.lh" + "h.ll" + "l.hl" + // 2520
	"h.hl" + "h.lh" + "l.hh" + "h.hh" + ".lll" + ".llh" + ".hll" + ".hlh" + // 2528
	".lhl" + ".lhh" + ".hhl" + ".hhh" + "ll.l" + "ll.h" + "lh.l" + "lh.h" + // 2530
	"hl.l" + "hl.h" + "hh.l" + "hh.h" + "llll" + "lllh" + "lhll" + "lhlh" + // 2538
	"hlll" + "llhl" + "hlhl" + "hllh" + "hhll" + "llhh" + "lhhl" + "hhlh" + // 2540
	"lhhh" + "hlhh" + "hhhl" + "hhhh" + ".l.l" + ".h.h" + "l.l." + "h.h." + // 2548
	".d.d" + "d.d." + ".dl." + ".ld." + ".dd." + "..ld" + "..dl" + "..dd" + // 2550
	"ld.." + "dl.." + "dd.." + "l..d" + "d..l" + "d..d" + "ldl." + "dld." + // 2558
	"ddd." + "l.ld" + "d.dl" + "d.dd" + ".dld" + ".ldl" + ".ddd" + "ld.d" + // 2560
	"dl.l" + "dd.d" + "ldld" + "dldl" + "dddd" + ".ll." + "..ll" + "l..l" + // 2568
	"ll.." + "xxxx" + "xxxx" + "xxxx" + "...l" + "l..." + ".l.." + "..l." + // 2570
	"...h" + "h..." + ".h.." + "..h." + ".h.l" + "l.h." + ".l.h" + "h.l." // 2578

// dashes is how many dashes a dashed box-drawing line has (0: solid).
func dashes(r rune) int {
	switch {
	case r >= 0x2504 && r <= 0x2507:
		return 3
	case r >= 0x2508 && r <= 0x250b:
		return 4
	case r >= 0x254c && r <= 0x254f:
		return 2
	}
	return 0
}

// shape is an 8-bit coverage mask of w×h pixels.
type shape struct {
	w, h int
	a    []uint8
}

func newShape(w, h int) *shape { return &shape{w, h, make([]uint8, w*h)} }

// rect covers [x0,x1)×[y0,y1), clipped, with alpha v (the most of what is
// there and v).
func (s *shape) rect(x0, y0, x1, y1 int, v uint8) {
	x0, y0 = max(x0, 0), max(y0, 0)
	x1, y1 = min(x1, s.w), min(y1, s.h)
	for y := y0; y < y1; y++ {
		row := s.a[y*s.w : y*s.w+s.w]
		for x := x0; x < x1; x++ {
			row[x] = max(row[x], v)
		}
	}
}

// procedural draws the characters this file owns into a w×h cell, with
// light lines t pixels thick; ok is false for any other character.
func procedural(r rune, w, h, t int) (s *shape, ok bool) {
	switch {
	case r >= 0x2500 && r <= 0x257f:
		s = newShape(w, h)
		switch {
		case r >= 0x2571 && r <= 0x2573:
			diagonals(s, r, t)
		case r >= 0x256d && r <= 0x2570:
			arc(s, r, t)
		default:
			box(s, r, t)
		}
	case r >= 0x2580 && r <= 0x259f:
		s = newShape(w, h)
		block(s, r)
	case r >= 0x2800 && r <= 0x28ff:
		s = newShape(w, h)
		braille(s, r)
	case triangles[r] != nil:
		s = newShape(w, h)
		triangle(s, triangles[r], t)
	default:
		return nil, false
	}
	return s, true
}

// box draws a line piece from its arms: each arm from the cell's edge to
// its centre, a heavy arm twice as thick, a double arm two light lines
// with a light line's gap, joined as the pieces of a frame join.
func box(s *shape, r rune, t int) {
	code := boxArms[(r-0x2500)*4 : (r-0x2500)*4+4]
	var arm [4]int // up right down left
	for i := range arm {
		switch code[i] {
		case 'l':
			arm[i] = light
		case 'h':
			arm[i] = heavy
		case 'd':
			arm[i] = double
		}
	}
	const up, right, down, left = 0, 1, 2, 3
	cx, cy, d := s.w/2, s.h/2, t
	thick := func(wt int) int {
		if wt == heavy {
			return 2 * t
		}
		return t
	}
	// span is where a stroke of thickness th centred on c lies.
	span := func(c, th int) (int, int) { return c - th/2, c - th/2 + th }
	// across gives where a single or heavy arm meets the arms across
	// it (a, b) on an axis whose centre is c: the end of an arm coming
	// from the low side and the start of one from the high side. A double
	// across is met at its near line; otherwise the arm covers the
	// thickest line across, so the pieces join without a notch.
	across := func(c, a, b, own int) (end, start int) {
		if a == double || b == double {
			return c - d - t/2 + t, c + d - t/2
		}
		th := max(thick(a), thick(b), own)
		return c - th/2 + th, c - th/2
	}
	// inner is where a double arm's stroke on the side of arm a stops: at
	// the far line of a double across it, the centre of a single, else at
	// the far side so it turns the corner.
	inner := func(a int) int {
		switch a {
		case double:
			return d
		case none:
			return -d
		}
		return 0
	}
	n := dashes(r)
	dashed := func(x0, y0, x1, y1 int, horizontal bool) {
		if n == 0 {
			s.rect(x0, y0, x1, y1, 255)
			return
		}
		length := s.h
		if horizontal {
			length = s.w
		}
		for i := range n {
			a, b := i*length/n, i*length/n+max(1, length*2/(3*n))
			if horizontal {
				s.rect(max(x0, a), y0, min(x1, b), y1, 255)
			} else {
				s.rect(x0, max(y0, a), x1, min(y1, b), 255)
			}
		}
	}
	for i, wt := range arm {
		if wt == none {
			continue
		}
		vertical := i == up || i == down
		if wt != double {
			c0, c1 := span(cx, thick(wt))
			if !vertical {
				c0, c1 = span(cy, thick(wt))
			}
			yEnd, yStart := across(cy, arm[left], arm[right], thick(wt))
			xEnd, xStart := across(cx, arm[up], arm[down], thick(wt))
			switch i {
			case up:
				dashed(c0, 0, c1, yEnd, false)
			case down:
				dashed(c0, yStart, c1, s.h, false)
			case left:
				dashed(0, c0, xEnd, c1, true)
			case right:
				dashed(xStart, c0, s.w, c1, true)
			}
			continue
		}
		// A double arm: two light strokes at -d and +d from the centre
		// line, each stopping where the arm on its side says.
		for _, side := range []int{-1, 1} {
			switch i {
			case up, down:
				x0, x1 := span(cx+side*d, t)
				near := arm[left]
				if side > 0 {
					near = arm[right]
				}
				if i == up {
					s.rect(x0, 0, x1, cy-inner(near)+t-t/2, 255)
				} else {
					s.rect(x0, cy+inner(near)-t/2, x1, s.h, 255)
				}
			case left, right:
				y0, y1 := span(cy+side*d, t)
				near := arm[up]
				if side > 0 {
					near = arm[down]
				}
				if i == left {
					s.rect(0, y0, cx-inner(near)+t-t/2, y1, 255)
				} else {
					s.rect(cx+inner(near)-t/2, y0, s.w, y1, 255)
				}
			}
		}
	}
}

// diagonals draws U+2571 ╱, U+2572 ╲ and U+2573 ╳ corner to corner,
// antialiased.
func diagonals(s *shape, r rune, t int) {
	w, h, ht := float32(s.w), float32(s.h), float32(t)/2+0.25
	var z vector.Rasterizer
	z.Reset(s.w, s.h)
	line := func(x0, y0, x1, y1 float32) {
		z.MoveTo(x0-ht, y0)
		z.LineTo(x0+ht, y0)
		z.LineTo(x1+ht, y1)
		z.LineTo(x1-ht, y1)
		z.ClosePath()
	}
	if r != 0x2572 {
		line(w, 0, 0, h)
	}
	if r != 0x2571 {
		line(0, 0, w, h)
	}
	img := image.NewAlpha(image.Rect(0, 0, s.w, s.h))
	z.Draw(img, img.Bounds(), image.Opaque, image.Point{})
	for i, v := range img.Pix {
		s.a[i] = max(s.a[i], v)
	}
}

// arc draws a rounded corner, U+256D ╭ to U+2570 ╰: the two arms it joins,
// meeting in a quarter circle whose ends lie on the arms' centre lines,
// antialiased.
func arc(s *shape, r rune, t int) {
	cx, cy := s.w/2, s.h/2
	rad := max(1, min(s.w, s.h)/2)
	dx, dy := map[rune][2]int{0x256d: {1, 1}, 0x256e: {-1, 1}, 0x256f: {-1, -1}, 0x2570: {1, -1}}[r][0],
		map[rune][2]int{0x256d: {1, 1}, 0x256e: {-1, 1}, 0x256f: {-1, -1}, 0x2570: {1, -1}}[r][1]
	x0, y0 := cx-t/2, cy-t/2 // the arms' strokes start here, t wide
	if dx > 0 {
		s.rect(cx+rad, y0, s.w, y0+t, 255)
	} else {
		s.rect(0, y0, cx-rad+1, y0+t, 255)
	}
	if dy > 0 {
		s.rect(x0, cy+rad, x0+t, s.h, 255)
	} else {
		s.rect(x0, 0, x0+t, cy-rad+1, 255)
	}
	// The quarter circle: centred rad along both arms from the corner,
	// from the vertical arm's line to the horizontal arm's.
	fx, fy := float64(x0)+float64(t)/2, float64(y0)+float64(t)/2
	ox, oy := fx+float64(dx*rad), fy+float64(dy*rad)
	a0 := math.Atan2(0, float64(-dx))
	a1 := math.Atan2(float64(-dy), 0)
	if a1-a0 > math.Pi {
		a1 -= 2 * math.Pi
	} else if a0-a1 > math.Pi {
		a1 += 2 * math.Pi
	}
	outer, inner := float64(rad)+float64(t)/2, float64(rad)-float64(t)/2
	const steps = 12
	pt := func(rr float64, i int) (float32, float32) {
		a := a0 + (a1-a0)*float64(i)/steps
		return float32(ox + rr*math.Cos(a)), float32(oy + rr*math.Sin(a))
	}
	var z vector.Rasterizer
	z.Reset(s.w, s.h)
	z.MoveTo(pt(outer, 0))
	for i := 1; i <= steps; i++ {
		z.LineTo(pt(outer, i))
	}
	for i := steps; i >= 0; i-- {
		z.LineTo(pt(inner, i))
	}
	z.ClosePath()
	img := image.NewAlpha(image.Rect(0, 0, s.w, s.h))
	z.Draw(img, img.Bounds(), image.Opaque, image.Point{})
	for i, v := range img.Pix {
		s.a[i] = max(s.a[i], v)
	}
}

// tri is a triangle: its corners as fractions of the cell (x, y), filled
// when solid, else its two sides from the first corner through the second
// to the third (a chevron).
type tri struct {
	pts   [][2]float32
	solid bool
}

// triangles are the triangles drawn as shapes.
var triangles = map[rune]*tri{
	0xe0b0: {[][2]float32{{0, 0}, {1, 0.5}, {0, 1}}, true},               // Powerline right
	0xe0b1: {[][2]float32{{0, 0}, {1, 0.5}, {0, 1}}, false},              // right chevron
	0xe0b2: {[][2]float32{{1, 0}, {0, 0.5}, {1, 1}}, true},               // Powerline left
	0xe0b3: {[][2]float32{{1, 0}, {0, 0.5}, {1, 1}}, false},              // left chevron
	0x25b2: {[][2]float32{{0.1, 0.75}, {0.5, 0.3}, {0.9, 0.75}}, true},   // ▲
	0x25b6: {[][2]float32{{0.15, 0.3}, {0.9, 0.53}, {0.15, 0.76}}, true}, // ▶
	0x25bc: {[][2]float32{{0.1, 0.3}, {0.5, 0.75}, {0.9, 0.3}}, true},    // ▼
	0x25c0: {[][2]float32{{0.85, 0.3}, {0.1, 0.53}, {0.85, 0.76}}, true}, // ◀
}

// triangle fills a triangle or strokes its chevron t pixels wide,
// antialiased.
func triangle(s *shape, tri *tri, t int) {
	w, h := float32(s.w), float32(s.h)
	p := func(i int) (float32, float32) { return tri.pts[i][0] * w, tri.pts[i][1] * h }
	var z vector.Rasterizer
	z.Reset(s.w, s.h)
	if tri.solid {
		z.MoveTo(p(0))
		z.LineTo(p(1))
		z.LineTo(p(2))
		z.ClosePath()
	} else {
		ht := float32(t) / 2
		for _, seg := range [][2]int{{0, 1}, {1, 2}} {
			x0, y0 := p(seg[0])
			x1, y1 := p(seg[1])
			z.MoveTo(x0-ht, y0)
			z.LineTo(x0+ht, y0)
			z.LineTo(x1+ht, y1)
			z.LineTo(x1-ht, y1)
			z.ClosePath()
		}
	}
	img := image.NewAlpha(image.Rect(0, 0, s.w, s.h))
	z.Draw(img, img.Bounds(), image.Opaque, image.Point{})
	for i, v := range img.Pix {
		s.a[i] = max(s.a[i], v)
	}
}

// block draws U+2580–U+259F: eighths, halves, quadrants and shades.
func block(s *shape, r rune) {
	w, h := s.w, s.h
	switch {
	case r == 0x2580: // upper half
		s.rect(0, 0, w, h/2, 255)
	case r >= 0x2581 && r <= 0x2588: // lower 1/8 .. full
		n := int(r - 0x2580)
		s.rect(0, h-(h*n+4)/8, w, h, 255)
	case r >= 0x2589 && r <= 0x258f: // left 7/8 .. 1/8
		n := int(0x2590 - r)
		s.rect(0, 0, (w*n+4)/8, h, 255)
	case r == 0x2590: // right half
		s.rect(w/2, 0, w, h, 255)
	case r >= 0x2591 && r <= 0x2593: // shades 25 50 75 %, dithered so
		// they stay apart whatever steps of coverage the picture has
		n := int(r - 0x2590) // of 4 pixels in a 2×2 square, lit
		for y := range h {
			for x := range w {
				if [4]int{0, 2, 3, 1}[(y%2)*2+x%2] < n {
					s.a[y*w+x] = 255
				}
			}
		}
	case r == 0x2594: // upper 1/8
		s.rect(0, 0, w, max(1, (h+4)/8), 255)
	case r == 0x2595: // right 1/8
		s.rect(w-max(1, (w+4)/8), 0, w, h, 255)
	default: // quadrants: bits upper-left, upper-right, lower-left, lower-right
		q := [...]uint8{0b0010, 0b0001, 0b1000, 0b1011, 0b1001, 0b1110, 0b1101, 0b0100, 0b0110, 0b0111}[r-0x2596]
		if q&0b1000 != 0 {
			s.rect(0, 0, w/2, h/2, 255)
		}
		if q&0b0100 != 0 {
			s.rect(w/2, 0, w, h/2, 255)
		}
		if q&0b0010 != 0 {
			s.rect(0, h/2, w/2, h, 255)
		}
		if q&0b0001 != 0 {
			s.rect(w/2, h/2, w, h, 255)
		}
	}
}

// braille draws the dots of U+2800–U+28FF on a 2×4 grid: bits 0-2 the left
// column's top three, 3-5 the right's, 6 and 7 the bottom row.
func braille(s *shape, r rune) {
	bits := int(r - 0x2800)
	d := max(1, min((s.w+2)/4, (s.h+4)/8)) // square dots, 2 px at scale 1
	dw, dh := d, d
	dot := [8][2]int{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}, {0, 3}, {1, 3}}
	for i, p := range dot {
		if bits&(1<<i) == 0 {
			continue
		}
		cx := s.w * (2*p[0] + 1) / 4
		cy := s.h * (2*p[1] + 1) / 8
		s.rect(cx-dw/2, cy-dh/2, cx-dw/2+dw, cy-dh/2+dh, 255)
	}
}

// placeholder is what a character no font here has looks like: a box
// outline filling the columns it takes (two for a wide one), so the
// layout stays readable and the gap is plain to see.
func placeholder(w, h, t int) *shape {
	s := newShape(w, h)
	x0, y0, x1, y1 := t, 2*t, w-t, h-2*t
	s.rect(x0, y0, x1, y0+t, 255)
	s.rect(x0, y1-t, x1, y1, 255)
	s.rect(x0, y0, x0+t, y1, 255)
	s.rect(x1-t, y0, x1, y1, 255)
	return s
}
