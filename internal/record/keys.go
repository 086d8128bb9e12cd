package record

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Keys is what a terminal program reads when tmux's send-keys is given
// keys as one argument: a key name (Enter, C-c, M-x, Up, F5...) becomes
// the bytes tmux writes for that key, as it does for a pane in its
// default modes (ordinary cursor keys); any other string, or any string
// with literal (send-keys -l), is typed as it is. It is how a recording's
// input events show what an agent typed.
func Keys(keys string, literal bool) []byte {
	if !literal {
		if b, ok := keyBytes(keys); ok {
			return b
		}
	}
	return []byte(keys)
}

// keyBytes parses a tmux key name (key-string.c) into the bytes the
// pane's program reads (input-keys.c).
func keyBytes(s string) ([]byte, bool) {
	if s == "" {
		return nil, false
	}
	var ctrl, meta, shift bool
	for len(s) > 2 && s[1] == '-' {
		switch s[0] {
		case 'C', 'c':
			ctrl = true
		case 'M', 'm':
			meta = true
		case 'S', 's':
			shift = true
		default:
			return nil, false
		}
		s = s[2:]
	}
	if len(s) > 1 && s[0] == '^' {
		ctrl, s = true, s[1:]
	}
	var out []byte
	if r, size := utf8.DecodeRuneInString(s); size == len(s) && r != utf8.RuneError {
		out = []byte(s)
		if shift && r < utf8.RuneSelf {
			out = []byte(strings.ToUpper(s))
		}
		if ctrl {
			c, ok := ctrlByte(out)
			if !ok {
				return nil, false
			}
			out = []byte{c}
		}
	} else if seq, ok := namedKeys[strings.ToLower(s)]; ok {
		out = []byte(seq)
		if ctrl && seq == " " {
			out = []byte{0} // C-Space is NUL, as C-@
		}
		if m := 1 + b2i(shift) + 2*b2i(meta) + 4*b2i(ctrl); m > 1 && modifiable(seq) {
			return withModifier(seq, m), true
		}
	} else {
		return nil, false
	}
	if meta {
		out = append([]byte{0x1b}, out...)
	}
	return out, true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ctrlByte is the control character a terminal sends for Ctrl and a key.
func ctrlByte(k []byte) (byte, bool) {
	if len(k) != 1 {
		return 0, false
	}
	c := k[0]
	switch {
	case c >= 'a' && c <= 'z':
		return c - 'a' + 1, true
	case c >= 'A' && c <= 'Z':
		return c - 'A' + 1, true
	}
	switch c {
	case '@', ' ', '2':
		return 0, true
	case '[', '3':
		return 0x1b, true
	case '\\', '4':
		return 0x1c, true
	case ']', '5':
		return 0x1d, true
	case '^', '~', '6':
		return 0x1e, true
	case '_', '/', '7':
		return 0x1f, true
	case '?', '8':
		return 0x7f, true
	}
	return 0, false
}

// namedKeys are tmux's key names (lower case) and what tmux writes for
// each to a pane in its default modes.
var namedKeys = map[string]string{
	"enter": "\r", "tab": "\t", "btab": "\x1b[Z", "space": " ", "bspace": "\x7f", "escape": "\x1b",
	"up": "\x1b[A", "down": "\x1b[B", "right": "\x1b[C", "left": "\x1b[D",
	"home": "\x1b[1~", "end": "\x1b[4~", "ic": "\x1b[2~", "insert": "\x1b[2~", "dc": "\x1b[3~", "delete": "\x1b[3~",
	"ppage": "\x1b[5~", "pageup": "\x1b[5~", "pgup": "\x1b[5~", "npage": "\x1b[6~", "pagedown": "\x1b[6~", "pgdn": "\x1b[6~",
	"f1": "\x1bOP", "f2": "\x1bOQ", "f3": "\x1bOR", "f4": "\x1bOS", "f5": "\x1b[15~", "f6": "\x1b[17~",
	"f7": "\x1b[18~", "f8": "\x1b[19~", "f9": "\x1b[20~", "f10": "\x1b[21~", "f11": "\x1b[23~", "f12": "\x1b[24~",
}

// modifiable reports whether a key's sequence takes xterm's modifier
// parameter (cursor, editing and function keys).
func modifiable(seq string) bool {
	return len(seq) >= 3 && seq[0] == 0x1b && (seq[1] == '[' || seq[1] == 'O') && seq != "\x1b[Z"
}

// withModifier adds xterm's modifier parameter m to a key's sequence:
// ESC [ A becomes ESC [ 1 ; m A, ESC [ 5 ~ becomes ESC [ 5 ; m ~, and
// ESC O P becomes ESC [ 1 ; m P.
func withModifier(seq string, m int) []byte {
	final := seq[len(seq)-1]
	num := "1"
	if final == '~' {
		num = seq[2 : len(seq)-1]
	}
	return []byte("\x1b[" + num + ";" + strconv.Itoa(m) + string(final))
}
