package server

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxResultBytes bounds one tool result. Per-tool caps normally fire long
// before it; this is the backstop.
const maxResultBytes = 1_000_000

// limitSize keeps a result under maxResultBytes while keeping it valid
// against the tool's output schema (the reference dropped the structured
// content when it truncated): the head of the largest string or list in the
// structured result is cut away until it fits, the cut is labelled, and any
// boolean "*truncated" flag of the result is set. Text-only results keep
// their tail under a label.
func (s *Server) limitSize(t *Tool, res *mcp.CallToolResult) *mcp.CallToolResult {
	if res == nil {
		return res
	}
	// Cheap bound first: text and structured content are most of a result,
	// and the structured part appears twice on the wire at most.
	approx := 1024
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			approx += 2 * len(tc.Text)
		}
	}
	if raw, ok := res.StructuredContent.(json.RawMessage); ok {
		approx += 2 * len(raw)
	} else if res.StructuredContent != nil {
		approx = maxResultBytes + 1
	}
	if approx <= maxResultBytes {
		return res
	}
	b, err := json.Marshal(res)
	if err != nil || len(b) <= maxResultBytes {
		return res
	}
	if res.StructuredContent == nil {
		over := len(b) - maxResultBytes
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok && len(tc.Text) > 0 {
				tc.Text = tailLabelled(tc.Text, over)
				break
			}
		}
		return res
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return res
	}
	build := func() *mcp.CallToolResult {
		raw, _ = json.Marshal(v)
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: string(raw)}},
			StructuredContent: json.RawMessage(raw),
			Meta:              res.Meta,
		}
	}
	if m, ok := v.(map[string]any); ok {
		for k, x := range m {
			if _, isBool := x.(bool); isBool && len(k) >= 9 && k[len(k)-9:] == "truncated" {
				m[k] = true
			}
		}
	}
	out := build()
	for i := 0; i < 64; i++ {
		size, _ := json.Marshal(out)
		if len(size) <= maxResultBytes {
			break
		}
		// The value appears twice (structured and as escaped text).
		shrinkLargest(v, (len(size)-maxResultBytes)/2+1024)
		out = build()
	}
	s.log.Warn("result exceeded the size cap and was truncated", "tool", t.Name, "bytes", len(b))
	return out
}

// shrinkLargest finds the largest string or array inside v and removes
// about drop bytes from its head.
func shrinkLargest(v any, drop int) {
	var best func(any) (size int, apply func())
	best = func(x any) (int, func()) {
		bestSize, bestApply := 0, func() {}
		consider := func(size int, apply func()) {
			if size > bestSize {
				bestSize, bestApply = size, apply
			}
		}
		switch t := x.(type) {
		case map[string]any:
			for k, child := range t {
				k := k
				switch c := child.(type) {
				case string:
					consider(len(c), func() { t[k] = tailLabelled(c, drop) })
				case []any:
					n, _ := json.Marshal(c)
					consider(len(n), func() { t[k] = dropHead(c, drop) })
				}
				consider(best(child))
			}
		case []any:
			for i, child := range t {
				i := i
				if c, ok := child.(string); ok {
					consider(len(c), func() { t[i] = tailLabelled(c, drop) })
				}
				consider(best(child))
			}
		}
		return bestSize, bestApply
	}
	_, apply := best(v)
	apply()
}

// dropHead removes leading items worth about drop bytes; a list of strings
// gets a label in front.
func dropHead(items []any, drop int) []any {
	n, removed := 0, 0
	for n < len(items) && removed < drop {
		b, _ := json.Marshal(items[n])
		removed += len(b) + 1
		n++
	}
	rest := items[n:]
	if len(items) > 0 {
		if _, isStr := items[0].(string); isStr {
			return append([]any{fmt.Sprintf("[... truncated %d items ...]", n)}, rest...)
		}
	}
	return rest
}

// tailLabelled drops at least drop bytes from the head of s, on a UTF-8
// boundary, and labels the cut.
func tailLabelled(s string, drop int) string {
	drop += 64 // room for the label
	if drop >= len(s) {
		return fmt.Sprintf("[... truncated %d bytes ...]", len(s))
	}
	for drop < len(s) && s[drop]&0xC0 == 0x80 {
		drop++
	}
	return fmt.Sprintf("[... truncated %d bytes ...]\n", drop) + s[drop:]
}
