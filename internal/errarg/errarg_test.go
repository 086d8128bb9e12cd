package errarg

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQuotedAndBare(t *testing.T) {
	huge := strings.Repeat("A", 1<<20)
	cases := []struct {
		name, in, quoted, bare string
	}{
		{"short", "main", `"main"`, "main"},
		{"empty", "", `""`, ""},
		{"short control", "a\x00b", `"a\x00b"`, "a\x00b"},
		{"huge", huge, `"` + strings.Repeat("A", 40) + `…" (1048576 bytes)`, `"` + strings.Repeat("A", 40) + `…" (1048576 bytes)`},
		{"lines", strings.Repeat("ab\n", 1000), `"` + strings.Repeat(`ab\n`, 10) + `…" (3000 bytes)`, `"` + strings.Repeat(`ab\n`, 10) + `…" (3000 bytes)`},
		// Cut at a character, never inside one; invalid bytes escaped.
		{"utf8", strings.Repeat("é", 500), `"` + strings.Repeat("é", 20) + `…" (1000 bytes)`, `"` + strings.Repeat("é", 20) + `…" (1000 bytes)`},
		{"invalid", strings.Repeat("\xff", 300), `"` + strings.Repeat(`\xff`, 10) + `…" (300 bytes)`, `"` + strings.Repeat(`\xff`, 10) + `…" (300 bytes)`},
		// Short, but long once escaped: clipped in both forms.
		{"escapes", strings.Repeat("\x1b", 100), `"` + strings.Repeat(`\x1b`, 10) + `…" (100 bytes)`, `"` + strings.Repeat(`\x1b`, 10) + `…" (100 bytes)`},
		{"quotes", strings.Repeat(`"`, 200), `"` + strings.Repeat(`\"`, 20) + `…" (200 bytes)`, `"` + strings.Repeat(`\"`, 20) + `…" (200 bytes)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Quoted(tc.in); got != tc.quoted {
				t.Errorf("Quoted = %s, want %s", got, tc.quoted)
			}
			if got := Bare(tc.in); got != tc.bare {
				t.Errorf("Bare = %s, want %s", got, tc.bare)
			}
			if got := Quoted(tc.in); !utf8.ValidString(got) || len(got) > 200 {
				t.Errorf("Quoted is %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
			}
		})
	}
}

func TestWithin(t *testing.T) {
	huge := strings.Repeat("A", 1<<20)
	cases := []struct {
		name, msg string
		args      []string
		want      string
	}{
		{"short message", "can't find session: main", []string{"-t", "main"}, "can't find session: main"},
		{"echoed argument", "can't find session: " + huge, []string{"-t", huge}, `can't find session: "` + strings.Repeat("A", 40) + `…" (1048576 bytes)`},
		{"echoed twice", huge + " / " + huge, []string{huge}, `"` + strings.Repeat("A", 40) + `…" (1048576 bytes) / "` + strings.Repeat("A", 40) + `…" (1048576 bytes)`},
		{"echoed trimmed", "unknown value: " + strings.TrimSpace(strings.Repeat("ab\n", 100)), []string{strings.Repeat("ab\n", 100)}, `unknown value: "` + strings.Repeat(`ab\n`, 10) + `…" (300 bytes)`},
		{"reworded", "unknown: " + strings.Repeat("B", 5000), []string{huge}, "unknown: " + strings.Repeat("B", 975) + "… (5009 bytes)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Within(tc.msg, tc.args...); got != tc.want {
				t.Errorf("Within = %.200q (%d bytes), want %.200q", got, len(got), tc.want)
			}
		})
	}
}
