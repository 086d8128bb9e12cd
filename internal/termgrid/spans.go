package termgrid

import (
	"slices"
	"strconv"
	"strings"
)

// Span is a block of cells that share one look a reader cares about: rows
// Row to LastRow, the same columns on each (Col, Width, in cells), and the
// words that name the look: attributes ("bold", "reverse", "acs") and
// colours ("fg:red", "bg:208", "ul:#ff8700" for an underline's colour).
type Span struct {
	Row, LastRow int
	Col, Width   int
	Words        []string
}

// String is the span in its compact form, "ROW:COL+WIDTH words", the rows
// as "FIRST-LAST" when there are several: "3:39+6 bold fg:cyan",
// "0-22:4+5 reverse".
func (s Span) String() string {
	b := strconv.AppendInt(nil, int64(s.Row), 10)
	if s.LastRow != s.Row {
		b = strconv.AppendInt(append(b, '-'), int64(s.LastRow), 10)
	}
	b = strconv.AppendInt(append(b, ':'), int64(s.Col), 10)
	b = strconv.AppendInt(append(b, '+'), int64(s.Width), 10)
	for _, w := range s.Words {
		b = append(append(b, ' '), w...)
	}
	return string(b)
}

// A layer is one feature of a cell's look, an attribute or a colour:
// value is its word for a style, "" where the style does not have it. A
// blank cell (a space) shows no foreground, weight or slant: for the
// layers not visible on a blank it is a wildcard, so "fg:red" covers a red
// phrase with its spaces whatever the spaces' own colour.
type layer struct {
	value        func(Style) string
	visibleBlank bool
}

func colourLayer(prefix string, of func(Style) Color, visibleBlank bool) layer {
	return layer{func(s Style) string {
		if c := of(s); !c.IsDefault() {
			return prefix + c.String()
		}
		return ""
	}, visibleBlank}
}

var layers = func() []layer {
	var ls []layer
	for _, w := range attrWords {
		ls = append(ls, layer{func(s Style) string {
			if s.Attr&w.a != 0 {
				return w.word
			}
			return ""
		}, w.a&(Reverse|AnyUnderline|Strikethrough|Overline) != 0})
	}
	return append(ls,
		colourLayer("fg:", func(s Style) Color { return s.Fg }, false),
		colourLayer("bg:", func(s Style) Color { return s.Bg }, true),
		// An underline's colour shows only where there is an underline.
		colourLayer("ul:", func(s Style) Color {
			if s.Attr&AnyUnderline == 0 {
				return Color{}
			}
			return s.Underline
		}, true),
	)
}()

// geom is where a span is on its row.
type geom struct{ col, width int }

// Spans describes the screen's styles for a reader, compactly: each
// attribute and colour on its own (so a selection's background is one
// span over text of several colours), runs over blanks that do not show
// the feature, spans of the same columns and look on consecutive rows
// merged into one. Cells of the default look are in no span. Spans are
// ordered by first row, then column (the wider first); spans of the same
// cells are one span with all their words.
func (s *Screen) Spans() []Span {
	type key struct {
		geom
		words string
	}
	var out []Span
	open := map[key]int{} // spans that end on the previous row, by look
	for row, l := range s.Lines {
		cols := make([]int, len(l)+1)
		for i, c := range l {
			cols[i+1] = cols[i] + c.Width
		}
		var order []geom
		words := map[geom][]string{}
		for _, ly := range layers {
			wild := func(c Cell) bool { return !ly.visibleBlank && c.Text == " " }
			for i := 0; i < len(l); {
				v := ly.value(l[i].Style)
				if v == "" || wild(l[i]) {
					i++
					continue
				}
				last := i
				for j := i + 1; j < len(l); j++ {
					if wild(l[j]) {
						continue
					}
					if ly.value(l[j].Style) != v {
						break
					}
					last = j
				}
				g := geom{cols[i], cols[last+1] - cols[i]}
				if _, ok := words[g]; !ok {
					order = append(order, g)
				}
				words[g] = append(words[g], v)
				i = last + 1
			}
		}
		slices.SortFunc(order, func(a, b geom) int {
			if a.col != b.col {
				return a.col - b.col
			}
			return b.width - a.width
		})
		next := make(map[key]int, len(order))
		for _, g := range order {
			k := key{g, strings.Join(words[g], " ")}
			if i, ok := open[k]; ok {
				out[i].LastRow = row
				next[k] = i
				continue
			}
			next[k] = len(out)
			out = append(out, Span{Row: row, LastRow: row, Col: g.col, Width: g.width, Words: words[g]})
		}
		open = next
	}
	return out
}
