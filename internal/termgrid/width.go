package termgrid

import (
	"unicode"

	"golang.org/x/text/width"
)

// RuneWidth is the columns a character takes in a tmux pane (runeWidth):
// send_and_wait lines its input's echo up with the screen's cells by it.
func RuneWidth(r rune) int { return runeWidth(r) }

// runeWidth is the columns a character takes as tmux counts them. tmux
// 3.3a asks the C library's wcwidth, so this follows glibc's rules (its
// localedata/unicode-gen): two columns for East Asian Wide and Fullwidth
// characters, none for combining marks, format characters and the
// Hangul medial vowels and final consonants (which join the syllable
// before them), one for everything else: soft hyphen and the prepended
// concatenation marks (format characters that are drawn) included. Characters
// wcwidth does not know (unassigned) tmux drops, so they never reach a
// capture. TestWidthsMatchTmux checks this against tmux itself.
func runeWidth(r rune) int {
	switch {
	case r < 0x300:
		return 1 // ASCII and Latin-1: the common case, no table look-up
	case r >= 0x1160 && r <= 0x11ff, r >= 0xd7b0 && r <= 0xd7ff:
		return 0
	case unicode.Is(prependedMarks, r):
		return 1
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	}
	if r >= 0x3248 && r <= 0x324f || r >= 0x4dc0 && r <= 0x4dff {
		// Circled numbers on black squares and the Yijing hexagrams:
		// ambiguous and neutral to Unicode, wide to glibc.
		return 2
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// prependedMarks are the characters with Unicode's
// Prepended_Concatenation_Mark property (Unicode 15): format characters
// drawn as a sign spanning the digits after them, one column to glibc.
var prependedMarks = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x0600, Hi: 0x0605, Stride: 1}, {Lo: 0x06dd, Hi: 0x06dd, Stride: 1},
		{Lo: 0x070f, Hi: 0x070f, Stride: 1}, {Lo: 0x0890, Hi: 0x0891, Stride: 1},
		{Lo: 0x08e2, Hi: 0x08e2, Stride: 1},
	},
	R32: []unicode.Range32{
		{Lo: 0x110bd, Hi: 0x110bd, Stride: 1}, {Lo: 0x110cd, Hi: 0x110cd, Stride: 1},
	},
}
