// Package jsonstr appends Go strings as JSON strings the way encoding/json
// writes them, without its reflection or allocations. It exists because two
// hot writers need it: the audit log (a line per tool call, which must match
// json.Marshal byte for byte) and asciicast recordings (an event per pane
// read, where HTML escaping is noise).
package jsonstr

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// Marshal appends s to dst as a JSON string exactly as json.Marshal
// encodes it: control characters escaped (\b \f \n \r \t by name, others
// as \u00XX), <, > and & as \u003c, \u003e and \u0026, U+2028 and U+2029
// escaped, invalid UTF-8 as \ufffd.
func Marshal(dst []byte, s string) []byte { return appendString(dst, s, false) }

// Text appends s to dst as a JSON string for a reader of text: as Marshal,
// but <, > and & as they are (as an Encoder with SetEscapeHTML(false)
// writes them) and invalid UTF-8 as a literal U+FFFD, so the line stays
// readable and valid UTF-8.
func Text(dst []byte, s string) []byte { return appendString(dst, s, true) }

// plain[c] is set for the ASCII bytes Marshal copies as they are; Text
// also copies '<', '>' and '&'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

func appendString(dst []byte, s string, text bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Runs of plain bytes are most of any text: one table lookup each.
		for i < len(s) && plain[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		if c := s[i]; c < utf8.RuneSelf {
			if text && (c == '<' || c == '>' || c == '&') {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			if text {
				dst = append(dst, "\ufffd"...)
			} else {
				dst = append(dst, `\ufffd`...)
			}
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
