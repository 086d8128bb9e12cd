package control

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func parseAll(p *Parser, text string) []Event {
	var evs []Event
	for _, l := range strings.Split(text, "\n") {
		if ev := p.Parse([]byte(l)); ev != nil {
			evs = append(evs, ev)
		}
	}
	return evs
}

func TestParserBlocks(t *testing.T) {
	in := strings.Join([]string{
		"%begin 1700000000 264 0",
		"%end 1700000000 264 0",
		"%session-changed $0 main",
		"%begin 1700000000 269 1",
		"one",
		"%end 123 456 1",        // pane text: wrong guard
		"%end 1700000000 269 0", // wrong flags
		"%error 1700000000 268 1",
		"%begin 1 2 3",
		"%end 1700000000 269 1 ", // trailing space
		"%end 1700000000 269 1",
		"%begin 1700000000 270 1",
		"can't find pane: %99",
		"%error 1700000000 270 1",
		"%begin 1700000000 271 1",
		"%end 1700000000 271 1",
		"%begin 1700000000 272 1",
		"",
		"%end 1700000000 272 1",
	}, "\n")
	var p Parser
	evs := parseAll(&p, in)
	want := []Event{
		&Block{Time: 1700000000, Number: 264, Flags: 0},
		&SessionChanged{Session: "$0", Name: "main"},
		&Block{Time: 1700000000, Number: 269, Flags: 1, Lines: [][]byte{
			[]byte("one"), []byte("%end 123 456 1"), []byte("%end 1700000000 269 0"),
			[]byte("%error 1700000000 268 1"), []byte("%begin 1 2 3"), []byte("%end 1700000000 269 1 "),
		}},
		&Block{Time: 1700000000, Number: 270, Flags: 1, Error: true, Lines: [][]byte{[]byte("can't find pane: %99")}},
		&Block{Time: 1700000000, Number: 271, Flags: 1},
		&Block{Time: 1700000000, Number: 272, Flags: 1, Lines: [][]byte{{}}},
	}
	if !reflect.DeepEqual(evs, want) {
		t.Fatalf("events:\n%#v\nwant\n%#v", evs, want)
	}
	if p.InBlock() {
		t.Error("parser still in a block")
	}
	outs := []string{"", "", "one\n%end 123 456 1\n%end 1700000000 269 0\n%error 1700000000 268 1\n%begin 1 2 3\n%end 1700000000 269 1 \n", "can't find pane: %99\n", "", "\n"}
	for i, ev := range evs {
		if b, ok := ev.(*Block); ok {
			if got := string(b.Output()); got != outs[i] {
				t.Errorf("block %d output %q, want %q", i, got, outs[i])
			}
		}
	}
}

func TestParserStrays(t *testing.T) {
	for _, line := range []string{"plain text", "", "%end 1 2 1", "%error 1 2 1", "%begin 1 2", "%begin a 2 1", "%begin 1  2 1", "%begin -1 2 1"} {
		var p Parser
		ev := p.Parse([]byte(line))
		if _, ok := ev.(*Stray); !ok {
			t.Errorf("%q: got %#v, want *Stray", line, ev)
		}
		if p.InBlock() {
			t.Errorf("%q opened a block", line)
		}
	}
}

func TestParserMaxBlock(t *testing.T) {
	p := Parser{MaxBlock: 8}
	evs := parseAll(&p, "%begin 1 2 1\nabc\ndefgh\nij\n%end 1 2 1")
	b := evs[0].(*Block)
	if len(b.Lines) != 1 || !p.Overflowed() {
		t.Errorf("lines %q overflow %v", b.Lines, p.Overflowed())
	}
}

func TestNotifications(t *testing.T) {
	cases := []struct {
		line string
		want Event
	}{
		{`%output %3 a\011b\134c\015\012`, &Output{Pane: "%3", Data: []byte("a\tb\\c\r\n")}},
		{"%output %3 h\xc3\xa9", &Output{Pane: "%3", Data: []byte("h\xc3\xa9")}},
		{`%output %3 `, &Output{Pane: "%3", Data: []byte{}}},
		{`%extended-output %12 45 : x\012`, &ExtendedOutput{Pane: "%12", Age: 45, Data: []byte("x\n")}},
		{`%extended-output %12 45 r1 r2 : x : y`, &ExtendedOutput{Pane: "%12", Age: 45, Data: []byte("x : y")}},
		{`%pause %4`, &Pause{Pane: "%4"}},
		{`%continue %4`, &Continue{Pane: "%4"}},
		{`%exit`, &Exit{}},
		{`%exit too far behind`, &Exit{Reason: "too far behind"}},
		{`%session-changed $2 my session`, &SessionChanged{Session: "$2", Name: "my session"}},
		{`%client-session-changed /dev/pts/3 $2 s`, &ClientSessionChanged{Client: "/dev/pts/3", Session: "$2", Name: "s"}},
		{`%session-renamed $2 new`, &SessionRenamed{Session: "$2", Name: "new"}},
		{`%session-window-changed $2 @7`, &SessionWindowChanged{Session: "$2", Window: "@7"}},
		{`%sessions-changed`, &SessionsChanged{}},
		{`%window-add @7`, &WindowAdd{Window: "@7"}},
		{`%window-close @7`, &WindowClose{Window: "@7"}},
		{`%unlinked-window-add @7`, &UnlinkedWindowAdd{Window: "@7"}},
		{`%unlinked-window-close @7`, &UnlinkedWindowClose{Window: "@7"}},
		{`%unlinked-window-renamed @7 x y`, &UnlinkedWindowRenamed{Window: "@7", Name: "x y"}},
		{`%window-renamed @7 x y`, &WindowRenamed{Window: "@7", Name: "x y"}},
		{`%window-pane-changed @7 %9`, &WindowPaneChanged{Window: "@7", Pane: "%9"}},
		{`%pane-mode-changed %9`, &PaneModeChanged{Pane: "%9"}},
		{`%layout-change @1 b25d,80x24,0,0,0 b25d,80x24,0,0,0 *`, &LayoutChange{Window: "@1", Layout: "b25d,80x24,0,0,0", VisibleLayout: "b25d,80x24,0,0,0", Flags: "*"}},
		{`%client-detached client-123`, &ClientDetached{Client: "client-123"}},
		{`%subscription-changed sub $1 @2 0 %3 - : v a l`, &SubscriptionChanged{Name: "sub", Session: "$1", Window: "@2", Index: "0", Pane: "%3", Value: []byte("v a l")}},
		// Generic: unknown names and typed names whose ids do not parse.
		{`%message hello world`, &Notification{Name: "message", Args: []string{"hello", "world"}, Line: []byte(`%message hello world`)}},
		{`%paste-buffer-changed buffer0`, &Notification{Name: "paste-buffer-changed", Args: []string{"buffer0"}, Line: []byte(`%paste-buffer-changed buffer0`)}},
		{`%output 3 x`, &Notification{Name: "output", Args: []string{"3", "x"}, Line: []byte(`%output 3 x`)}},
		{`%window-add 7`, &Notification{Name: "window-add", Args: []string{"7"}, Line: []byte(`%window-add 7`)}},
		{`%`, &Notification{Name: "", Line: []byte(`%`)}},
	}
	for _, c := range cases {
		var p Parser
		got := p.Parse([]byte(c.line))
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q:\n got %#v\nwant %#v", c.line, got, c.want)
		}
	}
}

func TestUnescape(t *testing.T) {
	cases := []struct {
		in, want string
		bad      bool
	}{
		{`plain`, "plain", false},
		{`\000\001\037\134\177\377`, "\x00\x01\x1f\\\x7f\xff", false},
		{`a\011b\134c\015\012`, "a\tb\\c\r\n", false},
		{"\xe2\x82\xac raw", "\xe2\x82\xac raw", false},
		{`\`, `\`, true},
		{`\01`, `\01`, true},
		{`\400x`, `\400x`, true},
		{`\08`, `\08`, true},
		{`x\\`, `x\\`, true},
	}
	for _, c := range cases {
		got, err := Unescape([]byte(c.in))
		if string(got) != c.want || (err != nil) != c.bad {
			t.Errorf("Unescape(%q) = %q, %v; want %q, bad=%v", c.in, got, err, c.want, c.bad)
		}
		if err != nil && !errors.Is(err, ErrBadEscape) {
			t.Errorf("error %v is not ErrBadEscape", err)
		}
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	if got, err := Unescape(escape(all)); err != nil || !bytes.Equal(got, all) {
		t.Errorf("Escape/Unescape round trip: %q, %v", got, err)
	}
}

// lexWords is a test model of tmux 3.3a's word lexer (cmd-parse.y,
// yylex_token) for one line: quotes, backslash escapes, and the characters
// that end a word. Enough to check what Quote emits; it rejects what Quote
// must never emit (a bare "$", "~" or "#" that tmux would expand or treat
// as a comment).
func lexWords(line string) ([]string, error) {
	var words []string
	i := 0
	for {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i >= len(line) {
			return words, nil
		}
		switch line[i] {
		case '\n', ';', '#', '{', '}', '%', '~', '$':
			return nil, fmt.Errorf("special %q at word start (offset %d)", line[i], i)
		}
		var w []byte
		state := byte(0)
		for ; i < len(line); i++ {
			c := line[i]
			if state == 0 && (c == ' ' || c == '\t' || c == ';' || c == '}' || c == '\n') {
				break
			}
			if c == '\n' || c == '\r' || c == 0 {
				return nil, fmt.Errorf("raw control byte %q at %d", c, i)
			}
			if c == '\\' && state != '\'' {
				i++
				if i >= len(line) {
					return nil, errors.New("trailing backslash")
				}
				e := line[i]
				if e >= '0' && e <= '3' {
					if i+2 >= len(line) || line[i+1] < '0' || line[i+1] > '7' || line[i+2] < '0' || line[i+2] > '7' {
						return nil, errors.New("bad octal")
					}
					w = append(w, (e-'0')<<6|(line[i+1]-'0')<<3|(line[i+2]-'0'))
					i += 2
					continue
				}
				if strings.IndexByte("4567abefsvrntuU", e) >= 0 {
					return nil, fmt.Errorf("escape \\%c has a meaning", e)
				}
				w = append(w, e)
				continue
			}
			if (c == '$' || c == '~') && state != '\'' {
				return nil, fmt.Errorf("unescaped %q would expand", c)
			}
			if (c == '\'' || c == '"') && (state == 0 || state == c) {
				if state == 0 {
					state = c
				} else {
					state = 0
				}
				continue
			}
			w = append(w, c)
		}
		if state != 0 {
			return nil, errors.New("unterminated quote")
		}
		words = append(words, string(w))
	}
}

func TestQuote(t *testing.T) {
	cases := [][]string{
		{"display-message", "-p", "#{pane_id}"},
		{"set-option", "-g", "@v", ""},
		{"x", "a b", "a;b", ";", "a;", `\;`, "{", "}", "%if", "#", "# c", "~", "~/x", "a~", "$HOME", "${X}", `"`, `'`, `\`, "\n", "line1\nline2", "\r\t\x01\x1f\x7f", "h\xc3\xa9llo \xe2\x82\xac", "\xff\xfe", "-", "--"},
	}
	for _, argv := range cases {
		line, err := Quote(argv)
		if err != nil {
			t.Fatal(err)
		}
		if line == "" || strings.ContainsAny(line, "\n\r\x00") {
			t.Errorf("line %q holds a line break or is empty", line)
		}
		got, err := lexWords(line)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if !reflect.DeepEqual(got, argv) {
			t.Errorf("%q lexed as %q, want %q", line, got, argv)
		}
	}
	if _, err := Quote(nil); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty argv: %v", err)
	}
	if _, err := Quote([]string{"display", "a\x00b"}); !errors.Is(err, ErrNUL) {
		t.Errorf("NUL: %v", err)
	}
	if _, err := Join(); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty join: %v", err)
	}
	if _, err := Join([]string{"a"}, nil); !errors.Is(err, ErrEmpty) {
		t.Errorf("join with an empty command: %v", err)
	}
	line, err := Join([]string{"a", "x;"}, []string{"b"})
	if err != nil || line != `"a" "x;" ; "b"` {
		t.Errorf("Join = %q, %v", line, err)
	}
}

func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", "a", "a b", "~x", "$x", `\`, `"`, "'", ";", "x;", "#{pane_id}", "\n", "\xc3\xa9", "\xff", "%if", "{", "}"} {
		f.Add(s, "-p")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		argv := []string{"set-option", a, b}
		line, err := Quote(argv)
		if strings.ContainsRune(a, 0) || strings.ContainsRune(b, 0) {
			if !errors.Is(err, ErrNUL) {
				t.Fatalf("NUL accepted: %v", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if line == "" || strings.ContainsAny(line, "\n\r") {
			t.Fatalf("line %q", line)
		}
		got, err := lexWords(line)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if !reflect.DeepEqual(got, argv) {
			t.Fatalf("%q lexed as %q", line, got)
		}
	})
}

func FuzzUnescape(f *testing.F) {
	for _, s := range []string{"", `\`, `\0`, `\01`, `\012`, `\400`, `\777`, `a\134b`, "\xff\\", `\\\`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := Unescape(data)
		if len(out) > len(data) {
			t.Fatalf("output longer than input")
		}
		if err == nil {
			// Valid input re-escapes to itself when it came from tmux
			// (no raw control bytes), and always decodes back.
			back, err2 := Unescape(escape(out))
			if err2 != nil || !bytes.Equal(back, out) {
				t.Fatalf("round trip %q -> %q", out, back)
			}
		}
	})
}

// FuzzParseForgedBlock puts arbitrary pane text inside a reply block, as
// capture-pane -p returns it raw, and checks that the parser never panics
// and never ends the block before tmux's own %end.
func FuzzParseForgedBlock(f *testing.F) {
	for _, s := range []string{"", "%end 1700000000 42 1", "%error 1700000000 42 1", "%begin 1700000000 43 1\n%end 1700000000 43 1", "%end 1700000000 42 0", "%exit", "x\n%output %1 a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if strings.Contains(body, "\n%end 1700000000 42 1") || strings.HasPrefix(body, "%end 1700000000 42 1") ||
			strings.Contains(body, "\n%error 1700000000 42 1") || strings.HasPrefix(body, "%error 1700000000 42 1") {
			// An exact copy of the guard (with the right time and number)
			// is ambiguous in the protocol itself; the runner's nonce
			// command catches it. Check only that nothing panics.
			var p Parser
			parseAll(&p, "%begin 1700000000 42 1\n"+body+"\n%end 1700000000 42 1")
			return
		}
		var p Parser
		evs := parseAll(&p, "%begin 1700000000 42 1\n"+body+"\n%end 1700000000 42 1")
		if len(evs) != 1 {
			t.Fatalf("%d events, want one block: %#v", len(evs), evs)
		}
		b := evs[0].(*Block)
		if string(b.Output()) != body+"\n" {
			t.Fatalf("body %q, want %q", b.Output(), body+"\n")
		}
	})
}

// FuzzParse feeds arbitrary lines: the parser must never panic, and a
// block's lines must be exactly the lines between its guards.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"%begin 1 2 1\nx\n%end 1 2 1", "%output %1 \\", "%extended-output %1 5 :", "%subscription-changed a b c d e : f", "%begin 1 2 1\n%begin 1 3 1\n%end 1 3 1", "%layout-change @1", "%session-changed $", "%client-session-changed"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var p Parser
		for _, ev := range parseAll(&p, text) {
			if ev == nil {
				t.Fatal("nil event")
			}
		}
	})
}

// escape is the inverse of Unescape, as tmux writes %output data, for the
// round-trip checks.
func escape(data []byte) []byte {
	out := make([]byte, 0, len(data))
	for _, c := range data {
		if c < 0x20 || c == '\\' {
			out = append(out, '\\', '0'+c>>6, '0'+(c>>3)&7, '0'+c&7)
			continue
		}
		out = append(out, c)
	}
	return out
}

// BenchmarkJoin quotes what a get_pane_info sends: display-message with
// an 18-field format and the reply's end marker.
func BenchmarkJoin(b *testing.B) {
	format := "\x1e#{pane_id}\x1f#{pane_index}\x1f#{pane_left}\x1f#{pane_top}\x1f#{pane_width}\x1f#{pane_height}\x1f#{pane_at_right}\x1f#{pane_at_top}\x1f#{pane_at_bottom}\x1f#{pane_tty}\x1f#{pane_pid}\x1f#{pane_title}\x1f#{pane_active}\x1f#{window_id}\x1f#{session_id}\x1f#{socket_path}\x1f#{pane_current_command}\x1f#{pane_current_path}\ntmux-mcp-37f00b5bd8c761c5c0e32f1e-end"
	argv := []string{"display-message", "-p", "-t", "%0", format}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Join(argv); err != nil {
			b.Fatal(err)
		}
	}
}
