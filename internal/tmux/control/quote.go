package control

import (
	"errors"
	"strings"
)

// ErrNUL: tmux's parser works on C strings, so an argument cannot carry a
// NUL byte.
var ErrNUL = errors.New("control: argument contains a NUL byte")

// ErrEmpty: a command needs at least a name, and an empty line would detach
// the control client.
var ErrEmpty = errors.New("control: empty command")

// QuoteArg quotes one argument for tmux's command parser (the configuration
// file syntax, cmd-parse.y), so that it comes back as exactly one word with
// exactly these bytes. The word is double-quoted, and inside it:
//   - '\' '"' '$' and '~' are backslash-escaped (tmux expands "$VAR" and a
//     leading "~" inside double quotes);
//   - bytes below 0x20, 0x7f and 0xff become "\ooo" octal escapes, so the
//     line never holds a newline (which would end the command) or a
//     carriage return, and no 0xff (tmux reads the line as signed chars, and
//     0xff is then EOF: it would end the word);
//   - everything else, UTF-8 included, is copied as is.
//
// Inside double quotes ";", "#", "{", "}", "%" and spaces are plain text.
func QuoteArg(a string) (string, error) {
	if strings.IndexByte(a, 0) >= 0 {
		return "", ErrNUL
	}
	var b strings.Builder
	b.Grow(len(a) + 2)
	b.WriteByte('"')
	for i := 0; i < len(a); i++ {
		c := a[i]
		switch {
		case c == '\\' || c == '"' || c == '$' || c == '~':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f || c == 0xff:
			b.WriteByte('\\')
			b.WriteByte('0' + c>>6)
			b.WriteByte('0' + (c>>3)&7)
			b.WriteByte('0' + c&7)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String(), nil
}

// Quote turns an argv into one command line that tmux parses back into the
// same argv: every word quoted with QuoteArg, joined by spaces. The result
// never contains a newline and is never empty.
func Quote(argv []string) (string, error) {
	if len(argv) == 0 {
		return "", ErrEmpty
	}
	var b strings.Builder
	for i, a := range argv {
		q, err := QuoteArg(a)
		if err != nil {
			return "", err
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(q)
	}
	return b.String(), nil
}

// Join quotes several commands into one line separated by " ; ", which tmux
// runs in order as one group: when a command fails, the rest of the line is
// not run.
func Join(cmds ...[]string) (string, error) {
	if len(cmds) == 0 {
		return "", ErrEmpty
	}
	parts := make([]string, len(cmds))
	for i, c := range cmds {
		q, err := Quote(c)
		if err != nil {
			return "", err
		}
		parts[i] = q
	}
	return strings.Join(parts, " ; "), nil
}
