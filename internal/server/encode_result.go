package server

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmux-mcp/tmux-mcp/internal/jsonstr"
)

// A large tool result costs the SDK more than it cost us to make: it
// encodes the text block (escaping it), checks and compacts that again
// inside the result, checks and compacts the structured content, then
// checks and compacts the whole result twice more on its way into the
// JSON-RPC response (encoding/json validates every json.Marshaler's and
// json.RawMessage's output byte by byte, ~1.8 ms per 441 KB here). A
// 500-pane list_panes (~440 KB) spent ~8 ms so, more than tmux took to
// list the panes; a 1 KB get_pane_info spent 10-30 µs of its ~120 µs of
// our CPU (reflection over the SDK's result types, the passes, their
// allocations and the collections they cause: BenchmarkFloorGetPaneInfo,
// docs/per-call-cost.md), which is why every result takes this path, not
// only large ones. encodeResults makes the result's encoding once, byte for
// byte what the SDK makes (TestEncodedResultMatchesSDK), and hands it on
// in an encodedResult: the SDK then checks it once per pass instead of
// building it, and where the transport can take the encoding as it is
// (stdio.Framer.Splice, set with SetSplicer) the SDK encodes only a small
// stand-in and the transport writes the encoding in its place.
//
// The encoding is made when the SDK first marshals the result, not when the
// middleware returns it: between the two the SDK still stamps the result,
// for a 2026-07-28 client, with its server info in _meta and its result
// type (an unexported field), and the encoding must carry both.

// encodedResult is a tool result whose encoding we make. It is the
// CallToolResult for everything that reads it (and what the SDK stamps),
// and encodes as encodeResult's encoding (or as the transport's stand-in
// for it).
type encodedResult struct {
	*mcp.CallToolResult
	raw    []byte // set by the first MarshalJSON, or by a test
	splice func([]byte) []byte

	once sync.Once
	out  []byte
	err  error
}

// MarshalJSON returns the encoding, or the transport's stand-in for it,
// the same bytes however often it is asked (made once). A result
// encodeResult cannot encode gets the SDK's own encoding.
func (r *encodedResult) MarshalJSON() ([]byte, error) {
	r.once.Do(func() {
		if r.raw == nil {
			var ok bool
			if r.raw, ok = encodeResult(r.CallToolResult); !ok {
				r.out, r.err = json.Marshal(r.CallToolResult)
				return
			}
		}
		r.out = r.raw
		if r.splice != nil {
			r.out = r.splice(r.raw)
		}
	})
	return r.out, r.err
}

// SetSplicer makes large tool results go to the transport as encodings
// made once (see encodeResults): splice holds an encoding and returns the
// stand-in the SDK encodes instead. Only for a transport that puts every
// encoding back (stdio.Framer); set before serving.
func (s *Server) SetSplicer(splice func(raw []byte) []byte) { s.splice = splice }

// encodeResults is the outermost middleware: a tools/call result of the
// shape our tools make leaves as an encodedResult.
func (s *Server) encodeResults(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != "tools/call" {
			return res, err
		}
		if r, ok := res.(*mcp.CallToolResult); ok && ourShape(r) {
			return &encodedResult{CallToolResult: r, splice: s.splice}, nil
		}
		return res, nil
	}
}

// ourShape reports whether encodeResult can encode res: text blocks
// without annotations or _meta, and structured content (if any) as our
// encoders make it, a json.RawMessage.
func ourShape(res *mcp.CallToolResult) bool {
	if res == nil || len(res.Content) == 0 || res.InputRequests != nil {
		return false
	}
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok || tc.Meta != nil || tc.Annotations != nil {
			return false
		}
	}
	if res.StructuredContent != nil {
		if sc, ok := res.StructuredContent.(json.RawMessage); !ok || sc == nil {
			return false
		}
	}
	return true
}

// contentOpen is how the SDK's encoding of a result without _meta begins
// when its content is an empty list.
const contentOpen = `{"content":[]`

// encodeResult encodes res as the SDK does (mcp.CallToolResult's
// MarshalJSON, a json.Marshal: HTML characters escaped everywhere, then
// compacted without more escaping), for ourShape's results with
// structured content already compact; ok is false for any other.
//
// The text blocks and the structured content, nearly all of the bytes, are
// appended here. What else the result holds, the SDK encodes itself: a
// copy of res with no _meta, an empty content list and no structured
// content (a shallow copy keeps the SDK's unexported fields, such as the
// result type it stamps for a 2026-07-28 client) gives the members that
// follow the structured content (isError, resultType), and _meta, which
// the SDK encodes first, is json.Marshal'ed as the SDK's json.Marshal does.
func encodeResult(res *mcp.CallToolResult) (raw []byte, ok bool) {
	if !ourShape(res) {
		return nil, false
	}
	var structured json.RawMessage
	size := 0
	for _, c := range res.Content {
		size += len(c.(*mcp.TextContent).Text)
	}
	if res.StructuredContent != nil {
		structured = res.StructuredContent.(json.RawMessage)
		size += len(structured)
	}
	compact, html := scanJSON(structured)
	if !compact {
		return nil, false
	}
	rest := *res
	rest.Meta, rest.Content, rest.StructuredContent = nil, []mcp.Content{}, nil
	tail, err := json.Marshal(&rest)
	if err != nil || !bytes.HasPrefix(tail, []byte(contentOpen)) {
		return nil, false
	}
	tail = tail[len(contentOpen):] // "}" or the members after content
	b := make([]byte, 0, size+size/8+len(tail)+256)
	b = append(b, '{')
	if len(res.Meta) > 0 {
		meta, err := json.Marshal(map[string]any(res.Meta))
		if err != nil {
			return nil, false
		}
		b = append(b, `"_meta":`...)
		b = append(b, meta...)
		b = append(b, ',')
	}
	b = append(b, `"content":[`...)
	for i, c := range res.Content {
		if i > 0 {
			b = append(b, ',')
		}
		// TextContent.MarshalJSON is json.Marshal: HTML characters
		// escaped, which the later passes (no HTML escaping) keep.
		b = append(jsonstr.Marshal(append(b, `{"type":"text","text":`...), c.(*mcp.TextContent).Text), '}')
	}
	b = append(b, ']')
	if structured != nil {
		// MarshalJSON's json.Marshal compacts it with HTML escaping.
		b = append(b, `,"structuredContent":`...)
		if html {
			esc := bytes.NewBuffer(make([]byte, 0, len(structured)+len(structured)/8))
			json.HTMLEscape(esc, structured)
			b = append(b, esc.Bytes()...)
		} else {
			b = append(b, structured...)
		}
	}
	return append(b, tail...), true
}

// scanJSON reports whether b (valid JSON, as our encoders make it) has no
// whitespace outside its strings (compact: what compacting leaves as it
// is; empty b is compact), and if so whether it holds a byte HTML escaping
// may change ('<', '>', '&', or the first byte of U+2028 and U+2029). Most
// answers hold no whitespace byte at all, which a search for each byte
// tells at memory speed (a 230 KB pane list in ~0.05 ms instead of ~0.4).
func scanJSON(b []byte) (compact, html bool) {
	html = bytes.IndexByte(b, '<') >= 0 || bytes.IndexByte(b, '>') >= 0 || bytes.IndexByte(b, '&') >= 0 || bytes.IndexByte(b, 0xE2) >= 0
	if bytes.IndexByte(b, ' ') < 0 && bytes.IndexByte(b, '\t') < 0 && bytes.IndexByte(b, '\n') < 0 && bytes.IndexByte(b, '\r') < 0 {
		// No whitespace anywhere. (An open string would make b invalid,
		// which the SDK's own check of the encoding refuses.)
		return true, html
	}
	return scanJSONSlow(b)
}

// scanJSONSlow is scanJSON byte by byte.
func scanJSONSlow(b []byte) (compact, html bool) {
	in, esc := false, false
	for _, c := range b {
		switch {
		case c == '<' || c == '>' || c == '&' || c == 0xE2:
			html = true
		case esc:
			esc = false
		case in:
			if c == '\\' {
				esc = true
			} else if c == '"' {
				in = false
			}
		case c == '"':
			in = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			return false, html
		}
	}
	return !in, html
}
