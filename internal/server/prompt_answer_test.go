package server

import (
	"strings"
	"testing"
)

func TestInputRows(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rows  []string
		col0  int
		typed []string
		want  int
	}{
		{"one line", []string{">>> 1+1", "2"}, 4, []string{"1+1"}, 1},
		{"a block with continuation prompts", []string{">>> def f(x):", "...     return x*2", "...", "4"}, 4, []string{"def f(x):", "    return x*2", ""}, 3},
		{"the echo wraps", []string{"$ " + strings.Repeat("a", 8), strings.Repeat("a", 7), "out"}, 2, []string{strings.Repeat("a", 15)}, 2},
		{"no echo (a passphrase)", []string{"Passphrase:", "length 21"}, 12, []string{"hunter2hunter2"}, 1},
		{"the program answered before reading the rest", []string{"> a", "A", "> b"}, 2, []string{"a", "b"}, 1},
		{"nothing typed", []string{"prompt"}, 6, nil, 1},
		{"no rows", nil, 0, []string{"x"}, 0},
	} {
		width := 10
		if tc.name != "the echo wraps" {
			width = 80
		}
		if got := inputRows(tc.rows, tc.col0, width, tc.typed); got != tc.want {
			t.Errorf("%s: %d rows of input, want %d", tc.name, got, tc.want)
		}
	}
}

func TestTypedLines(t *testing.T) {
	for _, tc := range []struct {
		keys           string
		enter, literal bool
		want           []string
	}{
		{"1+1", true, false, []string{"1+1"}},
		{"1+1", false, false, nil},
		{"a\nb\n", true, false, []string{"a", "b", ""}},
		{"a\r\nb", false, false, []string{"a"}},
		{"C-c", false, false, nil},
		{"Enter", true, false, []string{""}},
		{"C-c", true, true, []string{"C-c"}},
		{"y", true, false, []string{"y"}},
	} {
		if got := typedLines(tc.keys, tc.enter, tc.literal); strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
			t.Errorf("typedLines(%q, %v, %v) = %q, want %q", tc.keys, tc.enter, tc.literal, got, tc.want)
		}
	}
}

func TestCells(t *testing.T) {
	if got := cellPrefix("日本語 ok", 4); got != "日本" {
		t.Errorf("cellPrefix wide: %q", got)
	}
	if got := cellPrefix(">>>", 4); got != ">>> " {
		t.Errorf("cellPrefix past the trimmed blanks: %q", got)
	}
	if got := cellWidth("a日\u0301b"); got != 4 {
		t.Errorf("cellWidth: %d", got)
	}
	if got := maskSecret([]string{"pass=hunter2", "ok y"}, "hunter2\ny"); got[0] != "pass=***" || got[1] != "ok y" {
		t.Errorf("maskSecret: %q", got)
	}
	if i, ok := lastAltOff([]byte("a\x1b[?1049lb\x1b[?1049hc\x1b[?1049l$ ")); !ok || i != len("a\x1b[?1049lb\x1b[?1049hc\x1b[?1049l") {
		t.Errorf("lastAltOff: %d %v", i, ok)
	}
}
