// Package control parses and speaks the tmux control-mode protocol (tmux -C,
// as of tmux 3.3a) without running anything: a line parser for reply blocks
// and notifications, %output unescaping, a per-pane output assembler, and
// quoting of an argv into one command line for tmux's command parser.
package control

import (
	"bytes"
	"strconv"
)

// Event is what the parser makes of one line: a completed reply *Block, a
// typed notification, a generic *Notification, or a *Stray line that fits
// nowhere. Lines inside a block produce no event until the block ends.
type Event interface{ event() }

// Block is one command's reply: the lines between "%begin T N F" and the
// matching "%end T N F" or "%error T N F". Flags 1 means the command came
// from this client's standard input; 0 marks commands tmux ran for the
// client on its own (the attach command, hooks).
type Block struct {
	Time   int64
	Number uint64
	Flags  int
	Error  bool     // ended with %error
	Lines  [][]byte // body lines without their "\n"; raw, never unescaped
}

// Output returns the body as a command's standard output would look over
// exec: every line followed by "\n" (an empty body is empty output).
func (b *Block) Output() []byte {
	n := 0
	for _, l := range b.Lines {
		n += len(l) + 1
	}
	out := make([]byte, 0, n)
	for _, l := range b.Lines {
		out = append(out, l...)
		out = append(out, '\n')
	}
	return out
}

// Stray is a line outside any block that is not a notification: body text
// after a forged or misplaced %end, a %end/%error with no open block, or a
// malformed %begin. tmux itself never writes one, so a client should treat
// it as a sign that the stream can no longer be trusted.
type Stray struct {
	Line   []byte
	Reason string
}

// Notification is any %-line outside a block that has no typed event (or
// whose arguments did not parse): Name without the "%", Args split on
// single spaces.
type Notification struct {
	Name string
	Args []string
	Line []byte
}

// Output is "%output %<pane> <escaped data>", already unescaped.
type Output struct {
	Pane string // "%3"
	Data []byte
}

// ExtendedOutput is "%extended-output %<pane> <age ms> ... : <escaped data>"
// (clients with pause-after), already unescaped.
type ExtendedOutput struct {
	Pane string
	Age  uint64
	Data []byte
}

// Pause is "%pause %<pane>": tmux stopped sending the pane's output.
type Pause struct{ Pane string }

// Continue is "%continue %<pane>": output of a paused pane resumed.
type Continue struct{ Pane string }

// Exit is "%exit [reason]": the client is detaching; the stream ends.
type Exit struct{ Reason string }

// SessionChanged is "%session-changed $<id> <name>": this client now shows
// another session.
type SessionChanged struct{ Session, Name string }

// ClientSessionChanged is "%client-session-changed <client> $<id> <name>".
type ClientSessionChanged struct{ Client, Session, Name string }

// SessionRenamed is "%session-renamed $<id> <name>".
type SessionRenamed struct{ Session, Name string }

// SessionWindowChanged is "%session-window-changed $<id> @<id>".
type SessionWindowChanged struct{ Session, Window string }

// SessionsChanged is "%sessions-changed": a session was created or destroyed.
type SessionsChanged struct{}

// WindowAdd is "%window-add @<id>".
type WindowAdd struct{ Window string }

// WindowClose is "%window-close @<id>".
type WindowClose struct{ Window string }

// UnlinkedWindowAdd is "%unlinked-window-add @<id>".
type UnlinkedWindowAdd struct{ Window string }

// UnlinkedWindowClose is "%unlinked-window-close @<id>".
type UnlinkedWindowClose struct{ Window string }

// UnlinkedWindowRenamed is "%unlinked-window-renamed @<id> <name>".
type UnlinkedWindowRenamed struct{ Window, Name string }

// WindowRenamed is "%window-renamed @<id> <name>".
type WindowRenamed struct{ Window, Name string }

// WindowPaneChanged is "%window-pane-changed @<id> %<id>".
type WindowPaneChanged struct{ Window, Pane string }

// PaneModeChanged is "%pane-mode-changed %<id>".
type PaneModeChanged struct{ Pane string }

// LayoutChange is "%layout-change @<id> <layout> <visible layout> <flags>".
type LayoutChange struct{ Window, Layout, VisibleLayout, Flags string }

// ClientDetached is "%client-detached <client>".
type ClientDetached struct{ Client string }

// SubscriptionChanged is "%subscription-changed <name> $<session> @<window>
// <index> %<pane> ... : <value>"; ids tmux leaves out are "-".
type SubscriptionChanged struct {
	Name, Session, Window, Index, Pane string
	Value                              []byte
}

func (*Block) event()                 {}
func (*Stray) event()                 {}
func (*Notification) event()          {}
func (*Output) event()                {}
func (*ExtendedOutput) event()        {}
func (*Pause) event()                 {}
func (*Continue) event()              {}
func (*Exit) event()                  {}
func (*SessionChanged) event()        {}
func (*ClientSessionChanged) event()  {}
func (*SessionRenamed) event()        {}
func (*SessionWindowChanged) event()  {}
func (*SessionsChanged) event()       {}
func (*WindowAdd) event()             {}
func (*WindowClose) event()           {}
func (*UnlinkedWindowAdd) event()     {}
func (*UnlinkedWindowClose) event()   {}
func (*UnlinkedWindowRenamed) event() {}
func (*WindowRenamed) event()         {}
func (*WindowPaneChanged) event()     {}
func (*PaneModeChanged) event()       {}
func (*LayoutChange) event()          {}
func (*ClientDetached) event()        {}
func (*SubscriptionChanged) event()   {}

// Parser turns control-mode output, one line at a time, into events. It
// keeps the open block between calls; the zero value is ready to use.
type Parser struct {
	open  *Block
	guard []byte // "T N F" of the open block, compared byte for byte
	size  int
	// MaxBlock bounds the bytes one block may hold (0: no bound); the
	// excess is dropped and Overflow set on the block's event.
	MaxBlock int
	overflow bool
}

// Overflowed reports whether the last block returned lost lines to MaxBlock.
func (p *Parser) Overflowed() bool { return p.overflow }

// InBlock reports whether a block is open.
func (p *Parser) InBlock() bool { return p.open != nil }

// Parse consumes one line (without its "\n"; a trailing "\r" is kept as
// data) and returns the event it completes, or nil. Inside a block every
// line is data, whatever it starts with, until "%end" or "%error" followed
// by exactly the time, number and flags of the "%begin". The parser keeps
// no reference to line.
func (p *Parser) Parse(line []byte) Event {
	if p.open != nil {
		if rest, ok := guardRest(line); ok && bytes.Equal(rest, p.guard) {
			b := p.open
			b.Error = line[1] == 'e' && line[2] == 'r'
			p.open, p.guard = nil, nil
			return b
		}
		if p.overflow || (p.MaxBlock > 0 && p.size+len(line)+1 > p.MaxBlock) {
			p.overflow = true
			return nil
		}
		p.size += len(line) + 1
		p.open.Lines = append(p.open.Lines, bytes.Clone(line))
		return nil
	}
	if len(line) == 0 || line[0] != '%' {
		return &Stray{Line: bytes.Clone(line), Reason: "text outside a reply block"}
	}
	name, args := splitName(line)
	switch name {
	case "begin":
		t, n, f, ok := parseGuard(args)
		if !ok {
			return &Stray{Line: bytes.Clone(line), Reason: "malformed %begin"}
		}
		p.open = &Block{Time: t, Number: n, Flags: f}
		p.guard = bytes.Clone(args)
		p.size = 0
		p.overflow = false
		return nil
	case "end", "error":
		return &Stray{Line: bytes.Clone(line), Reason: "%" + name + " without an open block"}
	}
	if ev := parseNotification(name, args); ev != nil {
		return ev
	}
	return generic(name, args, line)
}

// guardRest returns the "T N F" after "%end " or "%error ".
func guardRest(line []byte) ([]byte, bool) {
	switch {
	case bytes.HasPrefix(line, []byte("%end ")):
		return line[5:], true
	case bytes.HasPrefix(line, []byte("%error ")):
		return line[7:], true
	}
	return nil, false
}

func splitName(line []byte) (string, []byte) {
	body := line[1:]
	if i := bytes.IndexByte(body, ' '); i >= 0 {
		return string(body[:i]), body[i+1:]
	}
	return string(body), nil
}

// parseGuard reads "<time> <number> <flags>" exactly as tmux prints them
// ("%ld %u %d"): three decimal fields separated by one space.
func parseGuard(args []byte) (int64, uint64, int, bool) {
	f := bytes.Split(args, []byte(" "))
	if len(f) != 3 {
		return 0, 0, 0, false
	}
	for _, x := range f {
		if !isDecimal(x) {
			return 0, 0, 0, false
		}
	}
	t, err1 := strconv.ParseInt(string(f[0]), 10, 64)
	n, err2 := strconv.ParseUint(string(f[1]), 10, 64)
	fl, err3 := strconv.Atoi(string(f[2]))
	if err1 != nil || err2 != nil || err3 != nil {
		return 0, 0, 0, false
	}
	return t, n, fl, true
}

func isDecimal(b []byte) bool {
	if len(b) == 0 || len(b) > 19 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func generic(name string, args, line []byte) *Notification {
	n := &Notification{Name: name, Line: bytes.Clone(line)}
	if len(args) > 0 {
		for _, a := range bytes.Split(args, []byte(" ")) {
			n.Args = append(n.Args, string(a))
		}
	}
	return n
}

// id checks a tmux object id: prefix ($, @ or %) and decimal digits.
func id(b []byte, prefix byte) (string, bool) {
	if len(b) < 2 || b[0] != prefix || !isDecimal(b[1:]) {
		return "", false
	}
	return string(b), true
}

// cut splits off the first space-separated field.
func cut(b []byte) ([]byte, []byte) {
	if i := bytes.IndexByte(b, ' '); i >= 0 {
		return b[:i], b[i+1:]
	}
	return b, nil
}

// parseNotification returns the typed event for name, or nil when the name
// is not typed or its arguments do not parse (the caller then passes the
// line on generically).
func parseNotification(name string, args []byte) Event {
	switch name {
	case "output":
		p, data := cut(args)
		pane, ok := id(p, '%')
		if !ok {
			return nil
		}
		raw, _ := Unescape(data)
		return &Output{Pane: pane, Data: raw}
	case "extended-output":
		p, rest := cut(args)
		pane, ok := id(p, '%')
		if !ok {
			return nil
		}
		a, rest := cut(rest)
		if !isDecimal(a) {
			return nil
		}
		age, err := strconv.ParseUint(string(a), 10, 64)
		if err != nil {
			return nil
		}
		// Reserved fields may follow the age; the data starts after " : ".
		var data []byte
		if bytes.HasPrefix(rest, []byte(": ")) {
			data = rest[2:]
		} else if i := bytes.Index(rest, []byte(" : ")); i >= 0 {
			data = rest[i+3:]
		} else if string(rest) == ":" {
			data = nil
		} else {
			return nil
		}
		raw, _ := Unescape(data)
		return &ExtendedOutput{Pane: pane, Age: age, Data: raw}
	case "pause", "continue", "pane-mode-changed":
		pane, ok := id(args, '%')
		if !ok {
			return nil
		}
		switch name {
		case "pause":
			return &Pause{Pane: pane}
		case "continue":
			return &Continue{Pane: pane}
		}
		return &PaneModeChanged{Pane: pane}
	case "exit":
		return &Exit{Reason: string(args)}
	case "sessions-changed":
		if len(args) != 0 {
			return nil
		}
		return &SessionsChanged{}
	case "session-changed", "session-renamed":
		s, n := cut(args)
		sid, ok := id(s, '$')
		if !ok {
			return nil
		}
		if name == "session-changed" {
			return &SessionChanged{Session: sid, Name: string(n)}
		}
		return &SessionRenamed{Session: sid, Name: string(n)}
	case "client-session-changed":
		c, rest := cut(args)
		s, n := cut(rest)
		sid, ok := id(s, '$')
		if !ok || len(c) == 0 {
			return nil
		}
		return &ClientSessionChanged{Client: string(c), Session: sid, Name: string(n)}
	case "session-window-changed":
		s, w := cut(args)
		sid, ok1 := id(s, '$')
		wid, ok2 := id(w, '@')
		if !ok1 || !ok2 {
			return nil
		}
		return &SessionWindowChanged{Session: sid, Window: wid}
	case "window-add", "window-close", "unlinked-window-add", "unlinked-window-close":
		wid, ok := id(args, '@')
		if !ok {
			return nil
		}
		switch name {
		case "window-add":
			return &WindowAdd{Window: wid}
		case "window-close":
			return &WindowClose{Window: wid}
		case "unlinked-window-add":
			return &UnlinkedWindowAdd{Window: wid}
		}
		return &UnlinkedWindowClose{Window: wid}
	case "window-renamed", "unlinked-window-renamed":
		w, n := cut(args)
		wid, ok := id(w, '@')
		if !ok {
			return nil
		}
		if name == "window-renamed" {
			return &WindowRenamed{Window: wid, Name: string(n)}
		}
		return &UnlinkedWindowRenamed{Window: wid, Name: string(n)}
	case "window-pane-changed":
		w, p := cut(args)
		wid, ok1 := id(w, '@')
		pid, ok2 := id(p, '%')
		if !ok1 || !ok2 {
			return nil
		}
		return &WindowPaneChanged{Window: wid, Pane: pid}
	case "layout-change":
		w, rest := cut(args)
		wid, ok := id(w, '@')
		if !ok {
			return nil
		}
		l, rest := cut(rest)
		v, fl := cut(rest)
		return &LayoutChange{Window: wid, Layout: string(l), VisibleLayout: string(v), Flags: string(fl)}
	case "client-detached":
		if len(args) == 0 || bytes.IndexByte(args, ' ') >= 0 {
			return nil
		}
		return &ClientDetached{Client: string(args)}
	case "subscription-changed":
		i := bytes.Index(args, []byte(" : "))
		if i < 0 {
			return nil
		}
		f := bytes.Split(args[:i], []byte(" "))
		if len(f) < 5 {
			return nil
		}
		return &SubscriptionChanged{
			Name: string(f[0]), Session: string(f[1]), Window: string(f[2]),
			Index: string(f[3]), Pane: string(f[4]), Value: bytes.Clone(args[i+3:]),
		}
	}
	return nil
}
