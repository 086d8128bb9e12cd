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
// list the panes. encodeResults makes the result's encoding once, byte for
// byte what the SDK makes (TestEncodedResultMatchesSDK), and hands it on
// in an encodedResult: the SDK then checks it once per pass instead of
// building it, and where the transport can take the encoding as it is
// (stdio.Framer.Splice, set with SetSplicer) the SDK encodes only a small
// stand-in and the transport writes the encoding in its place.

// encodeMin is the smallest encoded result encodeResults takes over: below
// it the SDK's passes cost less than a few microseconds.
const encodeMin = 16 << 10

// encodedResult is a tool result with its encoding made. It is the
// CallToolResult for everything that reads it, and encodes as raw (or as
// the transport's stand-in for raw).
type encodedResult struct {
	*mcp.CallToolResult
	raw    []byte
	splice func([]byte) []byte

	once sync.Once
	out  []byte
}

// MarshalJSON returns the encoding, or the transport's stand-in for it,
// the same bytes however often it is asked (a stand-in is made once).
func (r *encodedResult) MarshalJSON() ([]byte, error) {
	r.once.Do(func() {
		r.out = r.raw
		if r.splice != nil {
			r.out = r.splice(r.raw)
		}
	})
	return r.out, nil
}

// SetSplicer makes large tool results go to the transport as encodings
// made once (see encodeResults): splice holds an encoding and returns the
// stand-in the SDK encodes instead. Only for a transport that puts every
// encoding back (stdio.Framer); set before serving.
func (s *Server) SetSplicer(splice func(raw []byte) []byte) { s.splice = splice }

// encodeResults is the outermost middleware: a large tools/call result
// leaves as an encodedResult.
func (s *Server) encodeResults(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != "tools/call" {
			return res, err
		}
		if r, ok := res.(*mcp.CallToolResult); ok {
			if raw, ok := encodeResult(r); ok {
				return &encodedResult{CallToolResult: r, raw: raw, splice: s.splice}, nil
			}
		}
		return res, nil
	}
}

// encodeResult encodes res as the SDK does (mcp.CallToolResult's
// MarshalJSON, a json.Marshal: HTML characters escaped everywhere, then
// compacted without more escaping), for the shape our
// tools answer with: text blocks without annotations and structured
// content already compact. ok is false for any other shape, and for a
// result under encodeMin.
func encodeResult(res *mcp.CallToolResult) (raw []byte, ok bool) {
	if res == nil || len(res.Content) == 0 || res.InputRequests != nil {
		return nil, false
	}
	size := 0
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok || tc.Meta != nil || tc.Annotations != nil {
			return nil, false
		}
		size += len(tc.Text)
	}
	var structured json.RawMessage
	if res.StructuredContent != nil {
		sc, ok := res.StructuredContent.(json.RawMessage)
		if !ok || sc == nil {
			return nil, false
		}
		structured = sc
		size += len(sc)
	}
	if size < encodeMin {
		return nil, false
	}
	compact, html := scanJSON(structured)
	if !compact {
		return nil, false
	}
	b := make([]byte, 0, size+size/8+256)
	b = append(b, '{')
	if len(res.Meta) > 0 {
		meta, err := json.Marshal(map[string]any(res.Meta))
		if err != nil {
			return nil, false
		}
		b = append(append(b, `"_meta":`...), meta...)
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
	if res.IsError {
		b = append(b, `,"isError":true`...)
	}
	return append(b, '}'), true
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
