package paneimage

import (
	"fmt"
	"image"
	"math"
	"sync"
	"unicode/utf8"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/gomonobold"
	"golang.org/x/image/font/gofont/gomonobolditalic"
	"golang.org/x/image/font/gofont/gomonoitalic"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// The fonts are the Go fonts' monospaced faces (golang.org/x/image/font/
// gofont), embedded in the binary: their licence is the Go project's
// BSD-style one, which allows that. They cover Latin, Greek and Cyrillic;
// what they lack is drawn as a placeholder box (see placeholder), except
// the line and block pieces TUIs use, drawn by boxdraw.go.

// Faces, by the bits of a cell's weight and slant.
const (
	faceRegular = 0
	faceBold    = 1
	faceItalic  = 2 // faceBold|faceItalic is bold italic
)

var fontFiles = [4][]byte{gomono.TTF, gomonobold.TTF, gomonoitalic.TTF, gomonobolditalic.TTF}

// parsedFonts are the four fonts, parsed once on first use: a server
// that never draws a pane pays nothing for them.
var parsedFonts = sync.OnceValues(func() ([4]*opentype.Font, error) {
	var out [4]*opentype.Font
	for i, b := range fontFiles {
		f, err := opentype.Parse(b)
		if err != nil {
			return out, fmt.Errorf("paneimage: parsing embedded font %d: %w", i, err)
		}
		out[i] = f
	}
	return out, nil
})

// baseFontSize is the font size in pixels at scale 1: Go Mono at 12 px
// (hinted) advances 7 px a character and spans 15 px from ascent to
// descent, so a cell is 7×15.
const baseFontSize = 12

// levels is how many steps of coverage a glyph's mask keeps between none
// (0) and full (levels). A picture draws them in fewer colours (see
// stages): two steps or one keep a screen's colours within a 256-colour
// palette and the PNG small.
const levels = 4

// mask is a glyph drawn into its cell: w×h coverage steps, 0 (background)
// to levels (foreground).
type mask struct {
	w, h int
	a    []uint8
}

// glyphKey names a drawn cell: its text (a character and what combines
// with it), face and width in columns.
type glyphKey struct {
	text  string
	face  uint8
	width uint8
}

// A sizer draws the glyphs of one font size and caches them, so that a
// screen full of the same few characters rasterises each once.
type sizer struct {
	mu           sync.Mutex
	faces        [4]font.Face
	cellW, cellH int
	ascent       int
	stroke       int // thickness of a light line, an underline
	glyphs       map[glyphKey]*mask
}

// maxCachedGlyphs bounds one size's cache; past it the cache starts over
// (a screen has far fewer distinct cells).
const maxCachedGlyphs = 4096

// maxSizers bounds the sizes kept at once.
const maxSizers = 8

var (
	sizersMu sync.Mutex
	sizers   = map[int]*sizer{}
)

// sizerFor returns the sizer of a scale: the font size is 12·scale pixels,
// rounded to a half pixel, so nearby scales share one cache.
func sizerFor(scale float64) (*sizer, error) {
	half := int(math.Round(2 * baseFontSize * scale))
	sizersMu.Lock()
	defer sizersMu.Unlock()
	if s, ok := sizers[half]; ok {
		return s, nil
	}
	fonts, err := parsedFonts()
	if err != nil {
		return nil, err
	}
	s := &sizer{glyphs: map[glyphKey]*mask{}}
	for i, f := range fonts {
		face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: float64(half) / 2, DPI: 72, Hinting: font.HintingFull})
		if err != nil {
			return nil, fmt.Errorf("paneimage: font face: %w", err)
		}
		s.faces[i] = face
	}
	m := s.faces[faceRegular].Metrics()
	adv, _ := s.faces[faceRegular].GlyphAdvance('M')
	s.cellW = max(1, adv.Round())
	s.ascent = m.Ascent.Ceil()
	s.cellH = max(2, s.ascent+m.Descent.Ceil())
	s.stroke = max(1, int(math.Round(float64(half)/(2*baseFontSize))))
	if len(sizers) >= maxSizers {
		clear(sizers)
	}
	sizers[half] = s
	return s, nil
}

// glyph returns the mask of a cell's text in a face, width columns wide.
func (s *sizer) glyph(text string, face uint8, width int) *mask {
	key := glyphKey{text, face, uint8(width)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.glyphs[key]; ok {
		return m
	}
	m := s.draw(text, face, width)
	if len(s.glyphs) >= maxCachedGlyphs {
		clear(s.glyphs)
	}
	s.glyphs[key] = m
	return m
}

// draw rasterises one cell's text: its first character, from the font or
// boxdraw.go, and any combining characters over it; a first character
// no font has is a placeholder.
func (s *sizer) draw(text string, face uint8, width int) *mask {
	w, h := width*s.cellW, s.cellH
	r, _ := utf8.DecodeRuneInString(text)
	if sh, ok := procedural(r, w, h, s.stroke); ok {
		return quantise(sh)
	}
	sh := newShape(w, h)
	for i, r := range text {
		f := s.faces[face]
		adv, ok := f.GlyphAdvance(r)
		if !ok && face != faceRegular {
			f = s.faces[faceRegular]
			adv, ok = f.GlyphAdvance(r)
		}
		if !ok {
			if i == 0 {
				return quantise(placeholder(w, h, s.stroke))
			}
			continue // a combining mark the font lacks
		}
		x := 0
		if i == 0 {
			x = (w - adv.Round()) / 2 // centred: matters for a wide one
		}
		dr, src, sp, _, ok := f.Glyph(fixed.P(x, s.ascent), r)
		if !ok {
			continue
		}
		blend(sh, dr, src, sp)
	}
	return quantise(sh)
}

// blend adds a glyph's coverage, drawn at dr from src at sp, clipped to
// the cell.
func blend(sh *shape, dr image.Rectangle, src image.Image, sp image.Point) {
	clip := dr.Intersect(image.Rect(0, 0, sh.w, sh.h))
	alpha, fast := src.(*image.Alpha)
	for y := clip.Min.Y; y < clip.Max.Y; y++ {
		for x := clip.Min.X; x < clip.Max.X; x++ {
			p := image.Pt(sp.X+x-dr.Min.X, sp.Y+y-dr.Min.Y)
			var v uint8
			if fast {
				v = alpha.AlphaAt(p.X, p.Y).A
			} else {
				_, _, _, a := src.At(p.X, p.Y).RGBA()
				v = uint8(a >> 8)
			}
			i := y*sh.w + x
			sh.a[i] = max(sh.a[i], v)
		}
	}
}

// quantise turns 8-bit coverage into steps 0..levels.
func quantise(sh *shape) *mask {
	m := &mask{w: sh.w, h: sh.h, a: make([]uint8, len(sh.a))}
	for i, v := range sh.a {
		m.a[i] = uint8((int(v)*levels + 127) / 255)
	}
	return m
}
