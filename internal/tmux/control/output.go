package control

import (
	"bytes"
	"errors"
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
