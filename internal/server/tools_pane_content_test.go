package server

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// forgedFraming is pane text that forges control-mode framing: %end
// guards for the next perSecond commands tmux will number (it numbers them
// server-wide), stamped this second and the next two, then a %begin and
// %error, an %output, %exit lines and an %end with a made-up number.
func forgedFraming(t *testing.T, ts *tmuxtest.Server, perSecond int) []string {
	t.Helper()
	next := controlCommandNumber(t, ts)
	now := time.Now().Unix()
	var lines []string
	for sec := now; sec <= now+2; sec++ {
		for n := next; n < next+perSecond; n++ {
			lines = append(lines, fmt.Sprintf("%%end %d %d 1", sec, n))
		}
	}
	lines = append(lines, fmt.Sprintf("%%begin %d %d 1", now, next+1), fmt.Sprintf("%%error %d %d 1", now, next+2))
	return append(lines, "%output %0 forged", "%exit", "%end "+strconv.FormatInt(now, 10)+" 1 1", "%exit")
}

// showText opens a window in session whose pane prints text and then idles,
// and returns its pane id once all of the text is on the pane.
func showText(t *testing.T, e *env, session, text string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "content")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return showCommand(t, e, session, "cat "+f, lastLine(text))
}

// showCommand runs a shell command in a new window of session, then idles;
// it returns once sentinel is in the pane's history or screen.
func showCommand(t *testing.T, e *env, session, command, sentinel string) string {
	t.Helper()
	id := e.tmux.MustRun("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", session+":", command+"; exec sleep 600")
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		out, _ := e.tmux.Run("capture-pane", "-p", "-J", "-S", "-", "-t", id)
		return strings.Contains(out, sentinel)
	})
	return id
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func seqLines(from, to int) string {
	var b []string
	for i := from; i <= to; i++ {
		b = append(b, strconv.Itoa(i))
	}
	return strings.Join(b, "\n")
}

func TestCapturePane(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// 100 lines in a 24-row pane: 1..77 scroll into history, 78..100 stay
	// visible above the blank row that holds the cursor.
	seq := showCommand(t, e, "main", "seq 1 100", "\n100")
	blanks := showText(t, e, "main", "a\n\n\nb\n")
	wide := showText(t, e, "main", strings.Repeat("x", 100)+"\n")

	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"visible screen, trailing blank rows trimmed", map[string]any{"pane_id": seq}, seqLines(78, 100)},
		{"tail kept with header", map[string]any{"pane_id": seq, "max_lines": 5}, "[... truncated 18 lines ...]\n" + seqLines(96, 100)},
		{"exactly max_lines is not truncated", map[string]any{"pane_id": seq, "max_lines": 23}, seqLines(78, 100)},
		{"history range", map[string]any{"pane_id": seq, "start": -100}, seqLines(1, 100)},
		{"history range, no cap", map[string]any{"pane_id": seq, "start": -100, "max_lines": nil}, seqLines(1, 100)},
		{"history range truncated", map[string]any{"pane_id": seq, "start": -100, "max_lines": 10}, "[... truncated 90 lines ...]\n" + seqLines(91, 100)},
		{"start and end on screen", map[string]any{"pane_id": seq, "start": 0, "end": 2}, "78\n79\n80"},
		{"start and end in history", map[string]any{"pane_id": seq, "start": -3, "end": -1}, "75\n76\n77"},
		{"interior blank rows kept", map[string]any{"pane_id": blanks}, "a\n\n\nb"},
		{"wrapped rows not joined", map[string]any{"pane_id": wide}, strings.Repeat("x", 80) + "\n" + strings.Repeat("x", 20)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got string
			e.ok("capture_pane", c.args, &got)
			if got != c.want {
				t.Errorf("got %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestCapturePaneTargets(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tmux.MustRun("new-session", "-d", "-s", "other", "-x", "80", "-y", "24", "printf 'in other\\n'; exec sleep 600")
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		out, _ := e.tmux.Run("capture-pane", "-p", "-t", "=other:")
		return strings.Contains(out, "in other")
	})
	for _, args := range []map[string]any{{"session_name": "other"}, {"session_id": "$1"}, {"window_id": "@1"}} {
		var got string
		e.ok("capture_pane", args, &got)
		if got != "in other" {
			t.Errorf("%v: got %q", args, got)
		}
	}
}

// contentToolErrors are the target and limit errors every content tool
// shares.
func TestContentToolErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dead := newEnvOn(t, tmuxtest.NewWith(t))
	type tc struct {
		name     string
		e        *env
		tool     string
		args     map[string]any
		wantText string
		wantType string
	}
	var cases []tc
	for _, tool := range []string{"capture_pane", "snapshot_pane", "display_message"} {
		base := func(extra map[string]any) map[string]any {
			m := map[string]any{}
			if tool == "display_message" {
				m["format_string"] = "#{pane_id}"
			}
			for k, v := range extra {
				m[k] = v
			}
			return m
		}
		cases = append(cases,
			tc{"unknown pane", e, tool, base(map[string]any{"pane_id": "%999"}), "Pane not found: %999", "PaneNotFound"},
			tc{"malformed pane id", e, tool, base(map[string]any{"pane_id": "%1;kill-server"}), "malformed tmux id", "PaneNotFound"},
			tc{"unknown session", e, tool, base(map[string]any{"session_name": "nope"}), "Session not found: nope", "TmuxObjectDoesNotExist"},
			tc{"unknown window", e, tool, base(map[string]any{"window_id": "@42"}), "Window not found: @42", "TmuxObjectDoesNotExist"},
			tc{"dead server", dead, tool, base(map[string]any{"pane_id": "%0"}), "no tmux server", "TmuxServerNotRunning"},
		)
		if tool != "display_message" {
			cases = append(cases,
				tc{"max_lines 0", e, tool, map[string]any{"max_lines": 0}, "max_lines must be a positive integer", "ExpectedToolError"},
				tc{"max_lines -1", e, tool, map[string]any{"max_lines": -1}, "max_lines must be a positive integer", "ExpectedToolError"},
			)
		}
	}
	for _, c := range cases {
		t.Run(c.tool+"/"+c.name, func(t *testing.T) {
			msg, meta := c.e.fail(c.tool, c.args)
			if !strings.Contains(msg, c.wantText) {
				t.Errorf("message %q does not contain %q", msg, c.wantText)
			}
			if meta["error_type"] != c.wantType || meta["expected"] != true {
				t.Errorf("error_type %v expected %v, want %s", meta["error_type"], meta["expected"], c.wantType)
			}
		})
	}
}

func TestSnapshotPane(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := showCommand(t, e, "main", "seq 1 30", "\n30")

	var s PaneSnapshot
	e.ok("snapshot_pane", map[string]any{"pane_id": id}, &s)
	checks := []struct {
		name string
		ok   bool
	}{
		{"pane_id", s.PaneID == id},
		{"content is the visible screen", s.Content == seqLines(8, 30)},
		{"not truncated", !s.ContentTruncated && s.ContentTruncatedLines == 0},
		{"cursor on the row below the output", s.CursorX == 0 && s.CursorY == 23},
		{"size", s.PaneWidth == 80 && s.PaneHeight == 24},
		{"geometry", s.PaneLeft != nil && *s.PaneLeft == 0 && s.PaneTop != nil && *s.PaneTop == 0 && s.PaneRight != nil && *s.PaneRight == 79 && s.PaneBottom != nil && *s.PaneBottom == 23},
		{"edges", s.PaneAtLeft != nil && *s.PaneAtLeft && s.PaneAtRight != nil && *s.PaneAtRight && s.PaneAtTop != nil && *s.PaneAtTop && s.PaneAtBottom != nil && *s.PaneAtBottom},
		{"tty and pid", s.PaneTTY != nil && strings.HasPrefix(*s.PaneTTY, "/dev/") && s.PanePID != nil && atoi(*s.PanePID) > 0},
		{"alive", s.PaneDead != nil && !*s.PaneDead},
		{"normal screen", s.AlternateOn != nil && !*s.AlternateOn},
		{"not in a mode", !s.PaneInMode && s.PaneMode == nil && s.ScrollPosition == nil},
		{"history", s.HistorySize == 7},
		{"command", s.PaneCurrentCommand != nil && *s.PaneCurrentCommand == "sleep"},
		{"path and title", s.PaneCurrentPath != nil && s.Title != nil},
		{"is_caller null outside tmux", s.IsCaller == nil},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: %+v", c.name, s)
		}
	}

	e.ok("snapshot_pane", map[string]any{"pane_id": id, "max_lines": 3}, &s)
	if s.Content != "28\n29\n30" || !s.ContentTruncated || s.ContentTruncatedLines != 20 {
		t.Errorf("truncated snapshot: content %q truncated %v lines %d", s.Content, s.ContentTruncated, s.ContentTruncatedLines)
	}
	e.ok("snapshot_pane", map[string]any{"pane_id": id, "max_lines": nil}, &s)
	if s.Content != seqLines(8, 30) || s.ContentTruncated {
		t.Errorf("uncapped snapshot: %q", s.Content)
	}

	e.tmux.MustRun("copy-mode", "-t", id)
	e.tmux.MustRun("send-keys", "-t", id, "-X", "-N", "3", "scroll-up")
	e.ok("snapshot_pane", map[string]any{"pane_id": id}, &s)
	if !s.PaneInMode || s.PaneMode == nil || *s.PaneMode != "copy-mode" || s.ScrollPosition == nil || *s.ScrollPosition != 3 {
		t.Errorf("copy mode: in_mode %v mode %v scroll %v", s.PaneInMode, s.PaneMode, s.ScrollPosition)
	}

	// With only a session, the first pane of its first window.
	e.ok("snapshot_pane", map[string]any{"session_name": "main"}, &s)
	if s.PaneID != "%0" {
		t.Errorf("session target: pane %s", s.PaneID)
	}
}

func TestSnapshotPaneAlternateScreenAndCaller(t *testing.T) {
	skipOverSSH(t, "the caller's pane is on this machine: a remote pane is never is_caller nor self-protected")
	t.Parallel()
	ts := tmuxtest.New(t)
	e := newEnvOn(t, ts, withCaller(config.Caller{PaneID: "%0", SocketPath: ts.SocketPath()}))
	id := showCommand(t, e, "main", `printf '\033[?1049hALT\n'`, "ALT")
	var s PaneSnapshot
	e.ok("snapshot_pane", map[string]any{"pane_id": id}, &s)
	if s.AlternateOn == nil || !*s.AlternateOn || s.Content != "ALT" {
		t.Errorf("alternate screen: alternate_on %v content %q", s.AlternateOn, s.Content)
	}
	if s.IsCaller == nil || *s.IsCaller {
		t.Errorf("is_caller of another pane: %v", s.IsCaller)
	}
	e.ok("snapshot_pane", map[string]any{"pane_id": "%0"}, &s)
	if s.IsCaller == nil || !*s.IsCaller {
		t.Errorf("is_caller of the caller's pane: %v", s.IsCaller)
	}
}

// TestContentRoundTrips: each content call on a pane id is one tmux round
// trip; a search is one listing plus one chained capture.
func TestContentRoundTrips(t *testing.T) {
	t.Parallel()
	e, n := countingEnv(t)
	e.tmux.MustRun("split-window", "-d", "-t", "main")
	e.tmux.MustRun("new-window", "-d", "-t", "main")
	cases := []struct {
		tool string
		args map[string]any
		want int64
	}{
		{"capture_pane", map[string]any{"pane_id": "%1"}, 1},
		{"capture_pane", map[string]any{"pane_id": "%1", "styles": true}, 1},
		{"snapshot_pane", map[string]any{"pane_id": "%1"}, 1},
		{"snapshot_pane", map[string]any{"pane_id": "%1", "styles": true}, 1},
		{"display_message", map[string]any{"pane_id": "%1", "format_string": "#{pane_id}"}, 1},
		{"search_panes", map[string]any{"pattern": "x"}, 2},
		{"snapshot_pane", map[string]any{"session_name": "main"}, 2},
	}
	for _, c := range cases {
		n.Store(0)
		e.ok(c.tool, c.args, nil)
		if got := n.Load(); got != c.want {
			t.Errorf("%s(%v): %d round trips, want %d", c.tool, c.args, got, c.want)
		}
	}
}

func TestSearchPanesPatterns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hostile := showText(t, e, "main", "C:\\temp\nfoo##bar\nfoo#\na*b\n#{pane_id}\n}\nE?R\nHello World\n")
	plain := showText(t, e, "main", "hello world\nfooXbar\naxb\nEXR\n")
	wrapped := showText(t, e, "main", strings.Repeat("y", 75)+"JOINEDTEXT\n")

	cases := []struct {
		name  string
		args  map[string]any
		want  map[string][]string
		wantN int
	}{
		{"backslash", map[string]any{"pattern": `C:\temp`}, map[string][]string{hostile: {`C:\temp`}}, 1},
		{"double hash", map[string]any{"pattern": "foo##bar"}, map[string][]string{hostile: {"foo##bar"}}, 1},
		{"trailing hash", map[string]any{"pattern": "foo#"}, map[string][]string{hostile: {"foo##bar", "foo#"}}, 1},
		{"star is literal", map[string]any{"pattern": "a*b"}, map[string][]string{hostile: {"a*b"}}, 1},
		{"question mark is literal", map[string]any{"pattern": "E?R"}, map[string][]string{hostile: {"E?R"}}, 1},
		{"format text is literal", map[string]any{"pattern": "#{pane_id}"}, map[string][]string{hostile: {"#{pane_id}"}}, 1},
		{"closing brace", map[string]any{"pattern": "}"}, map[string][]string{hostile: {"#{pane_id}", "}"}}, 1},
		{"case-insensitive by default", map[string]any{"pattern": "HELLO world"}, map[string][]string{hostile: {"Hello World"}, plain: {"hello world"}}, 2},
		{"match_case", map[string]any{"pattern": "Hello", "match_case": true}, map[string][]string{hostile: {"Hello World"}}, 1},
		{"regex", map[string]any{"pattern": `^hel+o\s`, "regex": true}, map[string][]string{hostile: {"Hello World"}, plain: {"hello world"}}, 2},
		{"regex with match_case", map[string]any{"pattern": `^hel+o\s`, "regex": true, "match_case": true}, map[string][]string{plain: {"hello world"}}, 1},
		{"regex alternation", map[string]any{"pattern": `^(axb|a\*b)$`, "regex": true}, map[string][]string{hostile: {"a*b"}, plain: {"axb"}}, 2},
		{"wrapped lines joined", map[string]any{"pattern": "yJOINED"}, map[string][]string{wrapped: {strings.Repeat("y", 75) + "JOINEDTEXT"}}, 1},
		{"no match", map[string]any{"pattern": "zz-no-such-text-zz"}, map[string][]string{}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r SearchPanesResult
			e.ok("search_panes", c.args, &r)
			got := map[string][]string{}
			for _, m := range r.Matches {
				got[m.PaneID] = m.MatchedLines
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("matches %v, want %v", got, c.want)
			}
			if r.TotalPanesMatched != c.wantN || r.Truncated || len(r.TruncatedPanes) != 0 || r.Offset != 0 || r.Limit == nil || *r.Limit != 500 {
				t.Errorf("result fields: %+v", r)
			}
		})
	}

	var r SearchPanesResult
	e.ok("search_panes", map[string]any{"pattern": "a*b"}, &r)
	m := r.Matches[0]
	if m.WindowID == nil || m.WindowName == nil || m.SessionID == nil || *m.SessionName != "main" || m.PaneTTY == nil ||
		m.PaneCurrentCommand == nil || m.PaneCurrentPath == nil || m.PaneLeft == nil || m.PaneAtTop == nil || m.IsCaller != nil {
		t.Errorf("match metadata: %+v", m)
	}
}

func TestSearchPanesErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dead := newEnvOn(t, tmuxtest.NewWith(t))
	cases := []struct {
		name     string
		e        *env
		args     map[string]any
		wantText string
		wantType string
	}{
		{"invalid regex", e, map[string]any{"pattern": "(", "regex": true}, "Invalid regex pattern", "error"},
		{"per-pane cap 0", e, map[string]any{"pattern": "x", "max_matched_lines_per_pane": 0}, "max_matched_lines_per_pane must be a positive", "ExpectedToolError"},
		{"limit 0", e, map[string]any{"pattern": "x", "limit": 0}, "limit must be a positive", "ExpectedToolError"},
		{"limit -1", e, map[string]any{"pattern": "x", "limit": -1}, "limit must be a positive", "ExpectedToolError"},
		{"negative offset", e, map[string]any{"pattern": "x", "offset": -1}, "offset must not be negative", "ExpectedToolError"},
		{"unknown session", e, map[string]any{"pattern": "x", "session_name": "nope"}, "Session not found: nope", "TmuxObjectDoesNotExist"},
		{"unknown session id", e, map[string]any{"pattern": "x", "session_id": "$42"}, "Session not found: $42", "TmuxObjectDoesNotExist"},
		{"malformed session id", e, map[string]any{"pattern": "x", "session_id": "1"}, "malformed tmux id", "TmuxObjectDoesNotExist"},
		{"pattern missing", e, map[string]any{}, "Field required", "ValidationError"},
		{"dead server", dead, map[string]any{"pattern": "x"}, "no tmux server", "TmuxServerNotRunning"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg, meta := c.e.fail("search_panes", c.args)
			if !strings.Contains(msg, c.wantText) {
				t.Errorf("message %q does not contain %q", msg, c.wantText)
			}
			if meta["error_type"] != c.wantType || meta["expected"] != true {
				t.Errorf("error_type %v expected %v, want %s", meta["error_type"], meta["expected"], c.wantType)
			}
		})
	}
}

func TestSearchPanesPagination(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Twelve matching panes, so ids reach %10 and above and a string sort
	// would put %10 before %2.
	var ids []string
	for i := 0; i < 12; i++ {
		ids = append(ids, showText(t, e, "main", fmt.Sprintf("MARK %d\n", i)))
	}
	var all SearchPanesResult
	e.ok("search_panes", map[string]any{"pattern": "mark", "limit": nil}, &all)
	var got []string
	for _, m := range all.Matches {
		got = append(got, m.PaneID)
	}
	if !reflect.DeepEqual(got, ids) || all.TotalPanesMatched != 12 || all.Truncated || all.Limit != nil {
		t.Fatalf("all: ids %v, want %v; %+v", got, ids, all)
	}

	cases := []struct {
		name          string
		offset, limit int
		wantPage      []string
		wantSkipped   []string
		wantTruncated bool
	}{
		{"first page", 0, 5, ids[:5], ids[5:], true},
		{"middle page", 5, 5, ids[5:10], ids[10:], true},
		{"last page", 10, 5, ids[10:], []string{}, false},
		{"exact fit", 0, 12, ids, []string{}, false},
		{"offset past the end", 20, 5, []string{}, []string{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r SearchPanesResult
			e.ok("search_panes", map[string]any{"pattern": "MARK", "offset": c.offset, "limit": c.limit}, &r)
			page := []string{}
			for _, m := range r.Matches {
				page = append(page, m.PaneID)
			}
			if !reflect.DeepEqual(page, c.wantPage) || !reflect.DeepEqual(r.TruncatedPanes, c.wantSkipped) {
				t.Errorf("page %v skipped %v, want %v and %v", page, r.TruncatedPanes, c.wantPage, c.wantSkipped)
			}
			if r.Truncated != c.wantTruncated || r.TotalPanesMatched != 12 || r.Offset != c.offset || r.Limit == nil || *r.Limit != c.limit {
				t.Errorf("fields: %+v", r)
			}
		})
	}
}

func TestSearchPanesLinesAndRanges(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var lines []string
	for i := 1; i <= 20; i++ {
		lines = append(lines, fmt.Sprintf("hit %d", i))
	}
	many := showText(t, e, "main", strings.Join(lines, "\n")+"\n")
	seq := showCommand(t, e, "main", "seq 1 100", "\n100")

	cases := []struct {
		name          string
		args          map[string]any
		want          map[string][]string
		wantTruncated bool
	}{
		{"under the per-pane cap", map[string]any{"pattern": "hit"}, map[string][]string{many: lines}, false},
		{"per-pane cap keeps the last lines", map[string]any{"pattern": "hit", "max_matched_lines_per_pane": 3}, map[string][]string{many: lines[17:]}, true},
		{"visible screen only by default", map[string]any{"pattern": "^5$", "regex": true}, map[string][]string{}, false},
		{"content range reaches history", map[string]any{"pattern": "^5$", "regex": true, "content_start": -100}, map[string][]string{seq: {"5"}}, false},
		{"content range with end", map[string]any{"pattern": "^[0-9]+$", "regex": true, "content_start": -3, "content_end": -2}, map[string][]string{seq: {"75", "76"}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r SearchPanesResult
			e.ok("search_panes", c.args, &r)
			got := map[string][]string{}
			for _, m := range r.Matches {
				got[m.PaneID] = m.MatchedLines
			}
			if !reflect.DeepEqual(got, c.want) || r.Truncated != c.wantTruncated {
				t.Errorf("matches %v truncated %v, want %v %v", got, r.Truncated, c.want, c.wantTruncated)
			}
		})
	}
}

func TestSearchPanesScopeAndGroupedSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	inMain := showText(t, e, "main", "NEEDLE main\n")
	e.tmux.MustRun("new-session", "-d", "-s", "other", "-x", "80", "-y", "24")
	inOther := showText(t, e, "other", "NEEDLE other\n")
	// grp shares main's windows: list-panes -a lists their panes twice.
	e.tmux.MustRun("new-session", "-d", "-s", "grp", "-t", "main")

	cases := []struct {
		name        string
		args        map[string]any
		wantPanes   []string
		wantSession string
	}{
		{"whole server, grouped panes once", map[string]any{"pattern": "needle"}, []string{inMain, inOther}, ""},
		{"session scope", map[string]any{"pattern": "needle", "session_name": "other"}, []string{inOther}, "other"},
		{"session id scope", map[string]any{"pattern": "needle", "session_id": "$1"}, []string{inOther}, "other"},
		{"grouped session scope", map[string]any{"pattern": "needle", "session_name": "grp"}, []string{inMain}, "grp"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r SearchPanesResult
			e.ok("search_panes", c.args, &r)
			var got []string
			for _, m := range r.Matches {
				got = append(got, m.PaneID)
				if c.wantSession != "" && (m.SessionName == nil || *m.SessionName != c.wantSession) {
					t.Errorf("%s: session %v, want %s", m.PaneID, m.SessionName, c.wantSession)
				}
			}
			if !reflect.DeepEqual(got, c.wantPanes) || r.TotalPanesMatched != len(c.wantPanes) {
				t.Errorf("panes %v (total %d), want %v", got, r.TotalPanesMatched, c.wantPanes)
			}
		})
	}
}

func TestSearchPanesIsCaller(t *testing.T) {
	skipOverSSH(t, "the caller's pane is on this machine: a remote pane is never is_caller nor self-protected")
	t.Parallel()
	ts := tmuxtest.New(t)
	e := newEnvOn(t, ts)
	a := showText(t, e, "main", "CALLER-TEST\n")
	b := showText(t, e, "main", "CALLER-TEST\n")
	ec := newEnvOn(t, ts, withCaller(config.Caller{PaneID: a, SocketPath: ts.SocketPath()}))
	var r SearchPanesResult
	ec.ok("search_panes", map[string]any{"pattern": "caller-test"}, &r)
	got := map[string]bool{}
	for _, m := range r.Matches {
		if m.IsCaller == nil {
			t.Fatalf("%s: is_caller null inside tmux", m.PaneID)
		}
		got[m.PaneID] = *m.IsCaller
	}
	if !reflect.DeepEqual(got, map[string]bool{a: true, b: false}) {
		t.Errorf("is_caller %v", got)
	}
}

// TestCaptureAllSplitsAndSkips: captures are chained in as few round trips
// as the argv limit allows, and a pane that vanished is skipped.
func TestCaptureAllSplitsAndSkips(t *testing.T) {
	t.Parallel()
	e, n := countingEnv(t)
	var rows []tmux.Row
	for i := 0; i < 4; i++ {
		id := e.tmux.MustRun("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "main:")
		rows = append(rows, tmux.Row{"pane_id": id})
	}
	rows = append(rows[:2], append([]tmux.Row{{"pane_id": "%999"}}, rows[2:]...)...)
	c := e.srv.newCall()
	sock := e.tmux.Socket
	one := chainOverhead + len("capture-pane -p -J -t %1 ")
	cases := []struct {
		name      string
		limit     int
		wantTrips int64
	}{
		{"one trip when it fits", maxChainArgv, 2}, // the missing pane costs a second trip
		{"one command per trip", one, 5},
		{"two commands per trip", 2 * one, 3}, // a b | %999 (longer: alone) fails | c d
	}
	for _, tc := range cases {
		n.Store(0)
		got, err := c.captureAll(context.Background(), sock, rows, nil, nil, tc.limit)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(got) != 4 || got["%999"] != nil {
			t.Errorf("%s: captured %d panes", tc.name, len(got))
		}
		if n.Load() != tc.wantTrips {
			t.Errorf("%s: %d round trips, want %d", tc.name, n.Load(), tc.wantTrips)
		}
	}
}

func TestDisplayMessage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tmux.MustRun("new-session", "-d", "-s", "other", "-x", "80", "-y", "24")
	e.tmux.MustRun("set", "-g", "@x", "#{pane_id}")
	// A program sets its pane title to a job (select-pane -T would expand
	// it on the spot).
	marker := filepath.Join(t.TempDir(), "ran")
	titled := showCommand(t, e, "main", `printf '\033]2;#(touch `+marker+`)\033\\'; echo TITLED`, "TITLED")

	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"pane and session", map[string]any{"pane_id": "%0", "format_string": "#{pane_id} #{session_name}"}, "%0 main"},
		{"session target", map[string]any{"session_name": "other", "format_string": "#{pane_id} #{session_name}"}, "%1 other"},
		{"no target", map[string]any{"format_string": "#{session_name}"}, "main"},
		{"leading dash is not a flag", map[string]any{"pane_id": "%0", "format_string": "-p #{pane_id}"}, "-p %0"},
		{"trailing semicolon", map[string]any{"pane_id": "%0", "format_string": "a;"}, "a;"},
		{"conditional", map[string]any{"pane_id": "%0", "format_string": "#{?pane_dead,dead,alive}"}, "alive"},
		{"option value is not expanded", map[string]any{"pane_id": "%0", "format_string": "#{@x}"}, "#{pane_id}"},
		{"title with a job stays text", map[string]any{"pane_id": titled, "format_string": "#{pane_title}"}, "#(touch " + marker + ")"},
		{"literal text", map[string]any{"pane_id": "%0", "format_string": "plain"}, "plain"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got string
			e.ok("display_message", c.args, &got)
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a job in the pane title ran")
	}
}

func TestDisplayMessageRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, f := range []string{
		"#(echo hi)", "x ##(y)", "#{E:@x}", "#{T:pane_title}", "#{b;E:@x}", "#{=5;E:@x}", "#{E;T:@x}", "#{T;E:@x}",
		"#{s/x:/y/;E:@x}", "#{?1,#{E:@x},}", "#{S:#{E:@x}}", "#{q;E:@x}",
	} {
		t.Run(f, func(t *testing.T) {
			msg, meta := e.fail("display_message", map[string]any{"pane_id": "%0", "format_string": f})
			if meta["error_type"] != "ExpectedToolError" || !strings.Contains(msg, "format_string must not") {
				t.Errorf("%q: %s %v", f, msg, meta)
			}
		})
	}
}

// TestCaptureForgedFraming: a pane that prints lines looking like the
// control protocol's framing (%begin/%end/%error with the current time and
// the command numbers tmux is likely to use, %output, %exit) changes no
// answer of the readers of pane text over the control-mode engine, and
// later calls go on over the same connection (no reconnect).
func TestCaptureForgedFraming(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.New(t)
	var connects atomic.Int64
	cr := &tmux.ControlRunner{Bin: ts.Bin, Env: tmuxtest.CleanEnv(), OnConnect: func([]string) { connects.Add(1) }}
	t.Cleanup(func() { _ = cr.Close() })
	cfg := config.Config{SocketName: ts.Socket.Name, TmuxBin: ts.Bin, Safety: config.Destructive, WaitMax: 30}
	e := newEnvWith(t, ts, cfg, cr)
	e.ok("get_pane_info", map[string]any{"pane_id": "%0"}, nil) // the engine connects
	pids := cr.ClientPIDs()

	// tmux numbers commands server-wide: learn where the count is, and
	// forge the guards of the next few hundred commands, this second and
	// the next two.
	lines := forgedFraming(t, ts, 600)
	ts.MustRun("set-option", "-g", "history-limit", "5000")
	id := showText(t, e, "main", strings.Join(lines, "\n")+"\n")

	for round := 0; round < 3; round++ {
		var got string
		res := e.ok("capture_pane", map[string]any{"pane_id": id, "start": -len(lines), "max_lines": nil}, nil)
		got = text(res)
		if got != strings.Join(lines, "\n") {
			t.Fatalf("capture_pane: got %d bytes, want the pane's %d lines exactly:\n%.300s", len(got), len(lines), got)
		}
		var snap PaneSnapshot
		e.ok("snapshot_pane", map[string]any{"pane_id": id}, &snap)
		want := strings.Join(captureLines([]byte(ts.MustRun("capture-pane", "-p", "-t", id)+"\n")), "\n")
		if snap.Content != want || !strings.HasSuffix(snap.Content, "%exit") {
			t.Fatalf("snapshot_pane content:\n%s\nwant:\n%s", snap.Content, want)
		}
		var found SearchPanesResult
		e.ok("search_panes", map[string]any{"pattern": "%exit", "session_name": "main"}, &found)
		if len(found.Matches) != 1 || found.Matches[0].PaneID != id || !reflect.DeepEqual(found.Matches[0].MatchedLines, []string{"%exit", "%exit"}) {
			t.Fatalf("search_panes: %+v", found.Matches)
		}
	}
	e.ok("get_pane_info", map[string]any{"pane_id": id}, nil)
	if n := connects.Load(); n != 1 {
		t.Errorf("%d control connections, want 1 (the forged lines broke the connection)", n)
	}
	if got := cr.ClientPIDs(); !reflect.DeepEqual(got, pids) {
		t.Errorf("control client pids %v, were %v", got, pids)
	}
}

// controlCommandNumber returns the number tmux gave the last command of a
// control client of the test's own: the commands after it get the next
// numbers.
func controlCommandNumber(t *testing.T, ts *tmuxtest.Server) int {
	t.Helper()
	args := append(append([]string{}, ts.Socket.Args()...), "-C", "attach-session", "-f", "no-output", "-t", "main")
	cmd := exec.Command(ts.Bin, args...)
	cmd.Env = tmuxtest.CleanEnv()
	cmd.Stdin = strings.NewReader("display-message -p x\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	n := -1
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) == 4 && f[0] == "%begin" {
			n, _ = strconv.Atoi(f[2])
		}
	}
	if n < 0 {
		t.Fatalf("no %%begin in %q", out)
	}
	return n
}

// search_panes lists the panes by id alone and reads the fields of a match
// (paths, names, geometry: a format lookup each per pane in tmux) only for
// the panes on the page it returns, after capturing them.
func TestSearchPanesReadsFieldsOfMatchesOnly(t *testing.T) {
	ts := tmuxtest.New(t)
	for i := 0; i < 3; i++ {
		ts.MustRun("split-window", "-d", "-t", "main:0")
		ts.MustRun("select-layout", "-t", "main:0", "tiled")
	}
	log := &cmdLog{r: testRunner(t, ts)}
	e := newEnvWith(t, ts, configT{SocketName: ts.Socket.Name, TmuxBin: ts.Bin}, log)
	needle := showText(t, e, "main", "NEEDLE here\n")

	var r SearchPanesResult
	e.ok("search_panes", map[string]any{"pattern": "needle"}, &r)
	if len(r.Matches) != 1 || r.Matches[0].PaneID != needle || r.Matches[0].PaneCurrentPath == nil ||
		r.Matches[0].SessionName == nil || *r.Matches[0].SessionName != "main" || r.Matches[0].PaneRight == nil {
		t.Fatalf("%+v", r)
	}
	for _, c := range log.cmds {
		f := strings.Join(c, " ")
		if c[0] == "list-panes" && strings.Contains(f, "#{pane_current_path}") && !strings.Contains(f, "-f #{m/r:^("+needle+")$,#{pane_id}}") {
			t.Errorf("the fields of a match are read for every pane: %q", f)
		}
	}
}

// inFlight is a Runner that records how many calls it had at once; each
// call lingers a little so calls that could overlap do.
type inFlight struct {
	r        tmux.Runner
	now, max atomic.Int32
}

func (f *inFlight) Run(ctx context.Context, sock tmux.Socket, cmds ...tmux.Command) ([][]byte, error) {
	n := f.now.Add(1)
	defer f.now.Add(-1)
	for m := f.max.Load(); n > m && !f.max.CompareAndSwap(m, n); m = f.max.Load() {
	}
	time.Sleep(20 * time.Millisecond)
	return f.r.Run(ctx, sock, cmds...)
}

// A search over more panes than one round trip holds has its capture
// round trips in flight at once (a tmux process each), not one by one.
func TestCaptureAllRunsChunksAtOnce(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.New(t)
	var rows []tmux.Row
	for i := 0; i < 6; i++ {
		rows = append(rows, tmux.Row{"pane_id": ts.MustRun("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "main:")})
	}
	f := &inFlight{r: ts.Runner()}
	e := newEnvWith(t, ts, configT{SocketName: ts.Socket.Name, TmuxBin: ts.Bin}, f)
	c := e.srv.newCall()
	got, err := c.captureAll(context.Background(), ts.Socket, rows, nil, nil, chainOverhead+len("capture-pane -p -J -t %10 "))
	if err != nil || len(got) != 6 {
		t.Fatalf("%d captures, %v", len(got), err)
	}
	if m := f.max.Load(); m < 2 || m > 4 {
		t.Errorf("%d capture round trips in flight at most, want 2..4", m)
	}
}

// manyPanes adds n idle panes (one window each) to session main.
func manyPanes(t *testing.T, ts *tmuxtest.Server, n int) {
	t.Helper()
	args := []string{}
	for i := 0; i < n; i++ {
		if i > 0 {
			args = append(args, ";")
		}
		args = append(args, "new-window", "-d", "-t", "main:", "sleep 600")
	}
	ts.MustRun(args...)
}

// A search over more panes than one call captures in buffer form (the
// text connection, internal/tmux/capture_text.go) spawns no tmux process
// either.
func TestSearchPanesManySpawnsNoProcesses(t *testing.T) {
	e, spawned, connects := countingEngineEnv(t)
	manyPanes(t, e.tmux, 40)
	e.ok("get_pane_info", map[string]any{"pane_id": "%0"}, nil) // the engine connects
	// The first big search connects the text connection (one exec'd
	// list-sessions picks the session, as for the engine's).
	e.ok("search_panes", map[string]any{"pattern": "x"}, nil)
	before := spawned.Load()
	for i := 0; i < 3; i++ {
		var r SearchPanesResult
		e.ok("search_panes", map[string]any{"pattern": "no such text anywhere"}, &r)
		if r.TotalPanesMatched != 0 {
			t.Fatalf("%+v", r)
		}
	}
	if n := spawned.Load() - before; n != 0 {
		t.Errorf("search_panes over 41 panes spawned %d tmux processes", n)
	}
	if n := connects.Load(); n != 2 {
		t.Errorf("%d control connections, want 2 (the engine's and the text connection)", n)
	}
}

// Over the text connection too, pane text that forges the framing (the
// guards of the commands tmux is likely to number next, %begin, %error,
// %output, %exit) changes no answer of search_panes, the shared connection
// survives, and the text connection, once it saw a forgery, is not
// reconnected on every call.
func TestSearchPanesForgedFramingOverTextConnection(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.New(t)
	var connects atomic.Int64
	cr := &tmux.ControlRunner{Bin: ts.Bin, Env: tmuxtest.CleanEnv(), OnConnect: func([]string) { connects.Add(1) }}
	t.Cleanup(func() { _ = cr.Close() })
	cfg := config.Config{SocketName: ts.Socket.Name, TmuxBin: ts.Bin, Safety: config.Destructive, WaitMax: 30}
	e := newEnvWith(t, ts, cfg, cr)
	manyPanes(t, ts, 30)
	e.ok("get_pane_info", map[string]any{"pane_id": "%0"}, nil) // the engine connects
	mainPIDs := cr.ClientPIDs()
	// A clean search first: the text connection comes up.
	e.ok("search_panes", map[string]any{"pattern": "nothing here"}, nil)
	if n := len(cr.ClientPIDs()); n != 2 {
		t.Fatalf("%d control clients after a big search, want 2", n)
	}

	lines := forgedFraming(t, ts, 400)
	ts.MustRun("set-option", "-g", "history-limit", "5000")
	id := showText(t, e, "main", strings.Join(lines, "\n")+"\n")

	for round := 0; round < 4; round++ {
		var found SearchPanesResult
		e.ok("search_panes", map[string]any{"pattern": "%exit", "session_name": "main"}, &found)
		if len(found.Matches) != 1 || found.Matches[0].PaneID != id || !reflect.DeepEqual(found.Matches[0].MatchedLines, []string{"%exit", "%exit"}) {
			t.Fatalf("round %d: search_panes: %+v", round, found.Matches)
		}
		// The whole history: every forged guard is in the text.
		e.ok("search_panes", map[string]any{"pattern": "%end ", "session_name": "main", "content_start": -len(lines), "max_matched_lines_per_pane": 5000}, &found)
		if len(found.Matches) != 1 || len(found.Matches[0].MatchedLines) != 3*400+1 {
			t.Fatalf("round %d: search_panes over the history: %+v", round, found.Matches)
		}
	}
	e.ok("get_pane_info", map[string]any{"pane_id": id}, nil)
	if n := connects.Load(); n > 2 {
		t.Errorf("%d control connections, want at most 2 (the text connection reconnected after a forgery)", n)
	}
	if got := cr.ClientPIDs(); len(got) == 0 || got[0] != mainPIDs[0] {
		t.Errorf("the shared connection's client changed: %v, was %v", got, mainPIDs)
	}
	t.Logf("control clients at the end: %v (the text connection is gone when a forged guard hit)", cr.ClientPIDs())
}
