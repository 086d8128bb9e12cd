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
	big := strings.Repeat("x", 16<<10)
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
	// What the SDK stamps on a result for a 2026-07-28 client, after our
	// middleware: its server info in _meta and an unexported result type,
	// set here the one way open to another package (decoding).
	stamped := func(res *mcp.CallToolResult) *mcp.CallToolResult {
		var r mcp.CallToolResult
		if err := json.Unmarshal([]byte(`{"content":[],"resultType":"complete"}`), &r); err != nil {
			t.Fatal(err)
		}
		r.Content, r.StructuredContent, r.IsError = res.Content, res.StructuredContent, res.IsError
		r.Meta = mcp.Meta{"fastmcp": map[string]any{"wrap_result": true}, "io.modelcontextprotocol/serverInfo": &mcp.Implementation{Name: "tmux", Title: "<tmux> & co", Version: "dev"}}
		if !bytes.Contains(sdkEncoding(t, &r), []byte(`"resultType":"complete"`)) {
			t.Fatalf("the result type did not survive decoding: %s", sdkEncoding(t, &r))
		}
		return &r
	}
	for _, tc := range []struct {
		name string
		res  *mcp.CallToolResult
		ok   bool
	}{
		{"a list, as buildResult makes it", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(list)}}, StructuredContent: json.RawMessage(wrapped), Meta: wrapMeta()}, true},
		{"an object without meta", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: big + odd}}, StructuredContent: json.RawMessage(`{"text":"` + big + `"}`)}, true},
		{"text only, with a note, an error", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: big + odd}, &mcp.TextContent{Text: "note <b>"}}, IsError: true}, true},
		{"meta with HTML characters", &mcp.CallToolResult{Meta: mcp.Meta{"z": "<&>", "a": map[string]any{"b": []any{1.5, "x"}}}, Content: []mcp.Content{&mcp.TextContent{Text: big}}}, true},
		{"small", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "small"}}}, true},
		{"a small object, as get_pane_info answers", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"pane_id":"%1","title":"<b> & é"}`}}, StructuredContent: json.RawMessage(`{"pane_id":"%1","title":"<b> & é"}`)}, true},
		{"empty text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{}}}, true},
		{"stamped for a 2026-07-28 client", stamped(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: odd}}, StructuredContent: json.RawMessage(`{"result":"x"}`)}), true},
		{"stamped, an error", stamped(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "failed <b>"}}, IsError: true}), true},
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

// TestEncodeResultsMiddleware: a tools/call result of our shape leaves the
// middleware encoded, large or small; other shapes and other methods'
// results as they were.
func TestEncodeResultsMiddleware(t *testing.T) {
	s := &Server{}
	large := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("y", 16<<10)}}}
	small := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "y"}}}
	image := &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: []byte("x"), MIMEType: "image/png"}}}
	for _, tc := range []struct {
		method  string
		res     mcp.Result
		encoded bool
	}{
		{"tools/call", large, true},
		{"tools/call", small, true},
		{"tools/call", image, false},
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

// FuzzEncodedResultMatchesSDK: for any text, a result as buildResult makes
// it (the text block, and structured content holding the same text, as
// our encoders write it) encodes byte for byte as the SDK encodes it.
func FuzzEncodedResultMatchesSDK(f *testing.F) {
	for _, s := range []string{"", "plain", "<a>&</a>", "\u2028\u2029", "\x00\x1f\x7f", "\xff\xfe", "日本 \U0001F600", `"\\"`} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, isError bool) {
		structured, err := marshalJSON(map[string]any{"text": s, "list": []string{s, s}})
		if err != nil {
			t.Skip(err)
		}
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}, StructuredContent: json.RawMessage(structured), IsError: isError}
		raw, ok := encodeResult(res)
		if !ok {
			t.Fatalf("not encoded: %q", structured)
		}
		if want := sdkEncoding(t, res); !bytes.Equal(raw, want) {
			t.Fatalf("encoding differs from the SDK's\n got: %q\nwant: %q", raw, want)
		}
	})
}

// TestEncodedResultsCarryTheSDKStamp: a result we encode, small or over
// the 16 KB that were once the threshold, reaches a 2026-07-28 client with
// the server info the SDK adds to every result's _meta after our
// middleware (before, a large result went out without it).
func TestEncodedResultsCarryTheSDKStamp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := showText(t, e, "main", strings.Repeat("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n", 400))
	for _, args := range []map[string]any{{"pane_id": id}, {"pane_id": id, "start": -1000}} {
		res := e.ok("capture_pane", args, nil)
		if _, ok := res.Meta[mcp.MetaKeyServerInfo]; !ok || res.Meta["fastmcp"] == nil {
			t.Errorf("capture_pane %v (%d bytes): _meta %v", args, len(text(res)), res.Meta)
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
