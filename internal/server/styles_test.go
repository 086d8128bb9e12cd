package server

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/termgrid/screentest"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// span is a styles entry read back: "ROW[-LAST]:COL+WIDTH words".
type span struct {
	row, last, col, width int
	words                 string
}

var spanRE = regexp.MustCompile(`^(\d+)(?:-(\d+))?:(\d+)\+(\d+) (\S.*)$`)

func parseSpan(t testing.TB, s string) span {
	t.Helper()
	m := spanRE.FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("span %q is not ROW[-LAST]:COL+WIDTH words", s)
	}
	n := func(s string) int { v, _ := strconv.Atoi(s); return v }
	sp := span{row: n(m[1]), last: n(m[1]), col: n(m[3]), width: n(m[4]), words: m[5]}
	if m[2] != "" {
		sp.last = n(m[2])
	}
	if sp.last < sp.row || sp.width < 1 {
		t.Fatalf("span %q: empty", s)
	}
	return sp
}

// covered is the text of line in columns col..col+width (terminal cells);
// cells past the line's text are blanks. It counts columns on its own (CJK
// ideographs are two, everything else one: enough for the samples here),
// not with termgrid's widths, which it checks.
func covered(line string, col, width int) string {
	var b strings.Builder
	x := 0
	for _, r := range line {
		w := 1
		if r >= 0x4e00 && r <= 0x9fff {
			w = 2
		}
		if x >= col && x < col+width {
			b.WriteRune(r)
		}
		x += w
	}
	for ; x < col+width; x++ {
		if x >= col {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// styledCapture calls capture_pane with styles and returns its text
// lines (after any cut notice), the cut notice's count, and the spans,
// checking the answer's shape: the text block first, exactly what the
// same call without styles answers, then {"styles": [...]}, the same
// spans as the structured content's.
func styledCapture(t *testing.T, e *env, args map[string]any) (lines []string, dropped int, spans []string) {
	t.Helper()
	plain, styled := map[string]any{}, map[string]any{"styles": true}
	for k, v := range args {
		if k != "styles" {
			plain[k], styled[k] = v, v
		}
	}
	res := e.ok("capture_pane", styled, nil)
	if len(res.Content) != 2 {
		t.Fatalf("capture_pane with styles: %d content blocks, want the text and the styles", len(res.Content))
	}
	txt := res.Content[0].(*mcp.TextContent).Text
	var want string
	e.ok("capture_pane", plain, &want)
	if txt != want {
		t.Fatalf("the text with styles differs from the text without\n with    %q\n without %q", txt, want)
	}
	var block struct {
		Styles []string `json:"styles"`
	}
	if err := json.Unmarshal([]byte(res.Content[1].(*mcp.TextContent).Text), &block); err != nil || block.Styles == nil {
		t.Fatalf("styles block %q: %v", res.Content[1].(*mcp.TextContent).Text, err)
	}
	var sc struct {
		Result string   `json:"result"`
		Styles []string `json:"styles"`
	}
	decodeStructured(t, res, &sc)
	if sc.Result != txt || !reflect.DeepEqual(sc.Styles, block.Styles) {
		t.Fatalf("structured content %+v differs from the content blocks", sc)
	}
	if m := captureHeaderRE().FindStringSubmatch(txt); m != nil {
		dropped, _ = strconv.Atoi(m[1])
		txt = txt[len(m[0]):]
	}
	return strings.Split(txt, "\n"), dropped, block.Styles
}

// styledSample is a pane's worth of history whose styles a test can
// predict from each line's text: "NNN ....ERRn tail" has ERRn in bold red
// at column 4 + n%7; three "sel" lines have "  item  " in reverse video at
// the same columns, its trailing blanks styled; a wide line has its
// selection after two wide characters.
func styledSample() string {
	var b strings.Builder
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&b, "%03d %s\x1b[1;31mERR%d\x1b[0m tail\n", i, strings.Repeat(".", i%7), i)
		if i == 40 {
			for range 3 {
				b.WriteString("sel \x1b[7m  item  \x1b[0m\n")
			}
			b.WriteString("中文 \x1b[7m選択\x1b[0m x\n")
		}
	}
	b.WriteString("end\n")
	return b.String()
}

// expectedSpan is what the sample's line shows styled, by its text.
func expectedSpan(line string) (text, words string, ok bool) {
	switch {
	case strings.HasPrefix(line, "sel "):
		return "  item  ", "reverse", true
	case strings.HasPrefix(line, "中文"):
		return "選択", "reverse", true
	case strings.Contains(line, "ERR"):
		i := strings.Index(line, "ERR")
		return strings.Fields(line[i:])[0], "bold fg:red", true
	}
	return "", "", false
}

// checkSpansLineUp holds every span to the sample: it covers exactly the
// styled text of each of its rows, and every styled line is covered.
func checkSpansLineUp(t *testing.T, lines []string, spans []string) {
	t.Helper()
	seen := make([]bool, len(lines))
	for _, s := range spans {
		sp := parseSpan(t, s)
		if sp.last >= len(lines) {
			t.Fatalf("span %q: rows past the %d lines returned", s, len(lines))
		}
		for r := sp.row; r <= sp.last; r++ {
			text, words, ok := expectedSpan(lines[r])
			got := covered(lines[r], sp.col, sp.width)
			if !ok || got != text || sp.words != words {
				t.Errorf("span %q on line %d %q covers %q as %q, want %q as %q", s, r, lines[r], got, sp.words, text, words)
			}
			seen[r] = true
		}
	}
	for r, l := range lines {
		if _, _, ok := expectedSpan(l); ok && !seen[r] {
			t.Errorf("line %d %q is styled but in no span (spans %q)", r, l, spans)
		}
	}
}

// TestStylesLineUp: the spans' rows are the rows of the text the same call
// returns, after start/end and a max_lines cut, and their columns are
// terminal cells (wide characters, styled trailing blanks).
func TestStylesLineUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := showText(t, e, "main", styledSample())
	for _, c := range []struct {
		name string
		args map[string]any
		cut  bool
	}{
		{"visible screen", map[string]any{"pane_id": id}, false},
		{"history, all of it", map[string]any{"pane_id": id, "start": -100, "max_lines": nil}, false},
		{"history cut by max_lines", map[string]any{"pane_id": id, "start": -100, "max_lines": 30}, true},
		{"start and end in history", map[string]any{"pane_id": id, "start": -30, "end": -20}, false},
		{"start and end, cut", map[string]any{"pane_id": id, "start": -30, "end": -5, "max_lines": 7}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			lines, dropped, spans := styledCapture(t, e, c.args)
			if (dropped > 0) != c.cut {
				t.Fatalf("%d lines cut", dropped)
			}
			if len(spans) == 0 {
				t.Fatalf("no spans for %d lines: %q", len(lines), lines)
			}
			checkSpansLineUp(t, lines, spans)
		})
	}
	t.Run("same columns on consecutive rows are one span", func(t *testing.T) {
		_, _, spans := styledCapture(t, e, map[string]any{"pane_id": id, "start": -100, "max_lines": nil})
		var merged []string
		for _, s := range spans {
			if strings.HasSuffix(s, ":4+8 reverse") {
				merged = append(merged, s)
			}
		}
		if len(merged) != 1 || parseSpan(t, merged[0]).last-parseSpan(t, merged[0]).row != 2 {
			t.Errorf("the three selection lines are spans %q", merged)
		}
	})
	t.Run("snapshot_pane: the same spans as capture_pane", func(t *testing.T) {
		for _, maxLines := range []any{nil, 5} {
			args := map[string]any{"pane_id": id, "max_lines": maxLines}
			var snap, plain PaneSnapshot
			e.ok("snapshot_pane", map[string]any{"pane_id": id, "max_lines": maxLines, "styles": true}, &snap)
			e.ok("snapshot_pane", args, &plain)
			if snap.Content != plain.Content || snap.ContentTruncatedLines != plain.ContentTruncatedLines {
				t.Fatalf("snapshot content with styles %q differs from without %q", snap.Content, plain.Content)
			}
			lines, dropped, spans := styledCapture(t, e, map[string]any{"pane_id": id, "max_lines": maxLines})
			if snap.ContentTruncatedLines != dropped || !reflect.DeepEqual(snap.Styles, spans) || strings.Join(lines, "\n") != snap.Content {
				t.Errorf("max_lines %v: snapshot styles %q (%d cut), capture_pane %q (%d cut)", maxLines, snap.Styles, snap.ContentTruncatedLines, spans, dropped)
			}
			checkSpansLineUp(t, strings.Split(snap.Content, "\n"), snap.Styles)
		}
	})
	t.Run("a plain pane: styles is empty, not absent", func(t *testing.T) {
		plainPane := showText(t, e, "main", "no colour here\n")
		_, _, spans := styledCapture(t, e, map[string]any{"pane_id": plainPane})
		if len(spans) != 0 {
			t.Errorf("spans %q", spans)
		}
		res := e.ok("snapshot_pane", map[string]any{"pane_id": plainPane, "styles": true}, nil)
		if !strings.Contains(text(res), `"styles":[]`) {
			t.Errorf("snapshot without styled cells: %s", text(res))
		}
	})
}

// TestStylesOffAnswersUnchanged: without styles, capture_pane's answer is
// the bare capture as before (one text block, {"result": text}, FastMCP's
// wrap marker) and snapshot_pane's has no styles field; styles: false is
// the same answer, byte for byte.
func TestStylesOffAnswersUnchanged(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := showText(t, e, "main", styledSample())
	outs, err := directRunner(e).Run(context.Background(), tmux.Socket{Name: e.tmux.Socket.Name},
		tmux.Command{"capture-pane", "-p", "-t", id})
	if err != nil {
		t.Fatal(err)
	}
	plain := strings.TrimRight(string(outs[0]), "\n") // the pane's blank rows at the bottom
	// The answer as the client receives it: its content, structured
	// content and _meta (besides the server's own entry, on every result).
	wire := func(res *mcp.CallToolResult) string {
		return mustJSON([]any{res.Content, res.StructuredContent, res.Meta["fastmcp"], len(res.Meta), res.IsError})
	}
	want := mustJSON([]any{[]mcp.Content{&mcp.TextContent{Text: plain}}, map[string]any{"result": plain},
		map[string]any{"wrap_result": true}, 2, false})
	if got := wire(e.ok("capture_pane", map[string]any{"pane_id": id}, nil)); got != want {
		t.Errorf("capture_pane without styles\n got %s\nwant %s", got, want)
	}
	if got := wire(e.ok("capture_pane", map[string]any{"pane_id": id, "styles": false}, nil)); got != want {
		t.Errorf("capture_pane with styles false\n got %s\nwant %s", got, want)
	}
	snap := e.ok("snapshot_pane", map[string]any{"pane_id": id}, nil)
	if strings.Contains(text(snap), `"styles"`) || len(snap.Content) != 1 {
		t.Errorf("snapshot_pane without styles: %s", text(snap))
	}
	snapFalse := e.ok("snapshot_pane", map[string]any{"pane_id": id, "styles": false}, nil)
	if a, b := wire(snap), wire(snapFalse); a != b {
		t.Errorf("snapshot_pane with styles false\n got %s\nwant %s", b, a)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// directRunner is a runner on e's tmux server of its own, to ask tmux directly.
func directRunner(e *env) tmux.Runner { return e.tmux.Runner() }

// TestStylesCorpus runs real programs (screentest: ls, git diff, grep,
// vim, less, top, htop, dialog) and reads each screen with and without
// styles: the text is the same (derived from the styled capture, it is
// tmux's plain capture), the spans name what each program means by colour,
// and they cost far fewer bytes than tmux's own escape codes. It prints
// the byte table.
func TestStylesCorpus(t *testing.T) {
	e := newEnv(t)
	screens := screentest.Start(t, e.tmux)
	// What each screen's spans must show: text a span covers, and the
	// words it must have.
	wants := map[string][]struct{ text, words string }{
		"ls --color":                    {{"docs", "bold fg:blue"}, {"script.sh", "bold fg:green"}, {"link", "bold fg:cyan"}},
		"git diff --color":              {{"-       return a + b // wrong", "fg:red"}, {"+       return a * b", "fg:green"}, {"@@ -7,5 +7,5 @@", "fg:cyan"}},
		"grep --color":                  {{"return", "bold fg:red"}, {"./calc.go", "fg:magenta"}},
		"vim syntax + visual selection": {{"-- VISUAL LINE --", "bold"}, {"package", "fg:130"}},
		"less search match":             {{"lorem", "reverse"}},
		"top":                           {{"  PID USER", "reverse"}},
		"htop":                          {{"Help", "fg:black bg:cyan"}},
		"dialog menu":                   {{"Banana", "bold fg:white bg:blue"}, {"Apple", "fg:black bg:white"}},
	}
	var table []string
	table = append(table, fmt.Sprintf("%-31s %7s %7s %9s %7s %6s", "screen", "plain", "raw -e", "-e (JSON)", "spans", "spans/-e"))
	for _, sc := range screens {
		lines, _, spans := styledCapture(t, e, map[string]any{"pane_id": sc.Pane})
		var snap PaneSnapshot
		e.ok("snapshot_pane", map[string]any{"pane_id": sc.Pane, "styles": true}, &snap)
		if snap.Content != strings.Join(lines, "\n") || !reflect.DeepEqual(snap.Styles, spans) {
			t.Errorf("%s: snapshot_pane's content and styles differ from capture_pane's", sc.Name)
		}
		// The same screen as tmux prints it: plain and with escapes.
		outs, err := directRunner(e).Run(context.Background(), tmux.Socket{Name: e.tmux.Socket.Name},
			tmux.Command{"capture-pane", "-p", "-t", sc.Pane}, tmux.Command{"capture-pane", "-p", "-e", "-t", sc.Pane})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Join(lines, "\n"), strings.TrimRight(string(outs[0]), "\n"); got != want {
			t.Errorf("%s: text %q is not tmux's plain capture %q", sc.Name, got, want)
		}
		for _, w := range wants[sc.Name] {
			if !spanCovers(t, lines, spans, w.text, w.words) {
				t.Errorf("%s: no span covers %q with %q: %q", sc.Name, w.text, w.words, spans)
			}
		}
		block, _ := json.Marshal(map[string]any{"styles": spans}) // the second text block
		rawJSON, _ := json.Marshal(string(outs[1]))
		if len(block) >= len(outs[1]) {
			t.Errorf("%s: spans take %d bytes, tmux's escape codes %d", sc.Name, len(block), len(outs[1]))
		}
		table = append(table, fmt.Sprintf("%-31s %7d %7d %9d %7d %5.0f%%", sc.Name, len(outs[0]), len(outs[1]), len(rawJSON), len(block),
			100*float64(len(block))/float64(len(outs[1]))))
	}
	t.Logf("bytes per screen (plain and raw -e: tmux's capture-pane -p and -p -e; -e (JSON): that as a JSON string; spans: the {\"styles\": [...]} block):\n%s", strings.Join(table, "\n"))
}

// spanCovers reports whether text, on some line, is in a span of each
// of words (each attribute and colour is a span of its own).
func spanCovers(t *testing.T, lines, spans []string, text, words string) bool {
	t.Helper()
	for r, l := range lines {
		all := true
		for _, w := range strings.Fields(words) {
			found := false
			for _, s := range spans {
				sp := parseSpan(t, s)
				if r >= sp.row && r <= sp.last && strings.Contains(" "+sp.words+" ", " "+w+" ") &&
					strings.Contains(covered(l, sp.col, sp.width), text) {
					found = true
				}
			}
			all = all && found
		}
		if all {
			return true
		}
	}
	return false
}

// TestStylesOnHost: through a remote host (ssh to a loopback sshd), the
// styled answers are the local ones for the same screen.
func TestStylesOnHost(t *testing.T) {
	he := newHostEnv(t)
	e := he.env
	f := filepath.Join(t.TempDir(), "sample")
	if err := os.WriteFile(f, []byte(styledSample()), 0o644); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ts := range []*tmuxtest.Server{e.tmux, he.box} {
		id := ts.MustRun("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "main:", "cat "+f+"; exec sleep 600")
		tmuxtest.WaitFor(t, 10*time.Second, func() bool {
			out, _ := ts.Run("capture-pane", "-p", "-t", id)
			return strings.Contains(out, "\nend")
		})
		ids = append(ids, id)
	}
	for _, args := range []map[string]any{{}, {"start": -30, "max_lines": 12}} {
		local := map[string]any{"pane_id": ids[0], "styles": true}
		remote := on(map[string]any{"pane_id": ids[1], "styles": true})
		for k, v := range args {
			local[k], remote[k] = v, v
		}
		l, r := e.ok("capture_pane", local, nil), e.ok("capture_pane", remote, nil)
		if a, b := mustJSON(l.Content), mustJSON(r.Content); a != b || len(r.Content) != 2 {
			t.Errorf("capture_pane %v: on box\n%s\nlocally\n%s", args, b, a)
		}
		lines, _, spans := styledCapture(t, e, remote)
		checkSpansLineUp(t, lines, spans)
	}
	var ls, rs PaneSnapshot
	e.ok("snapshot_pane", map[string]any{"pane_id": ids[0], "styles": true}, &ls)
	e.ok("snapshot_pane", on(map[string]any{"pane_id": ids[1], "styles": true}), &rs)
	if rs.Host == nil || *rs.Host != "box" || rs.Content != ls.Content || !reflect.DeepEqual(rs.Styles, ls.Styles) || len(rs.Styles) == 0 {
		t.Errorf("snapshot_pane on box: host %v, content %q, styles %q; locally %q, %q", rs.Host, rs.Content, rs.Styles, ls.Content, ls.Styles)
	}
}

// TestLimitSizeRefusesStyled: a styled answer over the 1 MB cap is refused
// with ResultTooLarge, never cut from the head, which would leave its
// spans on the wrong lines; the same answers without styles are cut as
// before.
func TestLimitSizeRefusesStyled(t *testing.T) {
	t.Parallel()
	s := allToolsServer(t)
	content := strings.Join(numbered(40_000, 40), "\n")
	styled, err := paneText{content, []string{"0:0+7 bold"}}.buildResult()
	if err != nil {
		t.Fatal(err)
	}
	plain, err := paneText{content, nil}.buildResult()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool         string
		styled, bare *mcp.CallToolResult
	}{
		{"capture_pane", styled, plain},
		{"snapshot_pane", structured(PaneSnapshot{PaneID: "%1", Content: content, Styles: []string{"0:0+7 bold"}}),
			structured(PaneSnapshot{PaneID: "%1", Content: content})},
	} {
		got := s.limitSize(s.tool(c.tool), c.styled)
		if !got.IsError || got.Meta["error_type"] != "ResultTooLarge" {
			t.Errorf("%s with styles over the cap: %.200s", c.tool, text(got))
		}
		if cut := capped(t, s, c.tool, c.bare, nil); !strings.Contains(text(cut), "truncated") {
			t.Errorf("%s without styles over the cap was not cut: %.100s", c.tool, text(cut))
		}
	}
}

// TestStyledCaptureOverTheCap: a styled capture whose text alone is over
// the result cap is refused (ResultTooLarge) before its cells are made: a
// few bytes of allocation per byte of text, not a cell's worth per
// character. The same pane without styles is cut to fit, as before.
//
// Not parallel: the allocation is measured process-wide (the least of a
// few runs, as other goroutines can only add to it).
func TestStyledCaptureOverTheCap(t *testing.T) {
	s := allToolsServer(t)
	var b strings.Builder
	for i := range 30_000 {
		fmt.Fprintf(&b, "\x1b[1m%07d\x1b[0m %s\n", i, strings.Repeat("x", 70))
	}
	capture := []byte(b.String())
	least := uint64(1 << 62)
	for range 3 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, _, _, err := paneLines(s.tool("capture_pane"), capture, true, nil)
		runtime.ReadMemStats(&after)
		if te := toToolError(err); err == nil || te.Type != "ResultTooLarge" {
			t.Fatalf("styled capture of %d bytes: %v", len(capture), err)
		}
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	if least > 8*uint64(len(capture)) {
		t.Errorf("refusing %d bytes allocated %d", len(capture), least)
	}
	if kept, dropped, _, err := paneLines(s.tool("capture_pane"), capture, true, new(500)); err != nil || len(kept) != 500 || dropped != 29_500 {
		t.Errorf("with max_lines 500: %d kept, %d dropped, %v", len(kept), dropped, err)
	}

	e := newEnv(t)
	e.tmux.MustRun("set-option", "-g", "history-limit", "20000")
	line := strings.Repeat("y", 79)
	id := showCommand(t, e, "main", "for i in $(seq 15000); do echo "+line+"; done; echo done", "\ndone")
	_, meta := e.fail("capture_pane", map[string]any{"pane_id": id, "start": -20000, "max_lines": nil, "styles": true})
	if meta["error_type"] != "ResultTooLarge" {
		t.Errorf("styled capture over the cap: %v", meta)
	}
	var got string
	e.ok("capture_pane", map[string]any{"pane_id": id, "start": -20000, "max_lines": nil}, &got)
	if !strings.HasPrefix(got, "[... truncated ") {
		t.Errorf("plain capture over the cap was not cut: %.80q", got)
	}
}
