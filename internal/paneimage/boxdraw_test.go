package paneimage

import (
	"strings"
	"testing"

	"golang.org/x/text/unicode/runenames"
)

// TestBoxArmsMatchNames checks the table of box-drawing arms against the
// characters' Unicode names ("BOX DRAWINGS UP HEAVY AND RIGHT DOWN
// LIGHT"), read independently of the table: each part of a name between
// "AND"s names directions and a weight, and a part with no weight takes
// the other part's.
func TestBoxArmsMatchNames(t *testing.T) {
	weights := map[string]byte{"LIGHT": 'l', "SINGLE": 'l', "HEAVY": 'h', "DOUBLE": 'd'}
	dirs := map[string][]int{"UP": {0}, "RIGHT": {1}, "DOWN": {2}, "LEFT": {3}, "VERTICAL": {0, 2}, "HORIZONTAL": {1, 3}}
	for r := rune(0x2500); r <= 0x257f; r++ {
		name := runenames.Name(r)
		if !strings.HasPrefix(name, "BOX DRAWINGS ") {
			t.Fatalf("%U: name %q", r, name)
		}
		name = strings.TrimPrefix(name, "BOX DRAWINGS ")
		if strings.Contains(name, "DIAGONAL") {
			if got := boxArms[(r-0x2500)*4 : (r-0x2500)*4+4]; got != "xxxx" {
				t.Errorf("%U %s: table %q, want the diagonal mark", r, name, got)
			}
			continue
		}
		name = strings.NewReplacer("ARC ", "", "TRIPLE DASH ", "", "QUADRUPLE DASH ", "", "DOUBLE DASH ", "").Replace(name)
		want := []byte("....")
		var pending [][]int
		var partWeight byte
		for _, part := range strings.Split(name, " AND ") {
			var ds [][]int
			var w byte
			for _, word := range strings.Fields(part) {
				if x, ok := weights[word]; ok {
					w = x
				} else if d, ok := dirs[word]; ok {
					ds = append(ds, d)
				} else {
					t.Fatalf("%U: word %q in %q", r, word, name)
				}
			}
			if w == 0 {
				pending = append(pending, ds...)
				continue
			}
			partWeight = w
			for _, d := range ds {
				for _, i := range d {
					want[i] = w
				}
			}
		}
		for _, d := range pending {
			for _, i := range d {
				want[i] = partWeight
			}
		}
		if got := boxArms[(r-0x2500)*4 : (r-0x2500)*4+4]; got != string(want) {
			t.Errorf("%U %s: table %q, name says %q", r, runenames.Name(r), got, want)
		}
	}
}

// TestProceduralCoverage: every character boxdraw.go owns draws
// something (U+2800, the blank braille pattern, excepted) and stays in
// its cell.
func TestProceduralCoverage(t *testing.T) {
	for r := rune(0x2500); r <= 0x28ff; r++ {
		if r > 0x259f && r < 0x2800 {
			continue
		}
		s, ok := procedural(r, 7, 15, 1)
		if !ok {
			t.Fatalf("%U not drawn", r)
		}
		lit := 0
		for _, v := range s.a {
			if v > 0 {
				lit++
			}
		}
		if (lit == 0) != (r == 0x2800) {
			t.Errorf("%U: %d pixels lit", r, lit)
		}
	}
	for r := range triangles {
		s, ok := procedural(r, 7, 15, 1)
		lit := 0
		for _, v := range s.a {
			if v > 128 {
				lit++
			}
		}
		if !ok || lit < 6 {
			t.Errorf("%U: %d pixels lit", r, lit)
		}
	}
	if _, ok := procedural('A', 7, 15, 1); ok {
		t.Error("A drawn as a shape")
	}
}
