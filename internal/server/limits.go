package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
)

// maxResultBytes bounds one tool result on the wire. Per-tool caps
// (max_lines, max_bytes, page limits) normally fire long before it; this is
// the backstop.
const maxResultBytes = 1_000_000

// limitSize keeps a result within maxResultBytes without ever putting into
// it anything the pane, buffer or command did not produce. Results whose
// type has fields for a cut lose whole lines from the head of their content
// and those fields say exactly how much went (see cutters); capture_pane's
// text gets its documented first line '[... truncated K lines ...]'. A line
// is only shortened where the type counts bytes (capture_since's
// truncated_bytes); elsewhere a line too long to fit on its own is dropped
// whole and counted, since a partial line would pass for a whole one. A
// result with no way to label a cut is replaced by an error naming its size:
// an answer that looks complete but is not misleads more than none.
func (s *Server) limitSize(t *Tool, res *mcp.CallToolResult) *mcp.CallToolResult {
	if res == nil || !mayExceed(res) {
		return res
	}
	size := partsSize(res)
	if size <= maxResultBytes {
		// partsSize errs high: the result fits, and encoding a result of
		// hundreds of kilobytes only to measure it costs as much as
		// building it (list_panes over 500 panes).
		return res
	}
	if size <= maxResultBytes+1024 {
		// Near the cap the estimate is not enough: measure exactly (the
		// result is small, so this is cheap).
		if size = resultSize(res); size <= maxResultBytes {
			return res
		}
	}
	var out *mcp.CallToolResult
	if t.Name == "capture_pane" {
		out = cutCaptureText(res, size)
	} else if res.StructuredContent != nil {
		out = cutStructured(res, size)
	}
	if out == nil {
		s.log.Warn("result over the size cap has no field to label a cut; answered with an error", "tool", t.Name, "bytes", size)
		return errorResult(tooLarge(t, size))
	}
	s.log.Warn("result exceeded the size cap; lines were dropped from its head", "tool", t.Name, "bytes", size)
	return out
}

// mayExceed is a cheap upper bound: text and structured content are most
// of a result. Encoding text as JSON can grow it sixfold (a control
// character or '<' becomes \u003c); structured JSON is already encoded,
// and its text copy at most doubles it.
func mayExceed(res *mcp.CallToolResult) bool {
	approx := 1024
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			approx += 6 * len(c.Text)
		case *mcp.ImageContent:
			approx += 2 * len(c.Data) // base64, 4/3 of it
		}
	}
	if raw, ok := res.StructuredContent.(json.RawMessage); ok {
		approx += 2 * len(raw)
	} else if res.StructuredContent != nil {
		return true
	}
	return approx > maxResultBytes
}

func tooLarge(t *Tool, size int) *ToolError {
	msg := fmt.Sprintf("Result too large: the answer of %s is %d bytes, over the %d-byte cap on one result, "+
		"and this kind of answer has no field to mark a cut, so it is withheld rather than returned incomplete.",
		t.Name, size, maxResultBytes)
	if t.Tier != config.Readonly {
		msg += " The call itself was carried out; only its answer is missing."
	}
	return &ToolError{Msg: msg, Type: "ResultTooLarge", Expected: true,
		Suggestion: "Ask for less: a narrower target, line range or filter, or a smaller max_lines."}
}

// partsSize is a result's size without encoding it, which for a large
// result costs far more than adding up its parts: the encoded texts and
// structured JSON, and a little for the envelope. It never errs low (the
// caller relies on that to skip measuring), and errs high by less than a
// hundred bytes for a registry-built result.
func partsSize(res *mcp.CallToolResult) int {
	size := 64
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			size += jsonLen(tc.Text) + 32
		} else {
			size += maxResultBytes // not ours: measure exactly
		}
	}
	if raw, ok := res.StructuredContent.(json.RawMessage); ok {
		// Raw JSON goes out as encoding/json writes a Marshaler's output:
		// compacted (ours already is) with '<', '>' and '&' escaped as
		// \u003c, five bytes more each (marshalJSON left them as they are).
		size += len(raw) + 32 + 5*(bytes.Count(raw, []byte("<"))+bytes.Count(raw, []byte(">"))+bytes.Count(raw, []byte("&")))
	} else if res.StructuredContent != nil {
		size += maxResultBytes
	}
	return size
}

// resultSize is the size a result is measured by: its JSON encoding.
func resultSize(res *mcp.CallToolResult) int {
	b, err := json.Marshal(res)
	if err != nil {
		return maxResultBytes + 1
	}
	return len(b)
}

// A plan is a way to cut one result: steps 1..n keep less and less of its
// content, apply makes step p's content, and removed(p) is what step p
// takes off the wire (non-decreasing in p; removed(0) is 0). removed is
// computed from the pieces' own encoded sizes, so a cut point is found
// without encoding the whole result at every try.
type plan struct {
	n       int
	apply   func(p int)
	removed func(p int) int
}

// smallestCut finds the least step whose result fits, given the full
// result's size: the estimate from removed is checked by encoding the
// result, and a shortfall (a label's digits, a separator) raises the
// target until it fits.
func smallestCut(full int, pl plan, build func(p int) *mcp.CallToolResult) *mcp.CallToolResult {
	need, last := full-maxResultBytes, 0
	for tries := 0; tries < 16; tries++ {
		p := 1 + sort.Search(pl.n, func(i int) bool { return i+1 > last && pl.removed(i+1) >= need })
		if p > pl.n {
			p = pl.n
		}
		if p <= last {
			return nil // even dropping everything it can does not fit
		}
		res := build(p)
		size := resultSize(res)
		if size <= maxResultBytes {
			return res
		}
		last, need = p, pl.removed(p)+size-maxResultBytes
	}
	return nil
}

// jsonLen is the length of s encoded as a JSON string, quotes excluded,
// exactly as encoding/json writes it (HTML-safe, as the SDK encodes): it
// is counted, not encoded, since partsSize runs on every large result.
func jsonLen(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		e := jsonExtra[s[i]]
		if e < nonASCII {
			n += int(e)
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			n += 6 - size // \ufffd for an invalid byte, \u2028, \u2029
		}
		i += size - 1
	}
	return n
}

// jsonExtra is how many bytes more than one an ASCII byte takes in a JSON
// string (\" \\ \b \f \n \r \t one, other control characters and the HTML
// characters five: \u00XX), nonASCII for the first byte of anything else:
// one lookup a byte.
var jsonExtra = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c >= utf8.RuneSelf:
			t[c] = nonASCII
		case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
			t[c] = 1
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			t[c] = 5
		}
	}
	return t
}()

const nonASCII = 0xFF

// structuredCost is what s costs inside structured content: encoded in
// the structured JSON, and that encoding encoded again in its text copy.
func structuredCost(s string) int {
	b, _ := json.Marshal(s)
	inner := string(b[1 : len(b)-1])
	return len(inner) + jsonLen(inner)
}

// valueCost is what a JSON value costs as a list element in structured
// content, separator included, in the JSON and its text copy.
func valueCost(v any) int {
	b, _ := json.Marshal(v)
	return len(b) + 1 + jsonLen(string(b)) + 1
}

// prefixCost gives cost(s[:c]) for any rune-aligned c from the costs of
// rune-aligned chunks, so a cut point in a long line is found in linear
// time. Encoding is per character, so costs add up over such pieces.
type prefixCost struct {
	s      string
	cost   func(string) int
	bounds []int // chunk starts, ascending, bounds[0] = 0
	sums   []int // sums[i] = cost(s[:bounds[i]])
}

func newPrefixCost(s string, cost func(string) int) prefixCost {
	const chunk = 4096
	pc := prefixCost{s: s, cost: cost, bounds: []int{0}, sums: []int{0}}
	for start := 0; start < len(s); {
		end := min(start+chunk, len(s))
		for end < len(s) && s[end]&0xC0 == 0x80 {
			end++
		}
		pc.bounds = append(pc.bounds, end)
		pc.sums = append(pc.sums, pc.sums[len(pc.sums)-1]+cost(s[start:end]))
		start = end
	}
	return pc
}

func (pc prefixCost) at(c int) int {
	i := sort.SearchInts(pc.bounds, c+1) - 1
	return pc.sums[i] + pc.cost(pc.s[pc.bounds[i]:c])
}

// runeCeil moves c forward to the start of a character.
func runeCeil(s string, c int) int {
	for c < len(s) && s[c]&0xC0 == 0x80 {
		c++
	}
	return c
}

// sums returns the running totals of cost over pieces: sums[k] is the
// cost of the first k.
func sums(pieces []string, cost func(string) int) []int {
	out := make([]int, len(pieces)+1)
	for i, p := range pieces {
		out[i+1] = out[i] + cost(p)
	}
	return out
}

// captureHeaderRE is capture_pane's documented announcement of a cut.
var captureHeaderRE = lazyRegexp(`^\[\.\.\. truncated ([0-9]+) lines \.\.\.\]\n`)

// cutCaptureText drops lines from the head of capture_pane's text and
// counts them in its first line, adding to the count max_lines put there.
// The text goes out twice, as the text content and as the structured
// {"result": text}, and each line is counted in both.
func cutCaptureText(res *mcp.CallToolResult, full int) *mcp.CallToolResult {
	if len(res.Content) != 1 {
		return nil
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return nil
	}
	body, before := tc.Text, 0
	if m := captureHeaderRE().FindStringSubmatch(body); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			body, before = body[len(m[0]):], n
		}
	}
	starts := lineStarts(body, false)
	pre := sums(pieces(body, starts), func(s string) int { return 2 * jsonLen(s) })
	pl := plan{n: len(starts), apply: func(int) {}, removed: func(k int) int { return pre[k] }}
	return smallestCut(full, pl, func(k int) *mcp.CallToolResult {
		text := fmt.Sprintf("[... truncated %d lines ...]", before+k)
		if k < len(starts) {
			text += "\n" + body[starts[k]:]
		}
		cut := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, Meta: res.Meta, IsError: res.IsError}
		if res.StructuredContent != nil {
			raw, _ := marshalJSON(map[string]any{"result": text}) // a string always encodes
			cut.StructuredContent = json.RawMessage(raw)
		}
		return cut
	})
}

// lineStarts returns the offset at which each line of s begins. Lines are
// separated by "\n"; with terminated, a final "\n" ends the last line
// rather than starting an empty one.
func lineStarts(s string, terminated bool) []int {
	if s == "" && terminated {
		return nil
	}
	starts := []int{0}
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' && (i+1 < len(s) || !terminated) {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// pieces splits s at starts; each piece keeps its "\n".
func pieces(s string, starts []int) []string {
	out := make([]string, len(starts))
	for i, st := range starts {
		end := len(s)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		out[i] = s[st:end]
	}
	return out
}

// A cutter plans the cut of one result shape, named by the fields it
// needs, on the decoded result m; ok is false when a field has the wrong
// type.
type cutter struct {
	fields []string
	plan   func(m map[string]any) (pl plan, ok bool)
}

func (lc linesCut) cutter() cutter {
	f := []string{lc.content, lc.flag}
	for _, x := range []string{lc.lines, lc.bytes} {
		if x != "" {
			f = append(f, x)
		}
	}
	return cutter{f, lc.plan}
}

// cutters lists the result shapes that have fields made for a cut.
var cutters = []cutter{
	// RunCommandResult (run_command, wait_for_run).
	linesCut{content: "output", flag: "output_truncated", lines: "output_truncated_lines"}.cutter(),
	// CaptureSinceResult: its max_bytes counts whole lines and a cut line
	// in truncated_bytes, and so does this cap.
	linesCut{content: "lines", flag: "truncated", bytes: "truncated_bytes"}.cutter(),
	// PaneSnapshot, BufferContent: lines joined by "\n" in one string.
	linesCut{content: "content", flag: "content_truncated", lines: "content_truncated_lines"}.cutter(),
	// SearchPanesResult.
	{[]string{"matches", "truncated_panes", "truncated"}, searchCut},
}

// cutStructured applies the first cutter that knows the result's shape.
// The shape is told from the top-level fields before the whole result is
// decoded, which for a large list costs most.
func cutStructured(res *mcp.CallToolResult, full int) *mcp.CallToolResult {
	raw, ok := res.StructuredContent.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(res.StructuredContent); err != nil {
			return nil
		}
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return nil
	}
	for _, c := range cutters {
		if !hasFields(top, c.fields) {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber() // every other field goes back as it came
		var m map[string]any
		if dec.Decode(&m) != nil {
			return nil
		}
		pl, ok := c.plan(m)
		if !ok {
			return nil
		}
		return smallestCut(full, pl, func(p int) *mcp.CallToolResult {
			pl.apply(p)
			raw, _ := marshalJSON(m) // decoded JSON always encodes
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: string(raw)}},
				StructuredContent: json.RawMessage(raw),
				Meta:              res.Meta,
				IsError:           res.IsError,
			}
		})
	}
	return nil
}

func hasFields(top map[string]json.RawMessage, fields []string) bool {
	for _, f := range fields {
		if _, ok := top[f]; !ok {
			return false
		}
	}
	return true
}

// linesCut cuts a content field holding lines, either a list of strings
// or one string of "\n"-terminated lines, from the head. flag is set; lines
// (if the type has it) counts whole lines dropped; bytes (if the type has
// it) counts the bytes dropped, a line's newline included, and only then
// may the oldest kept line lose its head rather than go whole.
type linesCut struct{ content, flag, lines, bytes string }

func (lc linesCut) plan(m map[string]any) (plan, bool) {
	if _, ok := m[lc.flag].(bool); !ok {
		return plan{}, false
	}
	if _, ok := m["styles"]; ok {
		// Spans are numbered by the lines of content: a cut from its head
		// would leave them pointing at the wrong lines.
		return plan{}, false
	}
	counter := func(field string) (int64, bool) {
		if field == "" {
			return 0, true
		}
		n, ok := m[field].(json.Number)
		if !ok {
			return 0, false
		}
		v, err := n.Int64()
		return v, err == nil
	}
	lines0, ok1 := counter(lc.lines)
	bytes0, ok2 := counter(lc.bytes)
	if !ok1 || !ok2 {
		return plan{}, false
	}
	// segs are the lines; sizes[k] the bytes the first k stand for, and
	// costs[k] what they cost on the wire.
	var segs []string
	var set func(rest []string)
	var costs, sizes []int
	switch c := m[lc.content].(type) {
	case []any:
		for _, x := range c {
			s, ok := x.(string)
			if !ok {
				return plan{}, false
			}
			segs = append(segs, s)
		}
		set = func(rest []string) {
			l := make([]any, len(rest))
			for i, s := range rest {
				l[i] = s
			}
			m[lc.content] = l
		}
		costs = sums(segs, func(s string) int { return valueCost(s) })
		sizes = sums(segs, func(s string) int { return len(s) + 1 })
	case string:
		segs = pieces(c, lineStarts(c, true)) // each with its "\n"
		set = func(rest []string) { m[lc.content] = strings.Join(rest, "") }
		costs = sums(segs, structuredCost)
		sizes = sums(segs, func(s string) int { return len(s) })
	default:
		return plan{}, false
	}
	n := len(segs)
	if n == 0 {
		return plan{}, false
	}
	// Steps 1..n drop that many lines. With a byte count, steps from n on
	// instead drop n-1 lines and cut p-(n-1) bytes of the last line,
	// rounded up to a character boundary; the last step drops it all.
	steps, last := n, segs[n-1]
	if lc.bytes != "" && len(last) > 1 {
		steps = n - 1 + len(last)
	}
	step := func(p int) (k, cut int) {
		if p < n || steps == n {
			return p, 0
		}
		if cut = runeCeil(last, p-(n-1)); cut >= len(last) {
			return n, 0
		}
		return n - 1, cut
	}
	var lastCost *prefixCost
	return plan{
		n: steps,
		removed: func(p int) int {
			k, cut := step(p)
			if cut == 0 {
				return costs[k]
			}
			if lastCost == nil {
				pc := newPrefixCost(last, structuredCost)
				lastCost = &pc
			}
			return costs[k] + lastCost.at(cut)
		},
		apply: func(p int) {
			k, cut := step(p)
			rest := append([]string(nil), segs[k:]...)
			if cut > 0 {
				rest[0] = rest[0][cut:]
			}
			set(rest)
			m[lc.flag] = true
			if lc.lines != "" {
				m[lc.lines] = lines0 + int64(k)
			}
			if lc.bytes != "" {
				m[lc.bytes] = bytes0 + int64(sizes[k]+cut)
			}
		},
	}, true
}

// searchCut moves whole panes from the end of a search_panes page into
// truncated_panes, which already means "matched; re-request with a larger
// offset". total_panes_matched is unchanged.
func searchCut(m map[string]any) (plan, bool) {
	matches, ok1 := m["matches"].([]any)
	skipped, ok2 := m["truncated_panes"].([]any)
	_, ok3 := m["truncated"].(bool)
	if !ok1 || !ok2 || !ok3 {
		return plan{}, false
	}
	n := len(matches)
	ids := make([]any, n)
	tail := make([]int, n+1) // tail[p]: what moving the last p panes saves
	for i := n - 1; i >= 0; i-- {
		mm, ok := matches[i].(map[string]any)
		if !ok {
			return plan{}, false
		}
		if ids[i], ok = mm["pane_id"].(string); !ok {
			return plan{}, false
		}
		tail[n-i] = tail[n-i-1] + valueCost(mm) - valueCost(ids[i])
	}
	return plan{
		n:       n,
		removed: func(p int) int { return tail[p] },
		apply: func(p int) {
			m["matches"] = matches[:n-p]
			m["truncated_panes"] = append(append([]any{}, ids[n-p:]...), skipped...)
			m["truncated"] = true
		},
	}, true
}
