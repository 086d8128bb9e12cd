package tmux

import (
	"fmt"
	"strings"
)

// Rows are read with a format whose row starts with RS (0x1e) and whose
// fields are separated by US (0x1f). tmux escapes control characters in
// session and window names and pane titles, so those separators can only
// appear in raw fields such as a path; the last field of a row absorbs any
// extra separators, so put free-form fields last.
const (
	rowStart = "\x1e"
	fieldSep = "\x1f"
)

// Format builds a tmux -F format that yields one parseable row per object.
func Format(fields ...string) string {
	var b strings.Builder
	b.WriteString(rowStart)
	for i, f := range fields {
		if i > 0 {
			b.WriteString(fieldSep)
		}
		b.WriteString("#{")
		b.WriteString(f)
		b.WriteString("}")
	}
	return b.String()
}

// Row is one object's fields keyed by tmux format variable name.
type Row map[string]string

// ParseRows parses the output of a command run with Format(fields...). Text
// before the first row marker is ignored; a row with too few fields is an
// error rather than a panic. The output is copied once and every value is
// a slice of that copy: a 500-pane listing is 12,000 values.
func ParseRows(out []byte, fields []string) ([]Row, error) {
	return ParseRowsRoom(out, fields, 0)
}

// ParseRowsRoom is ParseRows for a caller that adds room more fields to
// each row: each map is made with room for them, so adding them does not
// grow it (a 500-pane listing that derives a dozen fields per pane would
// otherwise rehash every row's map twice).
func ParseRowsRoom(out []byte, fields []string, room int) ([]Row, error) {
	text := string(out)
	i := strings.Index(text, rowStart)
	if i < 0 {
		return []Row{}, nil
	}
	text = text[i+len(rowStart):]
	rows := make([]Row, 0, strings.Count(text, rowStart)+1)
	for {
		row, rest, more := strings.Cut(text, rowStart)
		row = strings.TrimSuffix(row, "\n")
		r := make(Row, len(fields)+room)
		for k, f := range fields {
			if k == len(fields)-1 {
				r[f] = row // the last field absorbs any extra separators
				break
			}
			v, after, ok := strings.Cut(row, fieldSep)
			if !ok {
				return rows, fmt.Errorf("tmux: unparseable row: got %d fields, want %d", k+1, len(fields))
			}
			r[f], row = v, after
		}
		rows = append(rows, r)
		if !more {
			return rows, nil
		}
		text = rest
	}
}

// LiteralFormat makes s literal under tmux format expansion, which tmux
// applies to select-pane -T, the -c of split-window/respawn-pane and the
// pipe-pane command: every run of '#' is doubled ("##" is a literal '#'),
// except a run followed by '[', which tmux copies verbatim (a style). With
// strftime (pipe-pane), '%' is doubled as well. Verified on tmux 3.3a.
func LiteralFormat(s string, strftime bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case s[i] == '#':
			j := i
			for j < len(s) && s[j] == '#' {
				j++
			}
			run := s[i:j]
			if j < len(s) && s[j] == '[' {
				b.WriteString(run)
			} else {
				b.WriteString(run)
				b.WriteString(run)
			}
			i = j
		case s[i] == '%' && strftime:
			b.WriteString("%%")
			i++
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String()
}
