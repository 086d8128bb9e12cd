// Package termtext turns the raw bytes a program wrote to its terminal into
// the lines a person saw: escape sequences removed, carriage returns and
// backspaces applied, and OSC sequences handed to the caller (tmux-mcp uses
// an invisible OSC as the end-of-command marker of run_command).
package termtext

import (
	"strconv"
	"unicode/utf8"
)

type state int

const (
	ground state = iota
	escape
	csi
	osc
	oscEscape // ESC seen inside an OSC: expecting '\' (ST)
	str       // DCS, SOS, PM, APC: skipped up to ST
	strEscape
	charset // ESC ( X and friends: one more byte
)

// MaxLine bounds a line's length; longer lines are split.
const MaxLine = 1 << 20

// Decoder is a streaming decoder: feed it bytes in any chunking, collect
// complete lines. The zero value is ready to use.
type Decoder struct {
	// OnOSC, when set, receives each OSC payload (between "ESC ]" and BEL or
	// ST) in stream order, together with the lines completed before it.
	OnOSC func(payload string)

	st      state
	line    []rune
	pos     int
	params  []byte
	payload []byte
	carry   []byte // an incomplete UTF-8 sequence
	lines   []string
}

// Write decodes b and returns the lines it completed (those not already
// taken by TakeLines from an OnOSC callback).
func (d *Decoder) Write(b []byte) []string {
	d.lines = nil
	if len(d.carry) > 0 {
		b = append(d.carry, b...)
		d.carry = nil
	}
	for i := 0; i < len(b); {
		c := b[i]
		switch d.st {
		case ground:
			switch {
			case c == '\n':
				d.emit()
			case c == '\r':
				d.pos = 0
			case c == '\b':
				if d.pos > 0 {
					d.pos--
				}
			case c == '\t':
				d.put('\t')
			case c == 0x1b:
				d.st = escape
			case c < 0x20 || c == 0x7f:
			case c < 0x80:
				d.put(rune(c))
			default:
				r, n := utf8.DecodeRune(b[i:])
				if r == utf8.RuneError && n <= 1 && !utf8.FullRune(b[i:]) {
					d.carry = append([]byte(nil), b[i:]...)
					return d.lines
				}
				d.put(r)
				i += n
				continue
			}
		case escape:
			switch c {
			case '[':
				d.st, d.params = csi, d.params[:0]
			case ']':
				d.st, d.payload = osc, d.payload[:0]
			case 'P', 'X', '^', '_':
				d.st = str
			case '(', ')', '*', '+', '-', '.', '/', '#', '%':
				d.st = charset
			default:
				d.st = ground
			}
		case charset:
			d.st = ground
		case csi:
			if c >= 0x40 && c <= 0x7e {
				d.csi(c)
				d.st = ground
			} else if len(d.params) < 64 {
				d.params = append(d.params, c)
			}
		case osc:
			switch c {
			case 0x07:
				d.endOSC()
			case 0x1b:
				d.st = oscEscape
			default:
				if len(d.payload) < 4096 {
					d.payload = append(d.payload, c)
				}
			}
		case oscEscape:
			if c == '\\' {
				d.endOSC()
			} else {
				d.st = osc
			}
		case str:
			if c == 0x1b {
				d.st = strEscape
			} else if c == 0x07 {
				d.st = ground
			}
		case strEscape:
			if c == '\\' {
				d.st = ground
			} else {
				d.st = str
			}
		}
		i++
	}
	return d.lines
}

func (d *Decoder) put(r rune) {
	if d.pos < len(d.line) {
		d.line[d.pos] = r
	} else {
		for len(d.line) < d.pos {
			d.line = append(d.line, ' ')
		}
		d.line = append(d.line, r)
	}
	d.pos++
	if len(d.line) >= MaxLine {
		d.emit()
	}
}

func (d *Decoder) emit() {
	d.lines = append(d.lines, string(d.line))
	d.line = d.line[:0]
	d.pos = 0
}

func (d *Decoder) endOSC() {
	d.st = ground
	if d.OnOSC != nil {
		d.OnOSC(string(d.payload))
	}
}

// csi applies the few control sequences that change which text stays on a
// line; everything else (colours, cursor keys, modes) is dropped.
func (d *Decoder) csi(final byte) {
	n := 1
	if len(d.params) > 0 {
		if v, err := strconv.Atoi(string(d.params)); err == nil {
			n = min(v, MaxLine)
		}
	}
	switch final {
	case 'K': // erase in line
		switch string(d.params) {
		case "", "0":
			if d.pos < len(d.line) {
				d.line = d.line[:d.pos]
			}
		case "2":
			d.line = d.line[:0]
		}
	case 'G': // cursor to column n
		if n >= 1 {
			d.pos = n - 1
		}
	case 'C': // cursor forward
		d.pos += max(n, 1)
	case 'D': // cursor back
		d.pos = max(d.pos-max(n, 1), 0)
	}
	// A program may move the cursor anywhere ("ESC[999999999C"); a line is
	// never padded beyond MaxLine, so memory stays bounded.
	d.pos = min(d.pos, MaxLine-1)
}

// TakeLines returns the lines completed so far in the current Write and
// removes them from what Write will return. An OnOSC callback uses it to
// split the stream exactly at the OSC sequence.
func (d *Decoder) TakeLines() []string {
	l := d.lines
	d.lines = nil
	return l
}

// ResetLine forgets the unfinished line (text written before a marker).
func (d *Decoder) ResetLine() {
	d.line = d.line[:0]
	d.pos = 0
}

// Partial returns the line being written (not yet ended by a newline).
func (d *Decoder) Partial() string { return string(d.line) }

// Lines decodes a whole buffer at once: the complete lines, plus the
// unfinished last line when it is not empty.
func Lines(b []byte) []string {
	var d Decoder
	out := d.Write(b)
	if p := d.Partial(); p != "" {
		out = append(out, p)
	}
	return out
}
