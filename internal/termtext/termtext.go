// Package termtext turns the raw bytes a program wrote to its terminal into
// the lines a person saw: escape sequences removed, carriage returns and
// backspaces applied, and OSC sequences handed to the caller (tmux-mcp uses
// an invisible OSC as the end-of-command marker of run_command).
package termtext

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
)

type state int

// The states follow the DEC/ECMA-48 parser that terminals (and tmux's
// input.c) implement. What matters for the text a person sees is which
// bytes a sequence consumes: ESC, CAN and SUB abort any open sequence from
// any state, so a program that stops in the middle of one ("printf
// '\033]0;title'", a lone ESC) cannot hide what is printed after it.
const (
	ground    state = iota
	escape          // after ESC
	escInter        // ESC followed by intermediates (0x20-0x2f), e.g. ESC ( B
	csi             // ESC [ parameters
	csiInter        // CSI with intermediates (0x20-0x2f): waits for the final byte
	csiIgnore       // malformed CSI: consumed up to its final byte
	osc             // ESC ] payload, ended by BEL or ST (ESC \)
	dcs             // ESC P parameters and intermediates, before the final byte
	dcsPass         // DCS data after the final byte, up to ST
	str             // APC (ESC _), SOS (ESC X), PM (ESC ^), screen's title (ESC k), a malformed DCS: up to ST
)

// MaxLine bounds a line's length; longer lines are split.
const MaxLine = 1 << 20

// maxParams mirrors tmux: a CSI whose parameter bytes fill its 64-byte
// buffer is discarded, as is one with 24 or more parameters.
const (
	maxParamBytes = 63
	maxParams     = 24
	maxInterm     = 3
)

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
	interm  int  // intermediate (and private marker) bytes of the CSI
	discard bool // the CSI overflowed tmux's buffers: ignore it
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
		// From any state: CAN and SUB cancel the sequence, ESC starts a
		// new one. An OSC ended by ESC is complete (ESC \ is ST; tmux
		// also takes ESC followed by anything else as its end).
		switch c {
		case 0x18, 0x1a:
			d.st = ground
			i++
			continue
		case 0x1b:
			if d.st == osc {
				d.endOSC()
			}
			d.st = escape
			i++
			continue
		}
		switch d.st {
		case ground:
			if c >= 0x80 {
				r, n := utf8.DecodeRune(b[i:])
				if r == utf8.RuneError && n <= 1 && !utf8.FullRune(b[i:]) {
					d.carry = append([]byte(nil), b[i:]...)
					return d.lines
				}
				d.put(r)
				i += n
				continue
			}
			switch {
			case c < 0x20:
				d.control(c)
			case c < 0x7f:
				d.put(rune(c))
			}
		case escape:
			switch {
			case c < 0x20:
				d.control(c)
			case c < 0x30:
				d.st = escInter
			case c == '[':
				d.st, d.params, d.interm, d.discard = csi, d.params[:0], 0, false
			case c == ']':
				d.st, d.payload = osc, d.payload[:0]
			case c == 'P':
				d.st = dcs
			case c == 'X', c == '^', c == '_', c == 'k':
				d.st = str
			case c < 0x7f:
				d.st = ground
			}
		case escInter:
			switch {
			case c < 0x20:
				d.control(c)
			case c >= 0x30 && c < 0x7f:
				d.st = ground
			}
		case csi:
			switch {
			case c < 0x20:
				d.control(c)
			case c < 0x30:
				d.st = csiInter
				d.intermediate()
			case c < 0x3c:
				if len(d.params) >= maxParamBytes {
					d.discard = true
				} else {
					d.params = append(d.params, c)
				}
			case c < 0x40:
				// A private marker (< = > ?) leads the parameters; anywhere
				// else the sequence is malformed.
				if len(d.params) == 0 && d.interm == 0 {
					d.intermediate()
				} else {
					d.st = csiIgnore
				}
			case c < 0x7f:
				d.csi(c)
				d.st = ground
			}
		case csiInter:
			switch {
			case c < 0x20:
				d.control(c)
			case c < 0x30:
				d.intermediate()
			case c < 0x40:
				d.st = csiIgnore
			case c < 0x7f:
				d.st = ground // no sequence with intermediates changes the text
			}
		case csiIgnore:
			switch {
			case c < 0x20:
				d.control(c)
			case c >= 0x40 && c < 0x7f:
				d.st = ground
			}
		case osc:
			switch {
			case c == 0x07:
				d.endOSC()
			case c >= 0x20 && len(d.payload) < 4096:
				d.payload = append(d.payload, c)
			}
		case dcs:
			if c >= 0x40 && c < 0x7f {
				d.st = dcsPass
			}
		case dcsPass, str:
			// Skipped up to ST. tmux alone keeps a DCS open across an ESC
			// that does not start ST (for its passthrough); terminals and
			// ECMA-48 end it there, which also keeps a stray "ESC P" from
			// hiding the end marker of run_command.
		}
		i++
	}
	return d.lines
}

// control executes a C0 control character; terminals do this in the middle
// of an escape or control sequence too.
func (d *Decoder) control(c byte) {
	switch c {
	case '\n':
		d.emit()
	case '\r':
		d.pos = 0
	case '\b':
		if d.pos > 0 {
			d.pos--
		}
	case '\t':
		d.put('\t')
	}
}

func (d *Decoder) intermediate() {
	if d.interm >= maxInterm {
		d.discard = true
	} else {
		d.interm++
	}
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

// csi applies the control sequences that change which text stays on a
// line; everything else (colours, cursor keys, modes) is dropped. The first
// parameter is read the way tmux reads it: missing or below the minimum
// takes the default, and a malformed parameter list drops the sequence.
func (d *Decoder) csi(final byte) {
	if d.discard || d.interm > 0 {
		return
	}
	first, ok := firstParam(d.params)
	if !ok || first == -2 {
		return
	}
	arg := func(def int) int {
		if first < 0 {
			return def
		}
		return max(first, def)
	}
	switch final {
	case 'K': // erase in line
		switch arg(0) {
		case 0:
			if d.pos < len(d.line) {
				d.line = d.line[:d.pos]
			}
		case 1:
			for i := 0; i <= d.pos && i < len(d.line); i++ {
				d.line[i] = ' '
			}
		case 2:
			d.line = d.line[:0]
		}
	case 'G', '`': // cursor to column n
		d.pos = arg(1) - 1
	case 'C': // cursor forward
		d.pos += arg(1)
	case 'D': // cursor back
		d.pos = max(d.pos-arg(1), 0)
	case 'P': // delete characters, the rest of the line moves left
		if d.pos < len(d.line) {
			n := min(arg(1), len(d.line)-d.pos)
			d.line = append(d.line[:d.pos], d.line[d.pos+n:]...)
		}
	case 'X': // erase characters (blank them, the cursor stays)
		for i := d.pos; i < d.pos+arg(1) && i < len(d.line); i++ {
			d.line[i] = ' '
		}
	case '@': // insert blanks, the rest of the line moves right
		if d.pos < len(d.line) {
			n := min(arg(1), MaxLine-len(d.line))
			if n > 0 {
				tail := append([]rune(nil), d.line[d.pos:]...)
				d.line = append(d.line[:d.pos], []rune(strings.Repeat(" ", n))...)
				d.line = append(d.line, tail...)
			}
		}
	}
	// A program may move the cursor anywhere ("ESC[999999999C"); a line is
	// never padded beyond MaxLine, so memory stays bounded.
	d.pos = min(d.pos, MaxLine-1)
}

// firstParam returns the first CSI parameter: -1 when it is missing, -2
// when it is a sub-parameter list ("1:2", which tmux's cursor and erase
// sequences then ignore); ok is false when the parameter list is malformed
// (a number beyond 2^31-1, 24 or more parameters), and tmux then drops the
// sequence.
func firstParam(p []byte) (n int, ok bool) {
	if len(p) == 0 {
		return -1, true
	}
	fields := bytes.Split(p, []byte{';'})
	if len(fields) >= maxParams {
		return 0, false
	}
	n = -1
	for i, f := range fields {
		if len(f) == 0 {
			continue
		}
		if bytes.IndexByte(f, ':') >= 0 {
			if i == 0 {
				n = -2
			}
			continue
		}
		v, err := strconv.ParseInt(string(f), 10, 32)
		if err != nil {
			return 0, false
		}
		if i == 0 {
			n = int(min(v, MaxLine))
		}
	}
	return n, true
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
