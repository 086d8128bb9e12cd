package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Tool arguments are decoded here rather than by json.Unmarshal into a map
// because of their size: a load_buffer or paste_text content may be 4 MiB,
// and encoding/json decodes a string with an escape in it (every newline)
// into a buffer of its own and then copies that into the string, and a
// json.Decoder first reads the whole input into a buffer grown by doubling.
// Over HTTP that made a large call cost the daemon ten times its size
// (issue 21). decodeObject reads each member of the top-level object in
// place and builds each string once.

// decodeObject decodes raw, a JSON value, as json.Unmarshal into an any
// does (with UseNumber when numbers is set: json.Number instead of
// float64), copying each string of a top-level object once.
func decodeObject(raw []byte, numbers bool) (any, error) {
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		var m map[string]member
		if err := json.Unmarshal(raw, &m); err == nil {
			out := make(map[string]any, len(m))
			for k, v := range m {
				if v.str {
					out[k] = v.s
					continue
				}
				if out[k], err = decodeValue(v.raw, numbers); err != nil {
					break
				}
			}
			if err == nil {
				return out, nil
			}
		}
		// An error (a number out of range): decode as before, for the
		// same error and partial result.
	}
	return decodeValue(raw, numbers)
}

// member is one member of an object decoded by decodeObject: a string, or
// the bytes of another value (a slice of the input: nothing is copied).
type member struct {
	str bool
	s   string
	raw []byte
}

// UnmarshalJSON gets the member's bytes as they are in the input (the
// input is valid JSON: json.Unmarshal checks it whole first). A value
// holding a number beyond float64's range is refused, so that decodeObject
// decodes the object as encoding/json does: a later member with the same
// name replaces this one in the map, and without this check the error
// encoding/json gives for the number would be lost with it.
func (m *member) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		m.str, m.s = true, unquote(b)
		return nil
	}
	if hugeNumber(b) {
		return errHugeNumber
	}
	m.raw = b
	return nil
}

var errHugeNumber = errors.New("a number beyond float64's range")

// hugeNumber reports whether the valid JSON b holds, outside its strings,
// a number strconv.ParseFloat cannot hold in a float64. Only a number with
// an exponent or of 309 digits or more can be that large.
func hugeNumber(b []byte) bool {
	in, esc := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case in:
			if esc {
				esc = false
			} else if c == '\\' {
				esc = true
			} else if c == '"' {
				in = false
			}
		case c == '"':
			in = true
		case c == '-' || c >= '0' && c <= '9':
			j := i
			for j < len(b) && (b[j] == '-' || b[j] == '+' || b[j] == '.' || b[j] == 'e' || b[j] == 'E' || b[j] >= '0' && b[j] <= '9') {
				j++
			}
			tok := b[i:j]
			if j-i >= 309 || bytes.ContainsAny(tok, "eE") {
				if _, err := strconv.ParseFloat(string(tok), 64); err != nil {
					return true
				}
			}
			i = j - 1
		}
	}
	return false
}

func decodeValue(b []byte, numbers bool) (any, error) {
	var v any
	if !numbers {
		err := json.Unmarshal(b, &v)
		return v, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	err := dec.Decode(&v)
	return v, err
}

// unquote decodes q, a valid JSON string literal quotes included, exactly
// as encoding/json does (invalid UTF-8 and lone surrogates become U+FFFD),
// into a string built once.
func unquote(q []byte) string {
	s := q[1 : len(q)-1]
	if bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return string(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			e := s[i+1]
			i += 2
			switch e {
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r := hex4(s[i:])
				i += 4
				if utf16.IsSurrogate(r) {
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						if d := utf16.DecodeRune(r, hex4(s[i+2:])); d != utf8.RuneError {
							b.WriteRune(d)
							i += 6
							break
						}
					}
					r = utf8.RuneError
				}
				b.WriteRune(r)
			default: // '"', '\\', '/'
				b.WriteByte(e)
			}
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, n := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && n == 1 {
				b.WriteRune(utf8.RuneError)
			} else {
				b.Write(s[i : i+n])
			}
			i += n
		}
	}
	return b.String()
}

// hex4 is the value of the four hex digits at the start of b (valid JSON
// guarantees them after \u).
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
