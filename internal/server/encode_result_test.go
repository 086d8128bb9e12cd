package server

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkEncoding is how the SDK encodes a result into its JSON-RPC response
// (jsonrpc2's marshalToRaw: an Encoder without HTML escaping).
func sdkEncoding(t *testing.T, res any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// TestEncodedResultMatchesSDK: the encoding encodeResult makes is byte for
// byte the SDK's own, for text that JSON escapes in every way (HTML
// characters, U+2028, control characters, invalid UTF-8, non-ASCII) and
// every part of a result; shapes it does not make are left to the SDK.
func TestEncodedResultMatchesSDK(t *testing.T) {
	big := strings.Repeat("x", encodeMin)
	odd := "<a href=\"x\">&amp;</a>\u2028\u2029\x00\x1f\t\n\\ é ünï \xff\xfe 日本 \U0001F600 "
	items := []map[string]any{}
	for i := range 300 {
		items = append(items, map[string]any{"pane_id": "%" + strings.Repeat("1", i%5+1), "path": "/tmp/with space/" + odd, "n": i, "ok": i%2 == 0, "nil": nil})
	}
	list, err := marshalJSON(items)
	if err != nil {
		t.Fatal(err)
	}
	wrapped := append(append([]byte(`{"result":`), list...), '}')
	for _, tc := range []struct {
		name string
		res  *mcp.CallToolResult
		ok   bool
	}{
		{"a list, as buildResult makes it", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(list)}}, StructuredContent: json.RawMessage(wrapped), Meta: wrapMeta()}, true},
		{"an object without meta", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: big + odd}}, StructuredContent: json.RawMessage(`{"text":"` + big + `"}`)}, true},
		{"text only, with a note, an error", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: big + odd}, &mcp.TextContent{Text: "note <b>"}}, IsError: true}, true},
		{"meta with HTML characters", &mcp.CallToolResult{Meta: mcp.Meta{"z": "<&>", "a": map[string]any{"b": []any{1.5, "x"}}}, Content: []mcp.Content{&mcp.TextContent{Text: big}}}, true},
		{"small", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "small"}}}, false},
		{"structured with whitespace", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: big}}, StructuredContent: json.RawMessage(`{"a": 1}`)}, false},
		{"structured not raw", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: big}}, StructuredContent: map[string]any{"a": 1}}, false},
		{"an image", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: big}, &mcp.ImageContent{Data: []byte("x"), MIMEType: "image/png"}}}, false},
		{"annotated text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: big, Annotations: &mcp.Annotations{Priority: 1}}}}, false},
		{"no content", &mcp.CallToolResult{StructuredContent: json.RawMessage(`{"text":"` + big + `"}`)}, false},
	} {
		raw, ok := encodeResult(tc.res)
		if ok != tc.ok {
			t.Errorf("%s: encoded %v, want %v", tc.name, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		if want := sdkEncoding(t, tc.res); !bytes.Equal(raw, want) {
			t.Errorf("%s: encoding differs from the SDK's\n got: %.300s\nwant: %.300s", tc.name, raw, want)
		}
		// And through the wrapper, as the SDK sees it: the same bytes.
		if got := sdkEncoding(t, &encodedResult{CallToolResult: tc.res, raw: raw}); !bytes.Equal(got, raw) {
			t.Errorf("%s: the wrapper encodes as %.300s", tc.name, got)
		}
	}
}

// TestEncodedResultSplice: with a splicer, the wrapper encodes as the
// splicer's stand-in, made once however often it is encoded.
func TestEncodedResultSplice(t *testing.T) {
	calls := 0
	r := &encodedResult{CallToolResult: &mcp.CallToolResult{}, raw: []byte(`{"content":[]}`), splice: func(raw []byte) []byte {
		calls++
		return []byte(`{"stand-in":1}`)
	}}
	for range 2 {
		if got := sdkEncoding(t, r); string(got) != `{"stand-in":1}` {
			t.Errorf("got %s", got)
		}
	}
	if calls != 1 {
		t.Errorf("splice called %d times, want 1", calls)
	}
}

// TestEncodeResultsMiddleware: a large tools/call result leaves the
// middleware encoded; a small one and other methods' results as they were.
func TestEncodeResultsMiddleware(t *testing.T) {
	s := &Server{}
	large := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("y", encodeMin)}}}
	small := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "y"}}}
	for _, tc := range []struct {
		method  string
		res     mcp.Result
		encoded bool
	}{
		{"tools/call", large, true},
		{"tools/call", small, false},
		{"prompts/get", &mcp.GetPromptResult{}, false},
	} {
		h := s.encodeResults(func(context.Context, string, mcp.Request) (mcp.Result, error) { return tc.res, nil })
		got, err := h(context.Background(), tc.method, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, encoded := got.(*encodedResult); encoded != tc.encoded {
			t.Errorf("%s: encoded %v, want %v", tc.method, encoded, tc.encoded)
		}
	}
}

// benchPaneList is a 500-pane list_panes answer as the e2e benchmark's
// server gives it (half shells, half sleep, ten panes a window).
func benchPaneList() paneList {
	s := func(v string) *string { return &v }
	i := func(v int) *int { return &v }
	b := func(v bool) *bool { return &v }
	var l paneList
	for n := range 500 {
		cmd := "bash"
		if n%2 == 1 {
			cmd = "sleep"
		}
		l = append(l, PaneInfoForeground{PaneInfo: PaneInfo{
			PaneEdges: PaneEdges{PaneLeft: i(n % 3 * 27), PaneTop: i(n % 4 * 6), PaneRight: i(n%3*27 + 25), PaneBottom: i(n%4*6 + 4), PaneAtLeft: b(n%3 == 0),
				PaneAtRight: b(n%3 == 2), PaneAtTop: b(n%4 == 0), PaneAtBottom: b(n%4 == 3), PaneTTY: s("/dev/pts/" + strconv.Itoa(n+3))},
			IsCaller: b(false), PaneActive: s("0"), PaneCurrentCommand: s(cmd), PaneCurrentPath: s("/work/wt-listpanes2/e2e"),
			PaneHeight: s("5"), PaneID: "%" + strconv.Itoa(n), PaneIndex: s(strconv.Itoa(n % 10)), PanePID: s(strconv.Itoa(100000 + n)), PaneTitle: s("vm"), PaneWidth: s("26"),
			SessionID: s("$0"), WindowID: s("@" + strconv.Itoa(n/10)),
		}})
	}
	return l
}

// BenchmarkEncodePaneList is what a 500-pane list_panes answer costs
// between the handler's return and the transport: the result built
// (buildResult) and its encoding made (encodeResult).
func BenchmarkEncodePaneList(b *testing.B) {
	l := benchPaneList()
	b.Run("build", func(b *testing.B) {
		for b.Loop() {
			if _, err := buildResult(l, true); err != nil {
				b.Fatal(err)
			}
		}
	})
	res, err := buildResult(l, true)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("encode", func(b *testing.B) {
		for b.Loop() {
			if _, ok := encodeResult(res); !ok {
				b.Fatal("not encoded")
			}
		}
	})
}

// TestScanJSON: scanJSON's answer is the byte-by-byte scan's (whether b is
// compact, and if so whether it holds HTML characters), whether or
// not b holds whitespace (its fast path is for b without any), for every
// kind of byte HTML escaping changes and for whitespace inside and
// outside strings, after escaped quotes and backslashes.
func TestScanJSON(t *testing.T) {
	for _, tc := range []struct {
		b             string
		compact, html bool
	}{
		{``, true, false},
		{`{"a":1}`, true, false},
		{`{"a":"<"}`, true, true},
		{`{"a":">"}`, true, true},
		{`{"a":"&"}`, true, true},
		{"{\"a\":\"\u2028\"}", true, true},
		{"{\"a\":\"é\"}", true, false},
		{`{"a": 1}`, false, false},
		{"{\"a\":1}\n", false, false},
		{"[1,\t2]", false, false},
		{"{\"a\":1,\r\"b\":2}", false, false},
		{`{"a":"x y"}`, true, false},
		{`{"a":"x \" y"}`, true, false},
		{`{"a":"x \\"}, "b":1}`, false, false},
		{`{"a":"x \\\" y <"}`, true, true},
		{`["with space", "<b>"]`, false, false},
		{`["with space","<b>"]`, true, true},
	} {
		// html says something only of a compact b.
		compact, html := scanJSON([]byte(tc.b))
		if compact != tc.compact || compact && html != tc.html {
			t.Errorf("scanJSON(%q) = %v, %v; want %v, %v", tc.b, compact, html, tc.compact, tc.html)
		}
		if c, h := scanJSONSlow([]byte(tc.b)); c != compact || compact && h != html {
			t.Errorf("scanJSON(%q) = %v, %v; byte by byte %v, %v", tc.b, compact, html, c, h)
		}
	}
}
