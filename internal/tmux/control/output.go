package control

import (
	"bytes"
	"errors"
	"unicode/utf8"
)

// ErrBadEscape reports a backslash in %output data that is not followed by
// three octal digits with a value below 0400.
var ErrBadEscape = errors.New("control: malformed \\ooo escape in %output data")

// Unescape decodes %output data: tmux writes every byte below 0x20 and the
// backslash as "\ooo" (three octal digits) and every other byte, including
// 0x80 and above, as itself. A malformed escape is kept literally and
// reported with ErrBadEscape; the rest is still decoded.
func Unescape(data []byte) ([]byte, error) {
	if bytes.IndexByte(data, '\\') < 0 {
		return bytes.Clone(data), nil
	}
	out := make([]byte, 0, len(data))
	var err error
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i+3 < len(data) && isOctal(data[i+1]) && isOctal(data[i+2]) && isOctal(data[i+3]) && data[i+1] <= '3' {
			out = append(out, (data[i+1]-'0')<<6|(data[i+2]-'0')<<3|(data[i+3]-'0'))
			i += 3
			continue
		}
		err = ErrBadEscape
		out = append(out, c)
	}
	return out, err
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// Escape is the inverse of Unescape, as tmux writes %output data.
func Escape(data []byte) []byte {
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

// DefaultMaxLine bounds the partial line an Assembler holds per pane.
const DefaultMaxLine = 1 << 20

// Assembler rebuilds each pane's byte stream from %output events, which
// tmux cuts wherever its read happened to end: in the middle of a line or of
// a UTF-8 sequence. The zero value is ready to use; it is not safe for
// concurrent use.
type Assembler struct {
	// MaxLine bounds the partial line kept per pane (DefaultMaxLine when
	// 0). A longer line is handed out in pieces cut at character
	// boundaries, so memory stays bounded whatever a pane prints.
	MaxLine int
	panes   map[string][]byte
}

// Feed appends a pane's data and returns the lines it completed, without
// their "\n" (a "\r" before it is kept: the pane's bytes are not
// interpreted). The unfinished rest stays buffered for the next Feed.
func (a *Assembler) Feed(pane string, data []byte) [][]byte {
	if a.panes == nil {
		a.panes = make(map[string][]byte)
	}
	max := a.MaxLine
	if max <= 0 {
		max = DefaultMaxLine
	}
	buf := append(a.panes[pane], data...)
	var lines [][]byte
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, bytes.Clone(buf[:i]))
		buf = buf[i+1:]
	}
	for len(buf) > max {
		cut := max
		// Cut before an unfinished character, but never make no progress.
		if head, _ := SplitUTF8(buf[:cut]); len(head) > 0 {
			cut = len(head)
		}
		lines = append(lines, bytes.Clone(buf[:cut]))
		buf = buf[cut:]
	}
	if len(buf) == 0 {
		delete(a.panes, pane)
	} else {
		a.panes[pane] = bytes.Clone(buf)
	}
	return lines
}

// Pending returns the pane's buffered partial line, up to its last complete
// UTF-8 character (a sequence still waiting for its continuation bytes is
// left out). It does not consume anything.
func (a *Assembler) Pending(pane string) []byte {
	head, _ := SplitUTF8(a.panes[pane])
	return bytes.Clone(head)
}

// Flush returns and forgets everything buffered for the pane, an unfinished
// UTF-8 sequence included (use it when the pane closes).
func (a *Assembler) Flush(pane string) []byte {
	b := a.panes[pane]
	delete(a.panes, pane)
	return b
}

// SplitUTF8 splits b before a trailing UTF-8 sequence that is incomplete
// but could still be completed by more bytes. Invalid bytes are not held
// back: they can never become valid, so they belong to head.
func SplitUTF8(b []byte) (head, tail []byte) {
	// A sequence is at most 4 bytes: look at the last 3 for its start.
	for k := 1; k <= 3 && k <= len(b); k++ {
		c := b[len(b)-k]
		if c&0xC0 == 0x80 { // continuation byte: keep looking back
			continue
		}
		if c < 0xC0 { // ASCII or stray: nothing pending
			return b, nil
		}
		need := 0
		switch {
		case c&0xE0 == 0xC0:
			need = 2
		case c&0xF0 == 0xE0:
			need = 3
		case c&0xF8 == 0xF0:
			need = 4
		default:
			return b, nil
		}
		if k < need && !utf8.FullRune(b[len(b)-k:]) {
			return b[:len(b)-k], b[len(b)-k:]
		}
		return b, nil
	}
	return b, nil
}
