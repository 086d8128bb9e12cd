// Package errarg shows an argument's value inside an error message. An
// agent pays for every byte of an error in its context, and a client may
// send any value: a 1 MiB session name must not come back as a 1 MiB
// error. A value short enough to read is shown whole; a longer one is shown
// as a short quoted prefix and its length, `"AAAA…" (1048576 bytes)`, which
// is enough to recognise it. Every package that echoes an argument (the
// tools, the tmux client, the remote hosts) goes through here, so the bound
// holds everywhere, tmux's own messages included (Within).
package errarg

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits, in bytes of the quoted form: a value whose quoted form fits
// maxWhole is shown whole; a longer one keeps a prefix of about prefixLen.
// maxMessage bounds a message that still holds a long run of an
// argument's text after Within (tmux reworded it).
const (
	maxWhole   = 160
	prefixLen  = 40
	maxMessage = 1024
)

// Quoted is s as Go's %q shows it, or a quoted prefix and the length when
// that would be long. Control characters and invalid UTF-8 are escaped.
func Quoted(s string) string {
	// The quoted form is at least two bytes longer than s: a long s is
	// clipped without quoting all of it first.
	if len(s) <= maxWhole-2 {
		if q := strconv.Quote(s); len(q) <= maxWhole {
			return q
		}
	}
	return clipped(s)
}

// Bare is s as it is, for a message that shows the value without quotes
// (the reference's wording), or the clipped quoted form when s is long or
// would be long once quoted.
func Bare(s string) string {
	if len(s) <= maxWhole && len(strconv.Quote(s)) <= maxWhole {
		return s
	}
	return clipped(s)
}

// clipped is `"<prefix>…" (<n> bytes)`: the prefix cut at a character
// boundary (an invalid byte counts as one character).
func clipped(s string) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		piece := strconv.Quote(s[i : i+size])
		piece = piece[1 : len(piece)-1]
		if n+len(piece) > prefixLen {
			break
		}
		b.WriteString(piece)
		n += len(piece)
		i += size
	}
	return `"` + b.String() + `…" (` + strconv.Itoa(len(s)) + " bytes)"
}

// Within bounds a message that may quote some of args, as tmux's own
// messages do ("can't find session: NAME", "unknown value: VALUE"): each
// long argument found in it is replaced by its clipped form, and a message
// still longer than maxMessage (an argument reworded) is cut, saying how
// long it was.
func Within(msg string, args ...string) string {
	for _, a := range args {
		// tmux's message may end with the argument, trimmed with it.
		for _, form := range []string{a, strings.TrimSpace(a)} {
			if q := Bare(a); q != a && form != "" && strings.Contains(msg, form) {
				msg = strings.ReplaceAll(msg, form, q)
				break
			}
		}
	}
	if len(msg) <= maxMessage {
		return msg
	}
	cut := maxMessage - 40
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + "… (" + strconv.Itoa(len(msg)) + " bytes)"
}
