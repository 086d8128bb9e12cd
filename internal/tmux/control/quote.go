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
	return string(appendArg(make([]byte, 0, len(a)+2), a)), nil
}

// quoteClass says how QuoteArg writes each byte inside its double quotes:
// as it is (0), after a backslash (1), or as a backslash and three octal
// digits (2).
var quoteClass = func() (t [256]uint8) {
	for _, c := range []byte{'\\', '"', '$', '~'} {
		t[c] = 1
	}
	for c := range 0x20 {
		t[c] = 2
	}
	t[0x7f], t[0xff] = 2, 2
	return t
}()

// appendArg appends a, which holds no NUL, to b as QuoteArg quotes it,
// copying the runs that need no escape whole.
func appendArg(b []byte, a string) []byte {
	b = append(b, '"')
	run := 0
	for i := 0; i < len(a); i++ {
		k := quoteClass[a[i]]
		if k == 0 {
			continue
		}
		b = append(b, a[run:i]...)
		c := a[i]
		if k == 1 {
			b = append(b, '\\', c)
		} else {
			b = append(b, '\\', '0'+c>>6, '0'+(c>>3)&7, '0'+c&7)
		}
		run = i + 1
	}
	b = append(b, a[run:]...)
	return append(b, '"')
}

// appendQuoted appends argv to b as Quote quotes it.
func appendQuoted(b []byte, argv []string) ([]byte, error) {
	if len(argv) == 0 {
		return nil, ErrEmpty
	}
	for i, a := range argv {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, ErrNUL
		}
		if i > 0 {
			b = append(b, ' ')
		}
		b = appendArg(b, a)
	}
	return b, nil
}

// quotedSize is about how long argv is quoted: its bytes, two quotes and a
// space per word, and a little room for escapes.
func quotedSize(argv []string) int {
	n := 0
	for _, a := range argv {
		n += len(a) + 3
	}
	return n + n/16
}

// Quote turns an argv into one command line that tmux parses back into the
// same argv: every word quoted with QuoteArg, joined by spaces. The result
// never contains a newline and is never empty.
func Quote(argv []string) (string, error) {
	b, err := appendQuoted(make([]byte, 0, quotedSize(argv)), argv)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// Join quotes several commands into one line separated by " ; ", which tmux
// runs in order as one group: when a command fails, the rest of the line is
// not run.
func Join(cmds ...[]string) (string, error) {
	if len(cmds) == 0 {
		return "", ErrEmpty
	}
	n := 0
	for _, c := range cmds {
		n += quotedSize(c) + 3
	}
	b := make([]byte, 0, n)
	for i, c := range cmds {
		if i > 0 {
			b = append(b, " ; "...)
		}
		var err error
		if b, err = appendQuoted(b, c); err != nil {
			return "", err
		}
	}
	return string(b), nil
}
