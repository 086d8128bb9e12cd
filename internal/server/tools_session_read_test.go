package server

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// readFixture is a server with sessions main (windows 0 "shell" and 1
// "editor", the latter split in two), work (one window), grp (grouped with
// main, so it shares main's windows) and a_b (created as "a.b").
type readFixture struct {
	*env
	mainID, workID, grpID string
	shellWin, editorWin   string
	workWin               string
}

func newReadFixture(t *testing.T) *readFixture {
	t.Helper()
	e := newEnv(t)
	f := &readFixture{env: e}
	e.tmux.MustRun("rename-window", "-t", "=main:0", "shell")
	f.editorWin = e.tmux.MustRun("new-window", "-d", "-t", "=main:1", "-n", "editor", "-P", "-F", "#{window_id}")
	e.tmux.MustRun("split-window", "-d", "-t", f.editorWin)
	f.workWin = e.tmux.MustRun("new-session", "-d", "-s", "work", "-x", "80", "-y", "24", "-P", "-F", "#{window_id}")
	e.tmux.MustRun("new-session", "-d", "-t", "main", "-s", "grp")
	e.tmux.MustRun("new-session", "-d", "-s", "a.b", "-x", "80", "-y", "24")
	e.tmux.MustRun("rename-window", "-t", "=a_b:0", "ab")
	e.tmux.MustRun("rename-window", "-t", "=work:0", "w")
	f.mainID = e.tmux.MustRun("display-message", "-p", "-t", "=main:", "#{session_id}")
	f.workID = e.tmux.MustRun("display-message", "-p", "-t", "=work:", "#{session_id}")
	f.grpID = e.tmux.MustRun("display-message", "-p", "-t", "=grp:", "#{session_id}")
	f.shellWin = e.tmux.MustRun("display-message", "-p", "-t", "=main:0", "#{window_id}")
	return f
}

// wantError checks an expected failure: its error type and a message part.
func (e *env) wantError(tool string, args map[string]any, typ, part string) {
	e.t.Helper()
	msg, meta := e.fail(tool, args)
	if meta["error_type"] != typ || meta["expected"] != true || !strings.Contains(msg, part) {
		e.t.Errorf("%s(%v): %s %v, want %s containing %q", tool, args, msg, meta, typ, part)
	}
}

func windowKeys(ws []WindowInfo) string {
	var k []string
	for _, w := range ws {
		k = append(k, deref(w.SessionName).(string)+"/"+deref(w.WindowName).(string))
	}
	return strings.Join(k, ",")
}

func TestListWindows(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{nil, "a_b/ab,grp/shell,grp/editor,main/shell,main/editor,work/w"},
		{map[string]any{"session_name": "main"}, "main/shell,main/editor"},
		{map[string]any{"session_name": "grp"}, "grp/shell,grp/editor"},
		{map[string]any{"session_id": f.workID}, "work/w"},
		{map[string]any{"session_id": f.workID, "session_name": "main"}, "work/w"},
		{map[string]any{"filters": map[string]any{"window_name": "editor"}}, "grp/editor,main/editor"},
		{map[string]any{"session_name": "main", "filters": `{"window_panes": "2"}`}, "main/editor"},
		{map[string]any{"filters": map[string]any{"session_name__in": "work,a_b"}}, "a_b/ab,work/w"},
	} {
		var ws []WindowInfo
		f.list("list_windows", tc.args, &ws)
		if windowKeys(ws) != tc.want {
			t.Errorf("list_windows(%v) = %s, want %s", tc.args, windowKeys(ws), tc.want)
		}
	}

	var ws []WindowInfo
	f.list("list_windows", map[string]any{"session_name": "main"}, &ws)
	editor := ws[1]
	want := f.tmux.MustRun("display-message", "-p", "-t", "=main:1", "#{window_index} #{session_id} #{window_panes} #{pane_id} #{window_active} #{window_width}x#{window_height}")
	got := strings.Join([]string{deref(editor.WindowIndex).(string), deref(editor.SessionID).(string), itoa(deref(editor.PaneCount)),
		deref(editor.ActivePaneID).(string), deref(editor.WindowActive).(string), deref(editor.WindowWidth).(string) + "x" + deref(editor.WindowHeight).(string)}, " ")
	if editor.WindowID != f.editorWin || got != want || editor.WindowLayout == nil {
		t.Errorf("editor window = %+v (%s), want %s %s", editor, got, f.editorWin, want)
	}

	f.wantError("list_windows", map[string]any{"session_name": "nosuch"}, "TmuxObjectDoesNotExist", "nosuch")
	f.wantError("list_windows", map[string]any{"session_name": "a.b"}, "TmuxObjectDoesNotExist", "cannot contain")
	f.wantError("list_windows", map[string]any{"session_name": "main:0"}, "TmuxObjectDoesNotExist", "cannot contain")
	f.wantError("list_windows", map[string]any{"session_id": "$999"}, "TmuxObjectDoesNotExist", "$999")
	for _, bad := range []string{"1", "$", "$x", "@1"} {
		f.wantError("list_windows", map[string]any{"session_id": bad}, "TmuxObjectDoesNotExist", "session id")
	}
	f.wantError("list_windows", map[string]any{"filters": map[string]any{"window_name__near": "x"}}, "ExpectedToolError", "invalid filter operator")
	_, meta := f.fail("list_windows", map[string]any{"session_name": "nosuch"})
	if !strings.Contains(meta["suggestion"].(string), "list_sessions") {
		t.Errorf("unknown session hint: %v", meta)
	}
}

func itoa(v any) string {
	if n, ok := v.(int); ok {
		return strconv.Itoa(n)
	}
	return fmt.Sprint(v)
}

func TestGetSessionInfo(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	first := strings.SplitN(f.tmux.MustRun("list-sessions", "-F", "#{session_id}"), "\n", 2)[0]
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"session_name": "main"}, f.mainID},
		{map[string]any{"session_name": "grp"}, f.grpID},
		{map[string]any{"session_id": f.workID}, f.workID},
		{map[string]any{"session_id": f.workID, "session_name": "main"}, f.workID},
		{map[string]any{"session_name": "a_b"}, ""},
		{nil, first},
	} {
		var s SessionInfo
		f.ok("get_session_info", tc.args, &s)
		if tc.want != "" && s.SessionID != tc.want {
			t.Errorf("get_session_info(%v) = %s, want %s", tc.args, s.SessionID, tc.want)
		}
		want := f.tmux.MustRun("display-message", "-p", "-t", s.SessionID, "#{session_name} #{session_windows} #{pane_id} #{session_created}")
		got := strings.Join([]string{deref(s.SessionName).(string), itoa(deref(s.WindowCount)), deref(s.ActivePaneID).(string), deref(s.SessionCreated).(string)}, " ")
		if got != want {
			t.Errorf("get_session_info(%v) = %s, want %s", tc.args, got, want)
		}
	}

	f.wantError("get_session_info", map[string]any{"session_name": "nosuch"}, "TmuxObjectDoesNotExist", "nosuch")
	f.wantError("get_session_info", map[string]any{"session_name": "a.b"}, "TmuxObjectDoesNotExist", "cannot contain")
	f.wantError("get_session_info", map[string]any{"session_name": "ma"}, "TmuxObjectDoesNotExist", "ma") // no prefix match
	f.wantError("get_session_info", map[string]any{"session_id": "$999"}, "TmuxObjectDoesNotExist", "$999")
	for _, bad := range []string{"1", "$", "@1", "$1x"} {
		f.wantError("get_session_info", map[string]any{"session_id": bad}, "TmuxObjectDoesNotExist", "session id")
	}

	dead := newEnvOn(t, tmuxtest.NewWith(t))
	dead.wantError("get_session_info", nil, "TmuxServerNotRunning", "no tmux server")
}

func TestGetWindowInfo(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	firstRow := strings.SplitN(f.tmux.MustRun("list-windows", "-a", "-F", "#{session_id} #{window_id}"), "\n", 2)[0]
	for _, tc := range []struct {
		args        map[string]any
		window      string
		sessions    []string // acceptable session ids
		name, panes string
	}{
		{map[string]any{"window_id": f.editorWin}, f.editorWin, []string{f.mainID, f.grpID}, "editor", "2"},
		{map[string]any{"window_id": f.workWin, "session_name": "main"}, f.workWin, []string{f.workID}, "", "1"},
		{map[string]any{"session_name": "main", "window_index": "1"}, f.editorWin, []string{f.mainID}, "editor", "2"},
		{map[string]any{"session_name": "grp", "window_index": "1"}, f.editorWin, []string{f.grpID}, "editor", "2"},
		{map[string]any{"session_id": f.mainID, "session_name": "work", "window_index": "0"}, f.shellWin, []string{f.mainID}, "shell", "1"},
		{map[string]any{"session_name": "main"}, f.shellWin, []string{f.mainID}, "shell", "1"},
		{map[string]any{"session_name": "work"}, f.workWin, []string{f.workID}, "", "1"},
		{nil, strings.Fields(firstRow)[1], []string{strings.Fields(firstRow)[0]}, "", "1"},
	} {
		var w WindowInfo
		f.ok("get_window_info", tc.args, &w)
		okSession := false
		for _, s := range tc.sessions {
			okSession = okSession || deref(w.SessionID) == s
		}
		if w.WindowID != tc.window || !okSession || (tc.name != "" && deref(w.WindowName) != tc.name) || itoa(deref(w.PaneCount)) != tc.panes {
			t.Errorf("get_window_info(%v) = %+v, want %s in %v", tc.args, w, tc.window, tc.sessions)
		}
		if want := f.tmux.MustRun("display-message", "-p", "-t", w.WindowID, "#{pane_id}"); deref(w.ActivePaneID) != want {
			t.Errorf("get_window_info(%v): active pane %v, want %s", tc.args, deref(w.ActivePaneID), want)
		}
	}

	// window_index without a session: the first session's window there.
	var w WindowInfo
	f.ok("get_window_info", map[string]any{"window_index": "0"}, &w)
	if w.WindowID != strings.Fields(firstRow)[1] {
		t.Errorf("window_index only: %+v, want %s", w, firstRow)
	}

	f.wantError("get_window_info", map[string]any{"window_id": "@999"}, "TmuxObjectDoesNotExist", "@999")
	for _, bad := range []string{"@x", "1", "@", "%1", "$1"} {
		f.wantError("get_window_info", map[string]any{"window_id": bad}, "TmuxObjectDoesNotExist", "window id")
	}
	f.wantError("get_window_info", map[string]any{"session_name": "main", "window_index": "7"}, "TmuxObjectDoesNotExist", "index 7")
	f.wantError("get_window_info", map[string]any{"session_name": "main", "window_index": "x"}, "TmuxObjectDoesNotExist", "window_index")
	f.wantError("get_window_info", map[string]any{"session_name": "main", "window_index": "-1"}, "TmuxObjectDoesNotExist", "window_index")
	f.wantError("get_window_info", map[string]any{"session_name": "nosuch"}, "TmuxObjectDoesNotExist", "nosuch")
	f.wantError("get_window_info", map[string]any{"session_name": "main.1"}, "TmuxObjectDoesNotExist", "cannot contain")
	f.wantError("get_window_info", map[string]any{"session_name": "main:1"}, "TmuxObjectDoesNotExist", "cannot contain")
	f.wantError("get_window_info", map[string]any{"session_id": "$"}, "TmuxObjectDoesNotExist", "session id")
	f.wantError("get_window_info", map[string]any{"session_id": "$999"}, "TmuxObjectDoesNotExist", "$999")
	_, meta := f.fail("get_window_info", map[string]any{"window_id": "@999"})
	if !strings.Contains(meta["suggestion"].(string), "list_windows") {
		t.Errorf("unknown window hint: %v", meta)
	}

	dead := newEnvOn(t, tmuxtest.NewWith(t))
	dead.wantError("get_window_info", nil, "TmuxServerNotRunning", "no tmux server")
	dead.wantError("list_windows", nil, "TmuxServerNotRunning", "no tmux server")
}

func TestFindPaneByPosition(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	tm := f.tmux
	// Window "grid" in main: a 2x2 grid. Window "tee" in work: one pane on
	// top across the width, two below it.
	tl := tm.MustRun("new-window", "-d", "-t", "=main:5", "-n", "grid", "-P", "-F", "#{pane_id}")
	grid := tm.MustRun("display-message", "-p", "-t", tl, "#{window_id}")
	tr := tm.MustRun("split-window", "-d", "-h", "-t", tl, "-P", "-F", "#{pane_id}")
	bl := tm.MustRun("split-window", "-d", "-v", "-t", tl, "-P", "-F", "#{pane_id}")
	br := tm.MustRun("split-window", "-d", "-v", "-t", tr, "-P", "-F", "#{pane_id}")
	top := tm.MustRun("list-panes", "-t", f.workWin, "-F", "#{pane_id}")
	bottomL := tm.MustRun("split-window", "-d", "-v", "-t", top, "-P", "-F", "#{pane_id}")
	bottomR := tm.MustRun("split-window", "-d", "-h", "-t", bottomL, "-P", "-F", "#{pane_id}")
	single := tm.MustRun("list-panes", "-t", f.shellWin, "-F", "#{pane_id}")

	for _, tc := range []struct {
		target  map[string]any
		corners [4]string // top-left, top-right, bottom-left, bottom-right
		session string
	}{
		{map[string]any{"window_id": grid}, [4]string{tl, tr, bl, br}, ""},
		{map[string]any{"session_name": "main", "window_index": "5"}, [4]string{tl, tr, bl, br}, f.mainID},
		{map[string]any{"session_name": "grp", "window_index": "5"}, [4]string{tl, tr, bl, br}, f.grpID},
		{map[string]any{"window_id": f.workWin}, [4]string{top, top, bottomL, bottomR}, f.workID},
		{map[string]any{"session_id": f.workID}, [4]string{top, top, bottomL, bottomR}, f.workID},
		{map[string]any{"session_name": "main"}, [4]string{single, single, single, single}, f.mainID},
	} {
		for i, corner := range []string{"top-left", "top-right", "bottom-left", "bottom-right"} {
			args := map[string]any{"corner": corner}
			for k, v := range tc.target {
				args[k] = v
			}
			var p PaneInfo
			f.ok("find_pane_by_position", args, &p)
			if p.PaneID != tc.corners[i] || (tc.session != "" && deref(p.SessionID) != tc.session) {
				t.Errorf("find_pane_by_position(%v) = %s in %v, want %s in %s", args, p.PaneID, deref(p.SessionID), tc.corners[i], tc.session)
			}
		}
	}

	// A zoomed pane covers the whole window, so it touches every corner as
	// well; the pane really in the corner (ties: the first listed) wins.
	tm.MustRun("resize-pane", "-Z", "-t", br)
	var p PaneInfo
	f.ok("find_pane_by_position", map[string]any{"corner": "top-left", "window_id": grid}, &p)
	if p.PaneID != tl {
		t.Errorf("zoomed window, top-left = %s, want %s", p.PaneID, tl)
	}

	f.wantError("find_pane_by_position", map[string]any{"corner": "top-left", "window_id": "@999"}, "TmuxObjectDoesNotExist", "@999")
	f.wantError("find_pane_by_position", map[string]any{"corner": "top-left", "window_id": "@x"}, "TmuxObjectDoesNotExist", "window id")
	f.wantError("find_pane_by_position", map[string]any{"corner": "top-left", "session_name": "nosuch"}, "TmuxObjectDoesNotExist", "nosuch")
	f.wantError("find_pane_by_position", map[string]any{"corner": "top-left", "session_name": "a.b"}, "TmuxObjectDoesNotExist", "cannot contain")
	f.wantError("find_pane_by_position", map[string]any{"corner": "top-left", "session_id": "1"}, "TmuxObjectDoesNotExist", "session id")
	f.wantError("find_pane_by_position", map[string]any{"corner": "top-left", "session_name": "main", "window_index": "9"}, "TmuxObjectDoesNotExist", "index 9")
	for _, bad := range []map[string]any{{"corner": "middle"}, {}, {"corner": nil}} {
		_, meta := f.fail("find_pane_by_position", bad)
		if meta["expected"] != true {
			t.Errorf("find_pane_by_position(%v): %v", bad, meta)
		}
	}

	dead := newEnvOn(t, tmuxtest.NewWith(t))
	dead.wantError("find_pane_by_position", map[string]any{"corner": "top-left"}, "TmuxServerNotRunning", "no tmux server")
}

// TestCornerPane checks the corner choice when several panes report both
// edges of a corner (the reference took the largest left+top for every
// corner, contract 9.1#12).
func TestCornerPane(t *testing.T) {
	t.Parallel()
	row := func(id string, left, top, right, bottom int, edges string) tmux.Row {
		b := func(c byte) string {
			if strings.IndexByte(edges, c) >= 0 {
				return "1"
			}
			return "0"
		}
		return tmux.Row{"pane_id": id, "pane_left": itoa(left), "pane_top": itoa(top), "pane_right": itoa(right), "pane_bottom": itoa(bottom),
			"pane_at_left": b('l'), "pane_at_top": b('t'), "pane_at_right": b('r'), "pane_at_bottom": b('b')}
	}
	// Synthetic rows where two panes claim each corner's edges; the one
	// further into the corner must win, whatever the order.
	for _, tc := range []struct {
		corner string
		rows   []tmux.Row
		want   string
	}{
		{"top-left", []tmux.Row{row("%2", 0, 1, 3, 5, "lt"), row("%1", 0, 0, 3, 5, "lt")}, "%1"},
		{"top-right", []tmux.Row{row("%1", 0, 0, 8, 5, "tr"), row("%2", 5, 0, 9, 5, "tr"), row("%3", 5, 1, 9, 5, "tr")}, "%2"},
		{"bottom-left", []tmux.Row{row("%1", 1, 5, 3, 9, "lb"), row("%2", 0, 5, 3, 9, "lb"), row("%3", 0, 0, 3, 8, "lb")}, "%2"},
		{"bottom-right", []tmux.Row{row("%1", 5, 5, 9, 9, "rb"), row("%2", 6, 6, 9, 8, "rb")}, "%1"},
		{"bottom-right", []tmux.Row{row("%1", 0, 0, 9, 9, "tl"), row("%2", 6, 6, 9, 8, "t")}, ""},
		{"top-left", []tmux.Row{row("%1", 0, 0, 9, 9, "ltrb"), row("%2", 0, 0, 4, 4, "lt")}, "%1"}, // tie: first listed
	} {
		got := cornerPane(tc.rows, tc.corner)
		if id := got["pane_id"]; id != tc.want {
			t.Errorf("%s: got %q, want %q", tc.corner, id, tc.want)
		}
	}
}
