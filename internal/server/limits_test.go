package server

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// structured builds a result the way the registry does: the JSON of v as
// both structured content and its text copy.
func structured(v any) *mcp.CallToolResult {
	res, err := buildResult(v, false)
	if err != nil {
		panic(err)
	}
	return res
}

// wrapped builds a string or list result the way the registry does.
func wrapped(v any) *mcp.CallToolResult {
	res, err := buildResult(v, true)
	if err != nil {
		panic(err)
	}
	return res
}

// checkTextCopy checks that a result's text says what its structured
// content says: the JSON itself, or for a wrapped result the bare value
// (a string as is, a list as its JSON), with FastMCP's wrap marker.
func checkTextCopy(t testing.TB, s *Server, tool string, res *mcp.CallToolResult) {
	t.Helper()
	raw, _ := json.Marshal(res.StructuredContent)
	var sc any
	if err := json.Unmarshal(raw, &sc); err != nil {
		t.Fatalf("%s: structured content: %v", tool, err)
	}
	if s.tool(tool).outSchema()["x-fastmcp-wrap-result"] != true {
		var fromText any
		if err := json.Unmarshal([]byte(text(res)), &fromText); err != nil || !reflect.DeepEqual(fromText, sc) {
			t.Fatalf("%s: text copy is not the structured JSON: %v", tool, err)
		}
		return
	}
	if fm, _ := res.Meta["fastmcp"].(map[string]any); fm["wrap_result"] != true {
		t.Errorf("%s: _meta %v lacks fastmcp.wrap_result", tool, res.Meta)
	}
	m, _ := sc.(map[string]any)
	if str, isStr := m["result"].(string); isStr {
		if text(res) != str {
			t.Fatalf("%s: text %.60q is not structuredContent.result %.60q", tool, text(res), str)
		}
		return
	}
	var fromText any
	if err := json.Unmarshal([]byte(text(res)), &fromText); err != nil || !reflect.DeepEqual(fromText, m["result"]) {
		t.Fatalf("%s: text %.60q is not the bare result list (%v)", tool, text(res), err)
	}
}

// capped runs the limiter on res for tool and checks what holds for every
// answer it gives: within the cap, and valid against the tool's schema.
func capped(t *testing.T, s *Server, tool string, res *mcp.CallToolResult, out any) *mcp.CallToolResult {
	t.Helper()
	got := s.limitSize(s.tool(tool), res)
	b, _ := json.Marshal(got)
	if len(b) > maxResultBytes {
		t.Fatalf("%s: still %d bytes", tool, len(b))
	}
	if got.IsError {
		t.Fatalf("%s: error %s", tool, text(got))
	}
	if got.StructuredContent != nil {
		validateOutput(t, s, tool, got.StructuredContent)
		if out != nil {
			decodeStructured(t, got, out)
		}
		checkTextCopy(t, s, tool, got)
	}
	return got
}

// numbered returns n distinct lines of about width bytes.
func numbered(n, width int) []string {
	out := make([]string, n)
	pad := strings.Repeat("x", max(width-8, 0))
	for i := range out {
		out[i] = fmt.Sprintf("%07d %s", i, pad)
	}
	return out
}

// checkTail checks that kept is exactly the tail of orig after dropped
// lines: nothing added, nothing reordered, nothing cut.
func checkTail(t *testing.T, orig, kept []string, dropped int) {
	t.Helper()
	if dropped+len(kept) != len(orig) {
		t.Fatalf("%d dropped + %d kept != %d lines", dropped, len(kept), len(orig))
	}
	for i, l := range kept {
		if l != orig[dropped+i] {
			t.Fatalf("kept line %d is %.40q, want %.40q", i, l, orig[dropped+i])
		}
	}
}

// The issue-9 case: 3M characters with no newline came back as a forged
// line '[... truncated 1 items ...]' with output_truncated_lines 0.
func TestLimitSizeRunCommandOutput(t *testing.T) {
	t.Parallel()
	s := allToolsServer(t)
	status := 0
	for _, c := range []struct {
		name         string
		lines        []string
		before       int // output_truncated_lines set by max_lines
		wantNoneKept bool
	}{
		{"3M characters without a newline", []string{strings.Repeat("y", 3_000_000)}, 0, true},
		{"a line too long behind short ones", append(numbered(3, 10), strings.Repeat("z", 1_200_000)), 4, true},
		{"many lines", numbered(60_000, 40), 0, false},
		{"many lines after a max_lines cut", numbered(30_000, 80), 17, false},
		{"escaped characters", strings.Split(strings.Repeat("<&>\"\\\x01\n", 200_000), "\n"), 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := RunCommandResult{PaneID: "%1", ExitStatus: &status, Output: c.lines, OutputTruncated: c.before > 0, OutputTruncatedLines: c.before}
			var got RunCommandResult
			capped(t, s, "run_command", structured(in), &got)
			dropped := got.OutputTruncatedLines - c.before
			if !got.OutputTruncated || dropped <= 0 {
				t.Fatalf("truncated=%v lines=%d (before %d)", got.OutputTruncated, got.OutputTruncatedLines, c.before)
			}
			checkTail(t, c.lines, got.Output, dropped)
			if c.wantNoneKept != (len(got.Output) == 0) {
				t.Errorf("kept %d lines", len(got.Output))
			}
			if !c.wantNoneKept {
				// As much as fits is kept: one line more would not.
				b, _ := json.Marshal(s.limitSize(s.tool("run_command"), structured(in)))
				if len(b) < maxResultBytes-1000 {
					t.Errorf("only %d bytes kept", len(b))
				}
			}
			if got.PaneID != "%1" || got.ExitStatus == nil || *got.ExitStatus != 0 {
				t.Errorf("other fields changed: %+v", got)
			}
		})
	}
}

// capture_since counts a cut in bytes, as its max_bytes does, so there a
// line too long for the cap keeps its tail (on a character boundary).
func TestLimitSizeCaptureSince(t *testing.T) {
	t.Parallel()
	s := allToolsServer(t)
	for _, c := range []struct {
		name  string
		lines []string
	}{
		{"3M characters without a newline", []string{strings.Repeat("é", 1_500_000) + "END"}},
		{"many lines", numbered(50_000, 50)},
		{"long last line", append(numbered(100, 50), strings.Repeat("€", 400_000))},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := CaptureSinceResult{PaneID: "%1", Cursor: "c", Lines: c.lines, TruncatedLines: 3, Truncated: true, TruncatedBytes: 11}
			var got CaptureSinceResult
			capped(t, s, "capture_since", structured(in), &got)
			if !got.Truncated || got.TruncatedLines != 3 || len(got.Lines) == 0 {
				t.Fatalf("truncated=%v lines=%d kept=%d", got.Truncated, got.TruncatedLines, len(got.Lines))
			}
			orig := strings.Join(c.lines, "\n")
			kept := strings.Join(got.Lines, "\n")
			if !strings.HasSuffix(orig, kept) || !utf8.ValidString(kept) {
				t.Fatalf("kept text is not the original's tail")
			}
			if want := 11 + len(orig) - len(kept); got.TruncatedBytes != want {
				t.Errorf("truncated_bytes %d, want %d", got.TruncatedBytes, want)
			}
			// Only the oldest kept line may be partial.
			checkTail(t, c.lines[len(c.lines)-len(got.Lines)+1:], got.Lines[1:], 0)
		})
	}
}

// show_buffer and snapshot_pane hold lines in one string; the cut is at a
// line boundary and counted in content_truncated_lines.
func TestLimitSizeContentString(t *testing.T) {
	t.Parallel()
	s := allToolsServer(t)
	for _, c := range []struct {
		name, content string
		wantKept      string // "" to derive: the tail after the counted lines
	}{
		{"3M characters without a newline", strings.Repeat("q", 3_000_000), ""},
		{"many lines, trailing newline", strings.Join(numbered(40_000, 60), "\n") + "\n", "-"},
		{"many lines, no trailing newline", strings.Join(numbered(40_000, 60), "\n"), "-"},
		{"long last line", "a\nb\n" + strings.Repeat("w", 1_100_000), ""},
	} {
		check := func(t *testing.T, got string, flag bool, lines, before int) {
			t.Helper()
			dropped := lines - before
			if !flag || dropped <= 0 {
				t.Fatalf("truncated=%v lines=%d", flag, lines)
			}
			if !strings.HasSuffix(c.content, got) {
				t.Fatalf("content is not the original's tail")
			}
			head := c.content[:len(c.content)-len(got)]
			n := strings.Count(head, "\n")
			if !strings.HasSuffix(head, "\n") && head != "" {
				n++ // the whole remainder was dropped
			}
			if got != "" && head != "" && !strings.HasSuffix(head, "\n") {
				t.Fatalf("cut inside a line")
			}
			if n != dropped {
				t.Errorf("%d lines dropped, counted %d", n, dropped)
			}
			if (c.wantKept == "") != (got == "") {
				t.Errorf("kept %d bytes", len(got))
			}
		}
		t.Run("show_buffer "+c.name, func(t *testing.T) {
			var got BufferContent
			capped(t, s, "show_buffer", structured(BufferContent{BufferName: "b", Content: c.content}), &got)
			check(t, got.Content, got.ContentTruncated, got.ContentTruncatedLines, 0)
		})
		t.Run("snapshot_pane "+c.name, func(t *testing.T) {
			var got PaneSnapshot
			in := PaneSnapshot{PaneID: "%1", Content: c.content, ContentTruncated: true, ContentTruncatedLines: 5}
			capped(t, s, "snapshot_pane", structured(in), &got)
			check(t, got.Content, got.ContentTruncated, got.ContentTruncatedLines, 5)
		})
	}
}

// search_panes pages by pane: panes cut for size join truncated_panes,
// which already means "matched, re-request with a larger offset".
func TestLimitSizeSearchPanes(t *testing.T) {
	t.Parallel()
	s := allToolsServer(t)
	in := SearchPanesResult{TruncatedPanes: []string{"%900"}, TotalPanesMatched: 301, Limit: new(int)}
	*in.Limit = 300
	for i := 0; i < 300; i++ {
		in.Matches = append(in.Matches, PaneContentMatch{PaneID: fmt.Sprintf("%%%d", i), MatchedLines: numbered(50, 100)})
	}
	var got SearchPanesResult
	capped(t, s, "search_panes", structured(in), &got)
	k := len(got.Matches)
	if k == 0 || k == 300 || !got.Truncated || got.TotalPanesMatched != 301 {
		t.Fatalf("kept %d, truncated %v, total %d", k, got.Truncated, got.TotalPanesMatched)
	}
	want := []string{}
	for i := k; i < 300; i++ {
		want = append(want, fmt.Sprintf("%%%d", i))
	}
	want = append(want, "%900")
	if strings.Join(got.TruncatedPanes, ",") != strings.Join(want, ",") {
		t.Errorf("truncated_panes %v, want %v", got.TruncatedPanes, want)
	}
	for i, m := range got.Matches {
		if m.PaneID != fmt.Sprintf("%%%d", i) || len(m.MatchedLines) != 50 {
			t.Fatalf("match %d changed: %s, %d lines", i, m.PaneID, len(m.MatchedLines))
		}
	}
}

// capture_pane is text: its documented first line '[... truncated K
// lines ...]' carries the count, added to any cut max_lines made.
func TestLimitSizeCapturePaneText(t *testing.T) {
	t.Parallel()
	s := allToolsServer(t)
	lines := numbered(50_000, 40)
	escLines := strings.Split(strings.Repeat(strings.Repeat("<", 99)+"\n", 2000), "\n")
	for _, c := range []struct {
		name, in  string
		body      []string
		before    int
		wantEmpty bool
	}{
		{"3M characters without a newline", strings.Repeat("y", 3_000_000), []string{strings.Repeat("y", 3_000_000)}, 0, true},
		{"many lines", strings.Join(lines, "\n"), lines, 0, false},
		{"many lines after a max_lines cut", "[... truncated 9 lines ...]\n" + strings.Join(lines, "\n"), lines, 9, false},
		// 700 KB fits the cap once, but not with its structured copy.
		{"fits once, not twice", strings.Join(numbered(17_500, 40), "\n"), numbered(17_500, 40), 0, false},
		// 200 KB of text that is 1.2 MB once escaped.
		{"escaped characters", strings.Join(escLines, "\n"), escLines, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := capped(t, s, "capture_pane", wrapped(Text(c.in)), nil)
			if res.StructuredContent == nil {
				t.Fatal("the cut result lost its structured copy")
			}
			got := text(res)
			header, rest, _ := strings.Cut(got, "\n")
			var k int
			if _, err := fmt.Sscanf(header, "[... truncated %d lines ...]", &k); err != nil || header != fmt.Sprintf("[... truncated %d lines ...]", k) {
				t.Fatalf("first line %.60q", header)
			}
			dropped := k - c.before
			var kept []string
			if rest != "" {
				kept = strings.Split(rest, "\n")
			}
			checkTail(t, c.body, kept, dropped)
			if c.wantEmpty != (len(kept) == 0) {
				t.Errorf("kept %d lines", len(kept))
			}
		})
	}
}

// A result type with no field to mark a cut is refused with an error that
// says why, rather than returned with content cut or invented.
func TestLimitSizeRefusesWhatItCannotLabel(t *testing.T) {
	t.Parallel()
	s := allToolsServer(t)
	title := strings.Repeat("é", 600_000)
	var rows []PaneInfo
	for i := 0; i < 30_000; i++ {
		rows = append(rows, PaneInfo{PaneID: fmt.Sprintf("%%%d", i), PaneTitle: new(string)})
	}
	for _, c := range []struct {
		tool string
		res  *mcp.CallToolResult
	}{
		{"get_pane_info", structured(PaneInfo{PaneID: "%1", PaneTitle: &title})},
		{"list_panes", wrapped(rows)},
		{"display_message", wrapped(Text(strings.Repeat("m\n", 600_000)))},
	} {
		got := s.limitSize(s.tool(c.tool), c.res)
		msg := text(got)
		if !got.IsError || got.Meta["error_type"] != "ResultTooLarge" || !strings.Contains(msg, "1000000-byte") || strings.Contains(msg, "é") {
			t.Errorf("%s: %v %.200q", c.tool, got.Meta, msg)
		}
	}
}

// A result within the cap is returned as it is.
func TestLimitSizeLeavesSmallResults(t *testing.T) {
	t.Parallel()
	s := allToolsServer(t)
	res := structured(RunCommandResult{PaneID: "%1", Output: numbered(1000, 100)})
	if got := s.limitSize(s.tool("run_command"), res); got != res {
		t.Error("a small result was rebuilt")
	}
}

// A result just under the cap is left alone however its size is
// estimated; one just over it is cut.
func TestLimitSizeAtTheCap(t *testing.T) {
	t.Parallel()
	s := allToolsServer(t)
	line := func(n int) (*mcp.CallToolResult, int) {
		res := structured(RunCommandResult{PaneID: "%1", Output: []string{strings.Repeat("a", n)}})
		b, _ := json.Marshal(res)
		return res, len(b)
	}
	_, base := line(0) // each "a" costs 2 bytes: the JSON and its text copy
	n := (maxResultBytes - base) / 2
	under, size := line(n)
	if size > maxResultBytes || size < maxResultBytes-1 {
		t.Fatalf("setup: %d bytes", size)
	}
	if got := s.limitSize(s.tool("run_command"), under); got != under {
		t.Errorf("a %d-byte result was cut", size)
	}
	over, size := line(n + 1)
	var got RunCommandResult
	capped(t, s, "run_command", over, &got)
	if got.OutputTruncatedLines != 1 || len(got.Output) != 0 {
		t.Errorf("a %d-byte result: %+v", size, got)
	}
}
