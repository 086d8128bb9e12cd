package server

import (
	"bytes"
	"strings"
	"unicode"

	"github.com/tmux-mcp/tmux-mcp/internal/termgrid"
	"github.com/tmux-mcp/tmux-mcp/internal/termtext"
)

// How send_and_wait finds a program's answer on the screen.
//
// Before typing it reads where the input lands (the cursor's row and
// column, and the rows above it as a capture_since cursor keeps them);
// after the wait it reads the whole grid. alignShift finds the input's row
// again however far the history scrolled or was trimmed. The rows from
// there to the cursor's row are the input's own rows (its echo: the first
// typed line from the cursor's column, wrapped; each further typed line on
// a row that ends with it, after the program's continuation prompt) and
// then the program's output; the cursor's row up to the cursor is its
// prompt.

// answerOf splits what the pane shows since the entry read into output
// and prompt. missed: the input's row could not be found again; output is
// then the screen above the cursor's row.
//
// stream is what the pane printed since the keys: when a full-screen
// program the keys were typed into has left the alternate screen (:q in
// vim), the normal screen is back as it was before the program started,
// so the answer is what was printed after the switch back.
func answerOf(entry *sinceState, col0 int, now *sinceSnap, typed []string, stream []byte) (output []string, prompt string, missed bool) {
	cur := now.HS + now.CursorY
	if cur < 0 || cur >= len(now.Grid) {
		return []string{}, "", true
	}
	prompt = cellPrefix(now.Grid[cur], now.CursorX)
	if now.Alt {
		// A full-screen program: its answer is the screen.
		return trimBlankTail(now.Grid[min(now.HS, len(now.Grid)):]), prompt, false
	}
	if entry.Alt {
		i, ok := lastAltOff(stream)
		if !ok {
			return trimBlankTail(now.Grid[min(now.HS, cur):cur]), prompt, true
		}
		lines := termtext.Lines(stream[i:])
		if len(lines) > 0 && !bytes.HasSuffix(stream, []byte("\n")) {
			lines = lines[:len(lines)-1] // the prompt's row
		}
		return trimBlankTail(lines), prompt, false
	}
	shift, missed := alignShift(entry, now)
	anchor := entry.Anchor - shift
	if missed || anchor < 0 || anchor > cur {
		return trimBlankTail(now.Grid[min(now.HS, cur):cur]), prompt, true
	}
	rows := now.Grid[anchor:cur]
	skip := inputRows(rows, col0, now.Width, typed)
	return trimBlankTail(rows[skip:]), prompt, false
}

// lastAltOff is where the output after the last switch back from the
// alternate screen starts.
func lastAltOff(stream []byte) (int, bool) {
	at := -1
	for _, s := range altOff {
		if i := bytes.LastIndex(stream, s); i >= 0 && i+len(s) > at {
			at = i + len(s)
		}
	}
	return at, at >= 0
}

// inputRows counts the rows at the head of rows that hold the typed lines'
// echo. The first row is always the input's (the cursor was on it); the
// first line's echo may wrap onto more. Each further line counts when the
// next rows end with it (a continuation prompt may precede it); an empty
// line, when the row holds only a short continuation prompt ("...").
// Counting stops at the first row that does not fit: the program answered
// before reading the rest.
func inputRows(rows []string, col0, width int, typed []string) int {
	if len(rows) == 0 {
		return 0
	}
	n := 1
	if len(typed) > 0 && width > 0 {
		first := typed[0]
		w := cellWidth(first)
		if echoed := cellSuffix(rows[0], col0); w > 0 && col0+w > width && strings.HasPrefix(first, strings.TrimRight(echoed, " ")) {
			n = (col0 + w + width - 1) / width
		}
	}
	i := min(n, len(rows))
	for _, line := range typed[min(1, len(typed)):] {
		line = strings.TrimRight(line, " ")
		matched := false
		for m := 1; i+m <= len(rows) && m <= cellWidth(line)/max(width, 1)+2; m++ {
			if m > 1 && cellWidth(rows[i+m-2]) < width {
				break // only a full row wraps onto the next
			}
			text := strings.TrimRight(strings.Join(rows[i:i+m], ""), " ")
			if (line == "" && m == 1 && continuationOnly(text)) || (line != "" && strings.HasSuffix(text, line)) {
				i += m
				matched = true
				break
			}
		}
		if !matched {
			break
		}
	}
	return i
}

// continuationOnly: a row that holds only a short prompt ("...", "> ",
// "   ...>"), as a REPL shows for an empty line of a block.
func continuationOnly(row string) bool {
	row = strings.TrimSpace(row)
	if len(row) > 12 {
		return false
	}
	for _, r := range row {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// typedLines are the lines whose Enter send_and_wait typed: the keys split
// at line breaks, the last one only when enter is set (without Enter it
// stays on the prompt's row). A key name (C-c, Escape, Up...) types no
// text: one empty line if enter, none otherwise.
func typedLines(keys string, enter, literal bool) []string {
	if !literal && isKeyName(keys) {
		if !enter {
			return nil
		}
		return []string{""}
	}
	keys = strings.ReplaceAll(strings.ReplaceAll(keys, "\r\n", "\n"), "\r", "\n")
	lines := strings.Split(keys, "\n")
	if !enter {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// isKeyName reports whether tmux's send-keys takes s as a key name rather
// than text: a modifier prefix (C-, M-, S-, ^) on one key, or a named key.
func isKeyName(s string) bool {
	rest := s
	for {
		switch {
		case strings.HasPrefix(rest, "C-"), strings.HasPrefix(rest, "M-"), strings.HasPrefix(rest, "S-"):
			rest = rest[2:]
			continue
		case strings.HasPrefix(rest, "^") && len(rest) > 1:
			rest = rest[1:]
			continue
		}
		break
	}
	if rest != s && len([]rune(rest)) == 1 {
		return true
	}
	return tmuxKeyNames[strings.ToLower(rest)]
}

// tmuxKeyNames are send-keys' named keys (key-string.c), lower-cased.
var tmuxKeyNames = map[string]bool{
	"enter": true, "escape": true, "tab": true, "btab": true, "bspace": true, "space": true, "up": true, "down": true,
	"left": true, "right": true, "home": true, "end": true, "ic": true, "dc": true, "insert": true, "delete": true,
	"pageup": true, "pagedown": true, "pgup": true, "pgdn": true, "npage": true, "ppage": true,
	"f1": true, "f2": true, "f3": true, "f4": true, "f5": true, "f6": true, "f7": true, "f8": true, "f9": true,
	"f10": true, "f11": true, "f12": true, "kp0": true, "kp1": true, "kp2": true, "kp3": true, "kp4": true,
	"kp5": true, "kp6": true, "kp7": true, "kp8": true, "kp9": true, "kpenter": true,
}

// maskSecret replaces what was typed as a secret wherever it shows in
// lines (a prompt that echoed after all). Pieces under three characters are
// left alone: masking every "y" would garble the answer, and they say
// little.
func maskSecret(lines []string, keys string) []string {
	out := make([]string, len(lines))
	copy(out, lines)
	for _, piece := range strings.FieldsFunc(keys, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if len([]rune(piece)) < 3 {
			continue
		}
		for i := range out {
			out[i] = strings.ReplaceAll(out[i], piece, "***")
		}
	}
	return out
}

// cellWidth is the number of terminal cells s takes, as tmux counts them
// (termgrid.RuneWidth).
func cellWidth(s string) int {
	n := 0
	for _, r := range s {
		n += termgrid.RuneWidth(r)
	}
	return n
}

// cellPrefix is the part of a row before cell column col.
func cellPrefix(row string, col int) string {
	n := 0
	for i, r := range row {
		if n >= col {
			return row[:i]
		}
		n += termgrid.RuneWidth(r)
	}
	if col > n {
		return row + strings.Repeat(" ", col-n) // capture-pane trimmed the blanks the cursor sits after
	}
	return row
}

// cellSuffix is the part of a row from cell column col on.
func cellSuffix(row string, col int) string {
	return strings.TrimPrefix(row, cellPrefix(row, col))
}
