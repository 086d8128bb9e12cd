package termtext

import (
	"reflect"
	"testing"
)

func TestLines(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []string
	}{
		{"plain", "a\nb\n", []string{"a", "b"}},
		{"crlf", "a\r\nb\r\n", []string{"a", "b"}},
		{"colours", "\x1b[1;31mred\x1b[0m text\n", []string{"red text"}},
		{"carriage return overwrite", "10%\r20%\r100% done\n", []string{"100% done"}},
		{"progress with erase", "downloading 50%\r\x1b[Kok\n", []string{"ok"}},
		{"backspace", "abd\bc\n", []string{"abc"}},
		{"osc title dropped", "\x1b]0;title\x07visible\n", []string{"visible"}},
		{"osc with ST", "\x1b]2;t\x1b\\x\n", []string{"x"}},
		{"charset", "\x1b(Bplain\n", []string{"plain"}},
		{"unicode", "héllo ☃\n", []string{"héllo ☃"}},
		{"unfinished line", "a\nb", []string{"a", "b"}},
		{"cursor column", "abcdef\x1b[3GX\n", []string{"abXdef"}},
		{"dcs skipped", "\x1bPq#0;2;0;0;0\x1b\\after\n", []string{"after"}},
	}
	for _, c := range cases {
		if got := Lines([]byte(c.in)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// Any chunking of the input gives the same lines and OSC payloads.
func TestChunking(t *testing.T) {
	in := []byte("é\x1b[31mx\x1b]7799;E;abc;0\x07\r\nnext ☃\x1b[0m\n")
	var want []string
	var wantOSC []string
	d := Decoder{OnOSC: func(p string) { wantOSC = append(wantOSC, p) }}
	want = append(want, d.Write(in)...)
	for size := 1; size < len(in); size++ {
		var got, gotOSC []string
		d := Decoder{OnOSC: func(p string) { gotOSC = append(gotOSC, p) }}
		for i := 0; i < len(in); i += size {
			got = append(got, d.Write(in[i:min(i+size, len(in))])...)
		}
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotOSC, wantOSC) {
			t.Fatalf("chunk %d: %q %q, want %q %q", size, got, gotOSC, want, wantOSC)
		}
	}
	if !reflect.DeepEqual(wantOSC, []string{"7799;E;abc;0"}) {
		t.Errorf("osc %q", wantOSC)
	}
}

func FuzzDecoder(f *testing.F) {
	f.Add([]byte("a\x1b[31mb\rc\n\x1b]0;x\x07"), 3)
	f.Add([]byte("\xe2\x98"), 1)
	f.Fuzz(func(t *testing.T, b []byte, chunk int) {
		if chunk <= 0 {
			chunk = 1
		}
		var d Decoder
		for i := 0; i < len(b); i += chunk {
			d.Write(b[i:min(i+chunk, len(b))])
		}
	})
}

func TestTakeLinesSplitsAtOSC(t *testing.T) {
	var before, after []string
	var d Decoder
	d.OnOSC = func(p string) {
		if p == "mark" {
			before = d.TakeLines()
			d.ResetLine()
		}
	}
	after = d.Write([]byte("echo x\r\n> \x1b]mark\x07out1\r\nout2\r\n"))
	if !reflect.DeepEqual(before, []string{"echo x"}) || !reflect.DeepEqual(after, []string{"out1", "out2"}) {
		t.Errorf("before %q after %q", before, after)
	}
}

// Cursor movement cannot make a line (or memory) grow without bound.
func TestHugeCursorMovesStayBounded(t *testing.T) {
	for _, in := range []string{"\x1b[999999999Cx\n", "\x1b[999999999Gx\n", "\x1b[99999999999999999999Cx\n"} {
		lines := Lines([]byte(in))
		if len(lines) == 0 || len(lines[0]) > MaxLine+4 {
			t.Errorf("%q: %d lines, first %d bytes", in, len(lines), len(lines[0]))
		}
	}
}
