package paneimage

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tmux-mcp/tmux-mcp/internal/termgrid"
)

var update = flag.Bool("update", false, "rewrite the golden PNGs in testdata")

// screen is a test screen: a styled capture as "tmux capture-pane -p -e"
// prints it (SGR codes, SO/SI around line drawing), its size and cursor.
type screen struct {
	name       string
	capture    string
	cols, rows int
	cursor     termgrid.Cursor
}

func (sc screen) parse() *termgrid.Screen {
	s := termgrid.Parse([]byte(sc.capture))
	s.Cursor = sc.cursor
	return s
}

const esc = "\x1b["

var hidden = termgrid.Cursor{Hidden: true}

// screens are the golden screens: each shows one feature.
var screens = []screen{
	{"plain", "$ echo hello, world\nhello, world\n$ ls\nREADME.md  go.mod  main.go\n$ ", 30, 6, termgrid.Cursor{X: 2, Y: 4}},
	{"ansi16", func() string {
		var b strings.Builder
		for i := range 8 {
			fmt.Fprintf(&b, "%s%dm fg%d %s%dm bg%d %s0m", esc, 30+i, i, esc, 40+i, i, esc)
			fmt.Fprintf(&b, "%s%dm fg%d %s%dm bg%d %s0m\n", esc, 90+i, 8+i, esc, 100+i, 8+i, esc)
		}
		return b.String()
	}(), 40, 8, hidden},
	{"palette256", func() string {
		var b strings.Builder
		for row := range 16 {
			for col := range 16 {
				fmt.Fprintf(&b, "%s48;5;%dm  ", esc, row*16+col)
			}
			fmt.Fprintf(&b, "%s0m %s38;5;%dmcolour %d%s0m\n", esc, esc, 16+row*13, 16+row*13, esc)
		}
		return b.String()
	}(), 48, 16, hidden},
	{"truecolor", func() string {
		var b strings.Builder
		for row := range 6 {
			for col := range 40 {
				fmt.Fprintf(&b, "%s48;2;%d;%d;%dm ", esc, col*6, row*40, 255-col*6)
			}
			fmt.Fprintf(&b, "%s0m\n", esc)
		}
		fmt.Fprintf(&b, "%s38;2;255;135;0mtrue orange%s0m %s38;2;0;175;255mtrue azure%s0m\n", esc, esc, esc, esc)
		return b.String()
	}(), 40, 7, hidden},
	{"attributes", "" +
		esc + "1mbold" + esc + "0m " + esc + "2mdim" + esc + "0m " + esc + "3mitalic" + esc + "0m " + esc + "1;3mbold-italic" + esc + "0m\n" +
		esc + "4munderline" + esc + "0m " + esc + "4:2mdouble" + esc + "0m " + esc + "4:3mcurly" + esc + "0m " + esc + "4:4mdotted" + esc + "0m " + esc + "4:5mdashed" + esc + "0m\n" +
		esc + "9mstrike" + esc + "0m " + esc + "5:3moverline" + esc + "0m " + esc + "8mhidden" + esc + "0m|" + esc + "4;58;5;196mred underline" + esc + "0m\n" +
		esc + "7m reverse video " + esc + "0m " + esc + "7;31mreverse red" + esc + "0m " + esc + "1;32mbold green" + esc + "0m\n",
		44, 4, hidden},
	{"wide", "CJK: 日本語 ok\nemoji: 😀 ok\nmixed|中|x|文|\n", 20, 3, termgrid.Cursor{X: 7, Y: 0}},
	{"boxdrawing", "" +
		"┌─┬─┐ ┏━┳━┓ ╔═╦═╗ ╭─╮\n" +
		"│a│b│ ┃ ┃ ┃ ║ ║ ║ │ │\n" +
		"├─┼─┤ ┣━╋━┫ ╠═╬═╣ ╰─╯\n" +
		"└─┴─┘ ┗━┻━┛ ╚═╩═╝ ╱╲╳\n" +
		"┄┅┆┇ ╌╍ ╒╤╕ ╓╥╖ ╞╪╡ ╟╫╢\n" +
		"▀▄█▌▐░▒▓ ▁▂▃▄▅▆▇█ ▏▎▍▌▋▊▉\n" +
		"▖▗▘▙▚▛▜▝▞▟ ⠁⠃⠇⡇⣇⣧⣷⣿ ⠿⣀\n" +
		"\x0elqqk\x0f \x0ex  x\x0f \x0emqqj\x0f acs\n", 26, 8, hidden},
	{"triangles", esc + "44;97m main " + esc + "34;42m\ue0b0" + esc + "30;42m ok " + esc + "32;49m\ue0b0" + esc + "0m \ue0b1 \ue0b3 ▲▶▼◀ ✓\n",
		24, 1, hidden},
	{"cursor-visible", "$ vim\n~\n~\n", 10, 3, termgrid.Cursor{X: 1, Y: 1}},
	{"cursor-hidden", "$ vim\n~\n~\n", 10, 3, termgrid.Cursor{X: 1, Y: 1, Hidden: true}},
	{"cursor-on-text", esc + "31mred" + esc + "0m text\n", 10, 1, termgrid.Cursor{X: 1, Y: 0}},
}

// Tolerance of a golden comparison: a pixel differs when a channel is
// off by more than maxChannelDiff, and a picture matches with at most
// maxDiffPixels (in thousandths of its pixels) differing, so a change of
// the rasteriser's rounding does not fail the test but a wrong colour,
// a missing glyph or a shifted cell does.
const (
	maxChannelDiff = 48
	maxDiffPermil  = 1
)

func TestGolden(t *testing.T) {
	for _, sc := range screens {
		t.Run(sc.name, func(t *testing.T) {
			img, err := PNG(sc.parse(), sc.cols, sc.rows, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := decode(t, img.PNG)
			if b := got.Bounds(); b.Dx() != sc.cols*img.CellWidth || b.Dy() != sc.rows*img.CellHeight {
				t.Fatalf("%v for %d×%d cells of %d×%d", b, sc.cols, sc.rows, img.CellWidth, img.CellHeight)
			}
			path := filepath.Join("testdata", sc.name+".png")
			if *update {
				if err := os.WriteFile(path, img.PNG, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			want := decode(t, raw)
			if n, total := diffPixels(got, want); n*1000 > total*maxDiffPermil {
				_ = os.WriteFile(filepath.Join(t.TempDir(), sc.name+".png"), img.PNG, 0o644)
				t.Errorf("%d of %d pixels differ from %s by more than %d in a channel", n, total, path, maxChannelDiff)
			}
		})
	}
}

func decode(t testing.TB, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("PNG does not decode: %v", err)
	}
	return img
}

// diffPixels counts the pixels where a and b differ by more than
// maxChannelDiff in a channel (every pixel, when the sizes differ).
func diffPixels(a, b image.Image) (n, total int) {
	ra, rb := a.Bounds(), b.Bounds()
	total = ra.Dx() * ra.Dy()
	if ra.Size() != rb.Size() {
		return total, total
	}
	for y := range ra.Dy() {
		for x := range ra.Dx() {
			if !near(at(a, ra.Min.X+x, ra.Min.Y+y), at(b, rb.Min.X+x, rb.Min.Y+y)) {
				n++
			}
		}
	}
	return n, total
}

func at(img image.Image, x, y int) color.RGBA {
	r, g, b, _ := img.At(x, y).RGBA()
	return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 0xff}
}

func near(a, b color.RGBA) bool {
	d := func(x, y uint8) int { return max(int(x)-int(y), int(y)-int(x)) }
	return d(a.R, b.R) <= maxChannelDiff && d(a.G, b.G) <= maxChannelDiff && d(a.B, b.B) <= maxChannelDiff
}

// cellPixel is the colour at the centre-left of cell (x, y), inside the
// cell but off the glyph's stroke for a blank.
func cellColour(img image.Image, res *Image, x, y, dx, dy int) color.RGBA {
	return at(img, x*res.CellWidth+dx, y*res.CellHeight+dy)
}

// TestColours checks the colours a cell's style puts on its pixels,
// independently of the goldens: backgrounds of each colour space, reverse
// video, the cursor's block and a hidden cursor.
func TestColours(t *testing.T) {
	red := ansi16[1]
	cases := []struct {
		name    string
		capture string
		cursor  termgrid.Cursor
		col     int
		want    color.RGBA
	}{
		{"default bg", "x", hidden, 3, DefaultBg},
		{"ansi bg", esc + "41m  ", hidden, 1, red},
		{"bright bg", esc + "101m  ", hidden, 1, ansi16[9]},
		{"palette cube", esc + "48;5;208m  ", hidden, 1, color.RGBA{0xff, 0x87, 0x00, 0xff}},
		{"palette grey", esc + "48;5;244m  ", hidden, 1, color.RGBA{0x80, 0x80, 0x80, 0xff}},
		{"true colour", esc + "48;2;1;2;3m  ", hidden, 1, color.RGBA{1, 2, 3, 0xff}},
		{"reverse", esc + "7m  ", hidden, 1, DefaultFg},
		{"reverse red fg", esc + "7;31m  ", hidden, 1, red},
		{"cursor block", "ab", termgrid.Cursor{X: 3}, 3, DefaultFg},
		{"cursor hidden", "ab", termgrid.Cursor{X: 3, Hidden: true}, 3, DefaultBg},
		{"cursor on red bg", esc + "41m    ", termgrid.Cursor{X: 2}, 2, DefaultFg},
		{"dim reverse", esc + "2;7m  ", hidden, 1, DefaultFg},
		{"bold blue is bright blue", esc + "1;34;7m  ", hidden, 1, ansi16[12]},
		{"bold palette blue stays", esc + "1;38;5;4;7m  ", hidden, 1, ansi16[4]},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := termgrid.Parse([]byte(c.capture))
			s.Cursor = c.cursor
			res, err := PNG(s, 6, 1, Options{})
			if err != nil {
				t.Fatal(err)
			}
			img := decode(t, res.PNG)
			if got := cellColour(img, res, c.col, 0, 1, 1); got != c.want {
				t.Errorf("cell %d: %v, want %v", c.col, got, c.want)
			}
		})
	}
}

// TestGlyphsDrawn: a letter puts foreground pixels in its cell, a missing
// glyph's placeholder is as wide as its cell (two for a wide one), and a
// box-drawing line reaches both edges of its cell so lines join.
func TestGlyphsDrawn(t *testing.T) {
	s := termgrid.Parse([]byte("A─日 \n"))
	s.Cursor = hidden
	res, err := PNG(s, 6, 1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	img := decode(t, res.PNG)
	cw, ch := res.CellWidth, res.CellHeight
	lit := func(x0, x1, y0, y1 int) int {
		n := 0
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				if at(img, x, y) != DefaultBg {
					n++
				}
			}
		}
		return n
	}
	if lit(0, cw, 0, ch) < 5 {
		t.Errorf("A: no glyph drawn")
	}
	for _, x := range []int{cw, 2*cw - 1} {
		if lit(x, x+1, 0, ch) == 0 {
			t.Errorf("─ does not reach column %d of its cell", x-cw)
		}
	}
	// The placeholder of 日 covers columns 2 and 3: lit near both outer
	// edges, dark in the middle.
	if lit(2*cw, 2*cw+2, ch/2, ch/2+1) == 0 || lit(4*cw-2, 4*cw, ch/2, ch/2+1) == 0 {
		t.Errorf("wide placeholder does not span two cells")
	}
	if lit(3*cw-1, 3*cw+1, ch/2, ch/2+1) != 0 {
		t.Errorf("wide placeholder is two boxes, not one")
	}
	if lit(4*cw, 6*cw, 0, ch) != 0 {
		t.Errorf("blank cells after the wide one are lit")
	}
}

// TestCellSize: at the default scale a cell is at least 7×14 pixels; the
// scale grows it, and a scale out of range is refused.
func TestCellSize(t *testing.T) {
	w, h, err := CellSize(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cell at scale 1: %d×%d", w, h)
	if w < 7 || h < 14 {
		t.Errorf("cell %d×%d at the default scale, want at least 7×14", w, h)
	}
	w2, h2, err := CellSize(2)
	if err != nil {
		t.Fatal(err)
	}
	if w2 < 2*w-1 || h2 < 2*h-2 {
		t.Errorf("cell %d×%d at scale 2, %d×%d at 1", w2, h2, w, h)
	}
	for _, bad := range []float64{0.25, 4.5, -1} {
		if _, _, err := CellSize(bad); err == nil {
			t.Errorf("scale %g accepted", bad)
		}
	}
	s := termgrid.Parse([]byte("x"))
	if _, err := Render(s, 2000, 1000, Options{Scale: 4}); err == nil {
		t.Errorf("a picture of %d pixels was not refused", 2000*1000*28*60)
	}
}

// variedScreen is a full screen of coloured text: words in random colours
// from the 16, the 256 palette and true colour, some bold, reverse or
// underlined, as a busy TUI or a coloured log shows.
//
// With themed, its true colours are a theme's eight and its palette
// colours twenty, as a TUI's are; else each is random, hundreds on the
// screen, as few real screens have.
func variedScreen(cols, rows int, seed uint64, themed bool) *termgrid.Screen {
	r := rand.New(rand.NewPCG(seed, 1))
	words := strings.Fields("the quick brown fox jumps over lazy dog error warning info debug GET POST 200 404 " +
		"main.go func return if else for range 0x1f 3.14 build test ok FAIL PASS ./cmd/tmux-mcp [INFO] {json}")
	var b strings.Builder
	for range rows {
		n := 0
		for n < cols-12 {
			w := words[r.IntN(len(words))]
			switch r.IntN(6) {
			case 0:
				fmt.Fprintf(&b, "%s%dm", esc, 30+r.IntN(8))
			case 1:
				c := r.IntN(256)
				if themed {
					c = 16 + 12*r.IntN(20)
				}
				fmt.Fprintf(&b, "%s38;5;%dm", esc, c)
			case 2:
				fmt.Fprintf(&b, "%s1;%dm", esc, 90+r.IntN(8))
			case 3:
				c := [3]int{r.IntN(256), r.IntN(256), r.IntN(256)}
				if themed {
					c = theme[r.IntN(len(theme))]
				}
				fmt.Fprintf(&b, "%s38;2;%d;%d;%dm", esc, c[0], c[1], c[2])
			case 4:
				fmt.Fprintf(&b, "%s7;%dm", esc, 31+r.IntN(7))
			case 5:
				fmt.Fprintf(&b, "%s4;%dm", esc, 32+r.IntN(6))
			}
			b.WriteString(w)
			b.WriteString(esc + "0m ")
			n += len(w) + 1
		}
		b.WriteString("\n")
	}
	s := termgrid.Parse([]byte(b.String()))
	s.Cursor = termgrid.Cursor{X: 3, Y: rows - 1}
	return s
}

// theme is eight true colours of a dark theme.
var theme = [][3]int{{0xff, 0x79, 0xc6}, {0xbd, 0x93, 0xf9}, {0x50, 0xfa, 0x7b}, {0xf1, 0xfa, 0x8c},
	{0x8b, 0xe9, 0xfd}, {0xff, 0xb8, 0x6c}, {0xff, 0x55, 0x55}, {0x62, 0x72, 0xa4}}

// TestSizeBound: a full 200×50 screen of coloured text is under 150 KB as a
// PNG at the default scale (issue 25): a themed one in its exact colours
// (with sharp edges: it is over SharpenAbove smooth), one of hundreds of
// random true colours approximated.
func TestSizeBound(t *testing.T) {
	const limit = 150 << 10
	for seed := range uint64(4) {
		themed := seed%2 == 0
		img, err := PNG(variedScreen(200, 50, seed, themed), 200, 50, Options{})
		if err != nil {
			t.Fatal(err)
		}
		decode(t, img.PNG)
		t.Logf("seed %d themed %v: %d×%d px, %d bytes, smooth %v, approximate %v", seed, themed, img.Width, img.Height, len(img.PNG), img.Smooth, img.Approximate)
		if themed && img.Approximate {
			t.Errorf("a themed screen's colours were approximated")
		}
		if len(img.PNG) >= limit {
			t.Errorf("200×50 screen is %d bytes, over %d", len(img.PNG), limit)
		}
	}
}

// TestSmooth: a screen of ordinary size is drawn with smooth edges.
func TestSmooth(t *testing.T) {
	img, err := PNG(variedScreen(80, 24, 5, true), 80, 24, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("80×24: %d bytes", len(img.PNG))
	if !img.Smooth || img.Approximate {
		t.Errorf("80×24 themed screen: smooth %v, approximate %v", img.Smooth, img.Approximate)
	}
}

// TestSmoothAtLargerScales: the size over which a picture is drawn sharp
// grows with its area, so a dense screen at scale 2 keeps smooth edges,
// and stays within MaxSmooth.
func TestSmoothAtLargerScales(t *testing.T) {
	img, err := PNG(variedScreen(200, 50, 0, true), 200, 50, Options{Scale: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("200×50 at scale 2: %d bytes, smooth %v", len(img.PNG), img.Smooth)
	if !img.Smooth || len(img.PNG) > MaxSmooth {
		t.Errorf("smooth %v, %d bytes (MaxSmooth %d)", img.Smooth, len(img.PNG), MaxSmooth)
	}
}

// TestScales: every scale in range renders a picture of cells×cell size
// that decodes.
func TestScales(t *testing.T) {
	s := variedScreen(40, 10, 7, true)
	for _, sc := range []float64{0.5, 0.75, 1, 1.5, 2, 3, 4} {
		img, err := PNG(s, 40, 10, Options{Scale: sc})
		if err != nil {
			t.Fatalf("scale %g: %v", sc, err)
		}
		got := decode(t, img.PNG)
		if got.Bounds().Dx() != 40*img.CellWidth || got.Bounds().Dy() != 10*img.CellHeight {
			t.Errorf("scale %g: %v for cells %d×%d", sc, got.Bounds(), img.CellWidth, img.CellHeight)
		}
	}
}

// TestManyColours: a screen of more than 256 colours is drawn with its
// colours rounded to the 256-colour palette.
func TestManyColours(t *testing.T) {
	var b strings.Builder
	for i := range 600 {
		fmt.Fprintf(&b, "%s48;2;%d;%d;0m ", esc, i%256, i/256)
		if i%30 == 29 {
			b.WriteString(esc + "0m\n")
		}
	}
	s := termgrid.Parse([]byte(b.String()))
	s.Cursor = hidden
	img, err := PNG(s, 30, 20, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !img.Approximate {
		t.Fatalf("600 colours drawn exactly in a palette")
	}
	dec := decode(t, img.PNG)
	// The last cell, 599 = 2·256+87 so #570200, is nearest the cube's
	// #5f0000.
	if got := cellColour(dec, img, 29, 19, 1, 1); got != (color.RGBA{0x5f, 0, 0, 0xff}) {
		t.Errorf("last cell %v", got)
	}
}

// TestConcurrent: pictures drawn at once (the glyph caches shared) are
// the same as one drawn alone; run with -race.
func TestConcurrent(t *testing.T) {
	s := variedScreen(80, 24, 9, true)
	want, err := PNG(s, 80, 24, Options{Scale: 1.5})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			got, err := PNG(s, 80, 24, Options{Scale: []float64{1.5, 1, 2, 0.5}[i%4]})
			if err == nil && i%4 == 0 && !bytes.Equal(got.PNG, want.PNG) {
				err = fmt.Errorf("drawn at once, the picture differs")
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// BenchmarkRender: a 200×50 screen of coloured text drawn and encoded,
// beside encoding a blank picture of the same size (the PNG encoder's
// floor) and drawing it alone.
func BenchmarkRender(b *testing.B) {
	s := variedScreen(200, 50, 2, true)
	if _, err := PNG(s, 200, 50, Options{}); err != nil { // warm the glyph cache
		b.Fatal(err)
	}
	b.Run("png-200x50", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := PNG(s, 200, 50, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	small := variedScreen(80, 24, 3, true)
	b.Run("png-80x24", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := PNG(small, 80, 24, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("draw-only-200x50", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Render(s, 200, 50, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("baseline-encode-blank", func(b *testing.B) {
		img, _ := Render(&termgrid.Screen{Cursor: hidden}, 200, 50, Options{})
		b.ReportAllocs()
		for b.Loop() {
			var buf bytes.Buffer
			if err := png.Encode(&buf, img); err != nil {
				b.Fatal(err)
			}
		}
	})
}
