// Package paneimage draws a terminal screen (termgrid.Screen: cells with
// their styles, and the cursor) as a picture, as a terminal would show
// it: colours (the 16 named ones, the 256-colour palette, true colour),
// bold and italic faces, underlines, strike-through, reverse video, dim,
// hidden text, wide characters over two cells and the cursor as a block.
// It is pure Go with the fonts embedded: a PNG costs no process and no
// font on the machine.
//
// The picture is paletted, which keeps the PNG small: nearly every screen
// has far fewer than 256 colours, even with the few steps of coverage its
// glyphs' edges are drawn with. A screen of more (a true-colour gradient)
// is drawn with sharp edges, then with its colours rounded to the
// 256-colour palette, as tmux does for a terminal without true colour.
package paneimage

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"unicode/utf8"

	"github.com/tmux-mcp/tmux-mcp/internal/termgrid"
)

// The range of Options.Scale.
const (
	MinScale = 0.5
	MaxScale = 4
)

// MaxPixels bounds a picture's size, width times height: a huge pane at a
// large scale is refused rather than allocating hundreds of megabytes.
const MaxPixels = 12_000_000

// Options say how to draw a screen.
type Options struct {
	// Scale multiplies the cell size; 0 means 1, where a cell is 7×15
	// pixels (Go Mono at 12 px). From MinScale to MaxScale.
	Scale float64
}

// Image is a screen drawn and encoded.
type Image struct {
	PNG           []byte
	Width, Height int // pixels
	// CellWidth and CellHeight are one cell's size in pixels: the cell
	// at column x, row y starts at pixel (x·CellWidth, y·CellHeight).
	CellWidth, CellHeight int
	// Smooth is whether glyph edges are antialiased, Approximate whether
	// colours were rounded to the 256-colour palette: both say how a
	// screen of more than 256 colours was made to fit (see stages).
	Smooth, Approximate bool
}

// CellSize is the size of a cell in pixels at a scale.
func CellSize(scale float64) (w, h int, err error) {
	if err := CheckScale(scale); err != nil {
		return 0, 0, err
	}
	s, err := sizerFor(orOne(scale))
	if err != nil {
		return 0, 0, err
	}
	return s.cellW, s.cellH, nil
}

func orOne(scale float64) float64 {
	if scale == 0 {
		return 1
	}
	return scale
}

// ErrScale is the error of a scale out of range.
var ErrScale = fmt.Errorf("scale must be from %g to %g", float64(MinScale), float64(MaxScale))

// CheckScale reports a scale out of range (0 is the default, 1) as an
// error wrapping ErrScale.
func CheckScale(scale float64) error {
	if scale != 0 && !(scale >= MinScale && scale <= MaxScale) { // NaN fails too
		return fmt.Errorf("%w, got %g", ErrScale, scale)
	}
	return nil
}

// ErrTooLarge is the error of a picture over MaxPixels.
var ErrTooLarge = errors.New("picture too large")

// Render draws a screen of cols×rows cells. Lines past rows and cells
// past cols are not drawn; missing ones are blank in the default colours.
func Render(s *termgrid.Screen, cols, rows int, opt Options) (*image.Paletted, error) {
	img, _, err := render(s, cols, rows, opt, stages)
	return img, err
}

func render(s *termgrid.Screen, cols, rows int, opt Options, stages []stage) (*image.Paletted, stage, error) {
	if err := CheckScale(opt.Scale); err != nil {
		return nil, stage{}, err
	}
	if cols <= 0 || rows <= 0 {
		return nil, stage{}, fmt.Errorf("paneimage: screen of %d×%d cells", cols, rows)
	}
	sz, err := sizerFor(orOne(opt.Scale))
	if err != nil {
		return nil, stage{}, err
	}
	w, h := cols*sz.cellW, rows*sz.cellH
	if w > MaxPixels/h {
		return nil, stage{}, fmt.Errorf("%w: %d×%d cells of %d×%d pixels is over %d pixels", ErrTooLarge, cols, rows, sz.cellW, sz.cellH, MaxPixels)
	}
	for _, st := range stages {
		c := newCanvas(w, h, st)
		if drawScreen(c, sz, s, cols, rows) {
			return c.image(), st, nil
		}
	}
	// Not reached with stages: its last draws in at most the 240
	// colours of the palette's cube and greys.
	return nil, stage{}, errors.New("paneimage: the screen's colours do not fit a palette")
}

// PNG draws a screen (Render) and encodes it as a PNG.
func PNG(s *termgrid.Screen, cols, rows int, opt Options) (*Image, error) {
	img, st, err := render(s, cols, rows, opt, stages)
	if err != nil {
		return nil, err
	}
	b, err := encode(img)
	if err != nil {
		return nil, err
	}
	if sc := orOne(opt.Scale); st.aa > 1 && float64(len(b)) > min(SharpenAbove*sc*sc, MaxSmooth) {
		// Smooth edges cost about half again as many bytes: a dense
		// screen is drawn sharp instead, which hinted Go Mono reads as
		// well.
		var sharper []stage
		for _, later := range stages {
			if later.aa == 1 && (later.approx || !st.approx) {
				sharper = append(sharper, later)
			}
		}
		sharp, sst, err := render(s, cols, rows, opt, sharper)
		if err != nil {
			return nil, err
		}
		if sb, err := encode(sharp); err == nil && len(sb) < len(b) {
			b, st = sb, sst
		}
	}
	sz, _ := sizerFor(orOne(opt.Scale))
	return &Image{PNG: b, Width: img.Bounds().Dx(), Height: img.Bounds().Dy(),
		CellWidth: sz.cellW, CellHeight: sz.cellH, Smooth: st.aa > 1, Approximate: st.approx}, nil
}

// SharpenAbove is the PNG size at scale 1 over which a screen drawn with
// smooth glyph edges is drawn again with sharp ones: a full 200×50 screen
// of dense coloured text is 160 KB smooth and 110 KB sharp at scale 1. It
// grows with the picture's area (the square of the scale), up to
// MaxSmooth, past which a tool answer's base64 nears the 1 MB result cap.
const SharpenAbove = 128 << 10

// MaxSmooth is the most a smooth picture may be at any scale.
const MaxSmooth = 640 << 10

func encode(img image.Image) ([]byte, error) {
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return nil, fmt.Errorf("paneimage: encoding PNG: %w", err)
	}
	return b.Bytes(), nil
}

// drawScreen draws every cell; false when the canvas ran out of colours.
func drawScreen(c *canvas, sz *sizer, s *termgrid.Screen, cols, rows int) bool {
	cur := s.Cursor
	showCursor := !cur.Hidden && cur.X >= 0 && cur.X < cols && cur.Y >= 0 && cur.Y < rows
	for y := range rows {
		var line termgrid.Line
		if y < len(s.Lines) {
			line = s.Lines[y]
		}
		x := 0
		for _, cell := range line {
			if x >= cols {
				break
			}
			w := max(cell.Width, 1)
			onCursor := showCursor && cur.Y == y && cur.X >= x && cur.X < x+w
			if !drawCell(c, sz, cell, x, y, w, onCursor) {
				return false
			}
			x += w
		}
		blank := termgrid.Cell{Text: " ", Width: 1}
		for ; x < cols; x++ {
			if !drawCell(c, sz, blank, x, y, 1, showCursor && cur.Y == y && cur.X == x) {
				return false
			}
		}
	}
	return true
}

// drawCell draws one cell w columns wide at column x, row y.
func drawCell(c *canvas, sz *sizer, cell termgrid.Cell, x, y, w int, cursor bool) bool {
	st := cell.Style
	fg, bg, ulColor, glyph := cellColors(st, cursor)
	px, py := x*sz.cellW, y*sz.cellH
	lut, ok := c.lut(fg, bg)
	if !ok {
		return false
	}
	text := cell.Text
	if st.Attr&termgrid.Charset != 0 {
		if r, n := utf8.DecodeRuneInString(text); n == len(text) {
			text = string(termgrid.LineDrawing(r))
		}
	}
	if !glyph || text == "" || text == " " {
		c.fill(px, py, w*sz.cellW, sz.cellH, lut, 0)
	} else {
		var face uint8
		if st.Attr&termgrid.Bold != 0 {
			face |= faceBold
		}
		if st.Attr&termgrid.Italic != 0 {
			face |= faceItalic
		}
		c.blit(px, py, sz.glyph(text, face, w), lut)
	}
	return decorate(c, sz, st.Attr, fg, ulColor, bg, px, py, w*sz.cellW)
}

// decorate draws the lines of a cell's style: underlines in their five
// forms (in the underline colour), strike-through and overline.
func decorate(c *canvas, sz *sizer, a termgrid.Attr, fg, ul, bg color.RGBA, px, py, width int) bool {
	if a&(termgrid.AnyUnderline|termgrid.Strikethrough|termgrid.Overline) == 0 {
		return true
	}
	t := sz.stroke
	line := func(col color.RGBA, y int, on func(x int) bool) bool {
		lut, ok := c.lut(col, bg)
		if !ok {
			return false
		}
		y = min(y, sz.cellH-t)
		for x := range width {
			if on(x) {
				c.fill(px+x, py+y, 1, t, lut, levels)
			}
		}
		return true
	}
	solid := func(int) bool { return true }
	under := min(sz.ascent+t, sz.cellH-t)
	ok := true
	switch {
	case a&termgrid.DoubleUnderline != 0:
		ok = line(ul, under-t, solid) && line(ul, under+t, solid)
	case a&termgrid.CurlyUnderline != 0:
		ok = line(ul, under-t, func(x int) bool { return x/(2*t)%2 == 0 }) &&
			line(ul, under, func(x int) bool { return x/(2*t)%2 == 1 })
	case a&termgrid.DottedUnderline != 0:
		ok = line(ul, under, func(x int) bool { return x/t%2 == 0 })
	case a&termgrid.DashedUnderline != 0:
		ok = line(ul, under, func(x int) bool { return x/t%4 != 3 })
	case a&termgrid.Underline != 0:
		ok = line(ul, under, solid)
	}
	if ok && a&termgrid.Strikethrough != 0 {
		ok = line(fg, sz.ascent-sz.cellH/4, solid)
	}
	if ok && a&termgrid.Overline != 0 {
		ok = line(fg, 0, solid)
	}
	return ok
}

// A stage is a way to fit a screen's colours in a palette of 256: with
// aa steps of antialiasing (1: none), and with every colour rounded to
// the 256-colour palette or not.
type stage struct {
	aa     int
	approx bool
}

// stages are tried in order until the screen's colours fit: exact
// colours with smooth glyph edges (one step between background and
// foreground: four look the same at this size and cost a third more
// bytes), as nearly every screen is drawn; then sharp edges; then, for a
// screen of hundreds of true colours (a gradient), its colours rounded to
// the 256-colour palette as tmux itself does for a terminal without true
// colour, which always fits once the edges are sharp.
var stages = []stage{{2, false}, {1, false}, {2, true}, {1, true}}

// canvas is the picture being drawn: one palette index a pixel.
type canvas struct {
	w, h    int
	stage   stage
	pix     []uint8
	palette color.Palette
	index   map[color.RGBA]uint8
	luts    map[[2]color.RGBA]*lut
}

// lut is a cell's colours by coverage step: the palette index of what a
// pixel covered k/levels by the foreground shows over the background.
type lut [levels + 1]uint8

func newCanvas(w, h int, st stage) *canvas {
	return &canvas{w: w, h: h, stage: st, pix: make([]uint8, w*h),
		index: map[color.RGBA]uint8{}, luts: map[[2]color.RGBA]*lut{}}
}

// lut returns the steps from bg to fg; false when the palette has no
// room for their colours.
func (c *canvas) lut(fg, bg color.RGBA) (*lut, bool) {
	key := [2]color.RGBA{fg, bg}
	if l, ok := c.luts[key]; ok {
		return l, true
	}
	if c.stage.approx {
		fg, bg = nearest256(fg), nearest256(bg)
	}
	l := &lut{}
	aa := c.stage.aa
	for k := range levels + 1 {
		col := mix(bg, fg, (k*aa+levels/2)/levels, aa)
		i, ok := c.index[col]
		if !ok {
			if len(c.palette) == 256 {
				return nil, false
			}
			i = uint8(len(c.palette))
			c.palette = append(c.palette, col)
			c.index[col] = i
		}
		l[k] = i
	}
	c.luts[key] = l
	return l, true
}

// fill paints a rectangle, clipped, in step k of l.
func (c *canvas) fill(x0, y0, w, h int, l *lut, k uint8) {
	x1, y1 := min(x0+w, c.w), min(y0+h, c.h)
	for y := y0; y < y1; y++ {
		row := c.pix[y*c.w+x0 : y*c.w+x1]
		for i := range row {
			row[i] = l[k]
		}
	}
}

// blit paints a glyph's mask at (x0, y0), clipped.
func (c *canvas) blit(x0, y0 int, m *mask, l *lut) {
	w := min(m.w, c.w-x0)
	for y := 0; y < m.h && y0+y < c.h; y++ {
		src := m.a[y*m.w : y*m.w+w]
		dst := c.pix[(y0+y)*c.w+x0:]
		for x, k := range src {
			dst[x] = l[k]
		}
	}
}

func (c *canvas) image() *image.Paletted {
	pal := c.palette
	if len(pal) == 0 {
		pal = color.Palette{DefaultBg}
	}
	return &image.Paletted{Pix: c.pix, Stride: c.w, Rect: image.Rect(0, 0, c.w, c.h), Palette: pal}
}
