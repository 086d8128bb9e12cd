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
		// Issue 9 item 4: a sequence left open does not swallow what follows;
		// ESC starts a new sequence, CAN and SUB cancel it.
		{"open osc then text", "a\x1b]0;title\x1b[31mb\n", []string{"ab"}},
		{"open dcs then text", "a\x1bP\x1b[0mb\n", []string{"ab"}},
		{"open dcs data then text", "a\x1bPqdata\x1b[0mb\n", []string{"ab"}},
		{"open apc then text", "a\x1b_abc\x1b[0mb\n", []string{"ab"}},
		{"lone esc then text", "a\x1b\x1b[0mb\n", []string{"ab"}},
		{"open csi then text", "a\x1b[12\x1b[0mb\n", []string{"ab"}},
		{"can cancels", "a\x1b]0;t\x18b\x1b[1\x18c\n", []string{"abc"}},
		{"sub cancels", "a\x1b_x\x1ab\n", []string{"ab"}},
		{"sos and pm", "a\x1bXs\x1b\\b\x1b^p\x1b\\c\n", []string{"abc"}},
		{"screen title", "a\x1bkname\x1b\\b\n", []string{"ab"}},
		{"bel does not end apc", "a\x1b_x\x07y\x1b\\b\n", []string{"ab"}},
		{"newline inside csi runs", "a\x1b[1\n2Gb\n", []string{"a", "           b"}},
		{"csi first parameter", "abcdef\x1b[3;9GX\n", []string{"abXdef"}},
		{"csi column 0 is 1", "ab\x1b[0Gc\n", []string{"cb"}},
		{"erase to start", "abcd\x1b[2G\x1b[1K\n", []string{"  cd"}},
		{"delete characters", "abcdef\x1b[2G\x1b[2P\n", []string{"adef"}},
		{"erase characters", "abcdef\x1b[2G\x1b[2X\n", []string{"a  def"}},
		{"insert blanks", "abc\x1b[2G\x1b[2@\n", []string{"a  bc"}},
		{"private csi ignored", "ab\x1b[?2Kc\n", []string{"abc"}},
		{"overlong number ignored", "abc\x1b[99999999999Dd\n", []string{"abcd"}},
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

// The end marker of run_command is found after output that stopped in the
// middle of a sequence of any kind.
func TestMarkerAfterOpenSequence(t *testing.T) {
	for _, open := range []string{"\x1b]0;title", "\x1bP", "\x1bPq", "\x1b_abc", "\x1b", "\x1b[12", "\x1bX", "\x1b^", "\x1bk", "\x1b(", "\x1b[?1;2 "} {
		var got []string
		d := Decoder{OnOSC: func(p string) { got = append(got, p) }}
		lines := d.Write([]byte("out\r\n" + open + "\x1b]7799;E;id;0\x07"))
		// An open OSC ends at the ESC that starts the marker (tmux does
		// the same), so it may be reported first.
		if len(got) == 0 || got[len(got)-1] != "7799;E;id;0" || !reflect.DeepEqual(lines, []string{"out"}) {
			t.Errorf("%q: osc %q lines %q", open, got, lines)
		}
	}
}

func TestOSCEndedByST(t *testing.T) {
	var wantOSC []string
	d := Decoder{OnOSC: func(p string) { wantOSC = append(wantOSC, p) }}
	d.Write([]byte("\x1b]7799;E;abc;0\x1b\\"))
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
