package jsonstr

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// Marshal writes exactly what json.Marshal writes; Text writes valid UTF-8
// JSON with no HTML escapes that decodes to what json.Marshal's does.
func FuzzMarshalText(f *testing.F) {
	for _, s := range []string{"", "plain", `a"b\c`, "<&>", "\b\f\n\r\t\x00\x1f\x7f", "é 中 😀", "\u2028\u2029", "bad \xff\xfe \xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := Marshal(nil, s); string(got) != string(want) {
			t.Fatalf("Marshal(%q) = %s, json.Marshal %s", s, got, want)
		}
		text := Text(nil, s)
		if !utf8.Valid(text) || strings.Contains(string(text), `\u003c`) || strings.Contains(string(text), `\ufffd`) {
			t.Fatalf("Text(%q) = %s: not UTF-8 or escapes what it need not", s, text)
		}
		var got, ref string
		if err := json.Unmarshal(text, &got); err != nil {
			t.Fatalf("Text(%q) = %s: invalid JSON: %v", s, text, err)
		}
		_ = json.Unmarshal(want, &ref)
		if got != ref {
			t.Fatalf("Text(%q) decodes to %q, json.Marshal's to %q", s, got, ref)
		}
	})
}

func TestText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"<&>", `"<&>"`},
		{"bad \xff", `"bad ` + "\ufffd" + `"`},
		{"\b\x1b\u2028", `"\b\u001b\u2028"`},
	}
	for _, tc := range tests {
		if got := string(Text(nil, tc.in)); got != tc.want {
			t.Errorf("Text(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
