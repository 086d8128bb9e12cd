package server

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/termgrid"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// Styles in captures (capture_pane and snapshot_pane, styles: true). The
// plain text hides what programs mean by colour: the selected item of a
// menu, a search match, an error in red. Asked for, the capture is taken
// once with its styles (capture-pane -e -N), the text is derived from it
// (termgrid: byte for byte tmux's plain capture) and the styles go with it
// as spans a model reads cheaply (termgrid.Span: "3:39+6 bold fg:cyan",
// "0-22:4+5 reverse"), numbered by the rows of the text the call returns.
// Not asked for, nothing changes: the call captures plain text as it
// always did and answers the same bytes.

// The docs of the styles: where they go in each tool's answer, then what
// they say.
const (
	captureStylesDoc  = "With `styles: true` a second text block `{\"styles\": [...]}` follows the text, and `styles` is also in the structured content beside `result`. " + stylesDoc
	snapshotStylesDoc = "With `styles: true` the answer has a `styles` field. " + stylesDoc
)

// stylesDoc explains the spans in docs/tools.md.
const stylesDoc = "`styles` lists the styled spans of the returned text: " +
	"`\"ROW:COL+WIDTH words\"`, or `\"FIRST-LAST:COL+WIDTH words\"` for the same columns on consecutive rows. " +
	"ROW counts the returned lines from 0 (a cut notice is not a line); COL and WIDTH are terminal cells " +
	"(a wide character takes two), and may reach past a line's text into styled blanks. " +
	"Words: `bold`, `dim`, `italic`, `underline` (`double-`, `curly-`, `dotted-`, `dashed-underline`), `blink`, " +
	"`reverse`, `hidden`, `strike`, `overline`, `acs` (DEC line drawing: `lqqk` is a box corner and line), " +
	"and colours `fg:`, `bg:`, `ul:` (underline) as a name for the 16 (`red`, `bright-red`), " +
	"a number for the 256-colour palette, `#rrggbb` for true colour. Each attribute and colour is a span of its own, " +
	"over the blanks that do not show it (a red phrase is one span with its spaces); spans of the same cells are one " +
	"span. Cells of the default style are in no span, and `styles: []` means nothing is styled. " +
	"The text is the same as without styles; the capture is still one tmux call. " +
	"A styled answer over the 1 MB result cap is refused rather than cut (ask for fewer lines)."

// styledCaptureCmd is captureCmd with the styles: -e, and -N so the
// styled blanks that end a line (a selection bar) are kept.
func styledCaptureCmd(id string, start, end *int) tmux.Command {
	return append(captureCmd(id, false, start, end), "-e", "-N")
}

// paneLines cuts a capture as capture_pane and snapshot_pane return it:
// the blank lines at the bottom dropped, then the last maxLines kept
// (dropped counts the lines cut from the head). A styled capture
// (styledCaptureCmd) gives the same lines, derived from it, and the spans
// of the lines kept; a plain one gives nil spans. Only the kept lines are
// parsed into cells (the lines before them for their style alone), and
// not even those when their text alone is over the result cap, which a
// styled answer is not cut to fit (limits.go): the call is refused then,
// as the cap would refuse it, without the cells of megabytes of text.
func paneLines(t *Tool, out []byte, styled bool, maxLines *int) (kept []string, dropped int, styles []string, err error) {
	if !styled {
		kept, dropped = tailLines(captureLines(out), maxLines)
		return kept, dropped, nil, nil
	}
	raw := termgrid.SplitLines(out)
	lines := make([]string, len(raw))
	for i, l := range raw {
		lines[i] = termgrid.Text(l)
	}
	n := len(lines)
	for n > 0 && lines[n-1] == "" {
		n--
	}
	kept, dropped = tailLines(lines[:n], maxLines)
	size := 0
	for _, l := range kept {
		size += len(l) + 1
	}
	if size > maxResultBytes {
		return nil, 0, nil, tooLarge(t, size)
	}
	var p termgrid.Parser
	for _, l := range raw[:dropped] {
		p.Skip(l)
	}
	s := &termgrid.Screen{Lines: make([]termgrid.Line, 0, n-dropped)}
	for _, l := range raw[dropped:n] {
		s.Lines = append(s.Lines, p.Line(l))
	}
	styles = []string{}
	for _, sp := range s.Spans() {
		styles = append(styles, sp.String())
	}
	return kept, dropped, styles, nil
}

// paneText is capture_pane's answer. Without styles it is a Text result,
// byte for byte; with them the spans follow as a second text block
// ({"styles": [...]}) and in the structured content beside "result".
type paneText struct {
	text   string
	styles []string // nil: not asked for
}

func (p paneText) buildResult() (*mcp.CallToolResult, error) {
	res, err := buildResult(Text(p.text), true)
	if err != nil || p.styles == nil {
		return res, err
	}
	block, err := marshalJSON(struct {
		Styles []string `json:"styles"`
	}{p.styles})
	if err != nil {
		return nil, err
	}
	structured, err := marshalJSON(struct {
		Result string   `json:"result"`
		Styles []string `json:"styles"`
	}{p.text, p.styles})
	if err != nil {
		return nil, err
	}
	res.Content = append(res.Content, &mcp.TextContent{Text: string(block)})
	res.StructuredContent = json.RawMessage(structured)
	return res, nil
}

func (paneText) outputSchema() map[string]any {
	s := wrappedSchema(map[string]any{"type": "string"})
	s["properties"].(map[string]any)["styles"] = map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	return s
}
