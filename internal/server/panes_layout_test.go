package server

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

func TestLayoutPaneCells(t *testing.T) {
	for _, tc := range []struct {
		name, layout string
		want         string // each cell "%ID X,Y WxH t b", "|" between; "bad" when not readable
	}{
		{"one pane", "b25d,80x24,0,0,1", "%1 0,0 80x24 1 1"},
		{"side by side", "c1a8,80x24,0,0{40x24,0,0,1,39x24,41,0,2}", "%1 0,0 40x24 1 1|%2 41,0 39x24 1 1"},
		{"one above the other", "0000,80x24,0,0[80x12,0,0,3,80x11,0,13,4]", "%3 0,0 80x12 1 0|%4 0,13 80x11 0 1"},
		{"nested", "0000,80x24,0,0[80x12,0,0{40x12,0,0,1,39x12,41,0[39x6,41,0,2,39x5,41,7,5]},80x11,0,13,4]",
			"%1 0,0 40x12 1 0|%2 41,0 39x6 1 0|%5 41,7 39x5 0 0|%4 0,13 80x11 0 1"},
		{"three rows, middle split", "0000,80x30,0,0[80x9,0,0,1,80x10,0,10{40x10,0,10,2,39x10,41,10,3},80x9,0,21,4]",
			"%1 0,0 80x9 1 0|%2 0,10 40x10 0 0|%3 41,10 39x10 0 0|%4 0,21 80x9 0 1"},
		{"large pane ids", "0000,80x24,0,0{40x24,0,0,123456,39x24,41,0,7}", "%123456 0,0 40x24 1 1|%7 41,0 39x24 1 1"},
		{"empty (too long for tmux)", "", "bad"},
		{"no checksum", "80x24,0,0,1", "bad"},
		{"cell without a pane", "0000,80x24,0,0{40x24,0,0,39x24,41,0,2}", "bad"},
		{"trailing text", "0000,80x24,0,0,1,", "bad"},
		{"unclosed", "0000,80x24,0,0{40x24,0,0,1,39x24,41,0,2", "bad"},
		{"wrong closer", "0000,80x24,0,0{40x24,0,0,1,39x24,41,0,2]", "bad"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cells, ok := layoutPaneCells(tc.layout)
			got := "bad"
			if ok {
				var parts []string
				b := func(v bool) int {
					if v {
						return 1
					}
					return 0
				}
				for _, c := range cells {
					parts = append(parts, fmt.Sprintf("%s %d,%d %dx%d %d %d", c.pane, c.x, c.y, c.w, c.h, b(c.top), b(c.bottom)))
				}
				got = strings.Join(parts, "|")
			}
			if got != tc.want {
				t.Errorf("layoutPaneCells(%q) = %s, want %s", tc.layout, got, tc.want)
			}
		})
	}
}

func TestPaneCellGeometry(t *testing.T) {
	top := paneCell{x: 3, y: 0, w: 10, h: 5, top: true}
	bottom := paneCell{x: 3, y: 6, w: 10, h: 5, bottom: true}
	both := paneCell{x: 0, y: 0, w: 10, h: 1, top: true, bottom: true}
	for _, tc := range []struct {
		name   string
		c      paneCell
		status string
		want   string
	}{
		{"top cell, status off", top, "off", "3 0 10 5 true"},
		{"top cell, status top", top, "top", "3 1 10 4 true"},
		{"top cell, status bottom", top, "bottom", "3 0 10 5 true"},
		{"bottom cell, status top", bottom, "top", "3 6 10 5 true"},
		{"bottom cell, status bottom", bottom, "bottom", "3 6 10 4 true"},
		{"one line, status top", both, "top", "0 1 10 0 true"},
		{"no lines, status bottom", paneCell{h: 0, bottom: true}, "bottom", "0 0 0 -1 false"},
	} {
		l, tp, w, h, ok := tc.c.geometry(tc.status)
		if got := fmt.Sprint(l, tp, w, h, ok); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestLayoutPanesGroups: rows are matched to window rows in order, each
// group exactly its layout's panes; anything else is refused.
func TestLayoutPanesGroups(t *testing.T) {
	win := func(id, sess, layout string) tmux.Row {
		return tmux.Row{"window_id": id, "session_id": sess, "window_layout": layout, "pane-border-status": "off", "window_zoomed_flag": "0", "pane-base-index": "0",
			"window_width": "80", "window_height": "24"}
	}
	zoomedWin := func(id, sess, layout string) tmux.Row {
		w := win(id, sess, layout)
		w["window_zoomed_flag"] = "1"
		return w
	}
	pane := func(id string) tmux.Row { return tmux.Row{"pane_id": id} }
	two := "0000,80x24,0,0{40x24,0,0,1,39x24,41,0,2}"
	one := "0000,80x24,0,0,3"
	for _, tc := range []struct {
		name string
		rows []tmux.Row
		wins []tmux.Row
		want string // "window session index left,top widthxheight" per row ("zoomed" for geometry left to ask), or "refused"
	}{
		{"in order", []tmux.Row{pane("%1"), pane("%2"), pane("%3")}, []tmux.Row{win("@1", "$0", two), win("@2", "$0", one)},
			"@1 $0 0 0,0 40x24|@1 $0 1 41,0 39x24|@2 $0 0 0,0 80x24"},
		{"panes in another order than the layout", []tmux.Row{pane("%2"), pane("%1"), pane("%3")}, []tmux.Row{win("@1", "$0", two), win("@2", "$0", one)},
			"@1 $0 0 41,0 39x24|@1 $0 1 0,0 40x24|@2 $0 0 0,0 80x24"},
		{"a window linked twice", []tmux.Row{pane("%3"), pane("%3")}, []tmux.Row{win("@2", "$0", one), win("@2", "$1", one)},
			"@2 $0 0 0,0 80x24|@2 $1 0 0,0 80x24"},
		{"a zoomed window", []tmux.Row{pane("%1"), pane("%2"), pane("%3")}, []tmux.Row{zoomedWin("@1", "$0", two), win("@2", "$0", one)},
			"@1 $0 0 zoomed|@1 $0 1 zoomed|@2 $0 0 0,0 80x24"},
		{"a pane the layout lacks", []tmux.Row{pane("%1"), pane("%9"), pane("%3")}, []tmux.Row{win("@1", "$0", two), win("@2", "$0", one)}, "refused"},
		{"a pane twice in a window", []tmux.Row{pane("%1"), pane("%1"), pane("%3")}, []tmux.Row{win("@1", "$0", two), win("@2", "$0", one)}, "refused"},
		{"more rows than cells", []tmux.Row{pane("%1"), pane("%2"), pane("%3"), pane("%4")}, []tmux.Row{win("@1", "$0", two), win("@2", "$0", one)}, "refused"},
		{"fewer rows than cells", []tmux.Row{pane("%1"), pane("%2")}, []tmux.Row{win("@1", "$0", two), win("@2", "$0", one)}, "refused"},
		{"a window row without its size", []tmux.Row{pane("%3")}, []tmux.Row{func() tmux.Row { w := win("@2", "$0", one); delete(w, "window_height"); return w }()}, "refused"},
		{"an unreadable layout", []tmux.Row{pane("%1"), pane("%2"), pane("%3")}, []tmux.Row{win("@1", "$0", ""), win("@2", "$0", one)}, "refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := "refused"
			if zoomed, ok := layoutPanes(tc.rows, tc.wins); ok {
				var parts []string
				for _, r := range tc.rows {
					geometry := fmt.Sprintf("%s,%s %sx%s", r["pane_left"], r["pane_top"], r["pane_width"], r["pane_height"])
					if slices.ContainsFunc(zoomed, func(z tmux.Row) bool { return z["pane_id"] == r["pane_id"] }) {
						if _, have := r["pane_left"]; have {
							t.Errorf("zoomed pane %s has a geometry: %s", r["pane_id"], geometry)
						}
						geometry = "zoomed"
					}
					parts = append(parts, fmt.Sprintf("%s %s %s %s", r["window_id"], r["session_id"], r["pane_index"], geometry))
				}
				got = strings.Join(parts, "|")
			}
			if got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// layoutFormat is every pane field list_panes takes from window rows or
// computes from them, for tmux's own answer.
const layoutFormat = "#{pane_id}\x1f#{pane_left}\x1f#{pane_top}\x1f#{pane_width}\x1f#{pane_height}\x1f#{pane_right}\x1f#{pane_bottom}" +
	"\x1f#{pane_at_left}\x1f#{pane_at_right}\x1f#{pane_at_top}\x1f#{pane_at_bottom}\x1f#{window_id}\x1f#{session_id}" +
	"\x1f#{pane_index}\x1f#{pane_active}\x1f#{pane_tty}\x1f#{pane_pid}\x1f#{pane_title}"

// tmuxLayoutRows is tmux's own answer for layoutFormat in a scope
// (list-panes args), by pane id, the first row of a pane listed twice.
func tmuxLayoutRows(t *testing.T, ts *tmuxtest.Server, scope ...string) map[string]string {
	t.Helper()
	out := ts.MustRun(append(append([]string{"list-panes"}, scope...), "-F", layoutFormat)...)
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		id, _, _ := strings.Cut(line, "\x1f")
		if _, seen := m[id]; !seen && id != "" {
			m[id] = line
		}
	}
	return m
}

// layoutRow is a PaneInfo as a line of layoutFormat.
func layoutRow(p PaneInfo) string {
	b := func(v *bool) string {
		if v == nil {
			return "<nil>"
		}
		if *v {
			return "1"
		}
		return "0"
	}
	n := func(v *int) string {
		if v == nil {
			return "<nil>"
		}
		return fmt.Sprint(*v)
	}
	return strings.Join([]string{p.PaneID, n(p.PaneLeft), n(p.PaneTop), str(p.PaneWidth), str(p.PaneHeight), n(p.PaneRight), n(p.PaneBottom),
		b(p.PaneAtLeft), b(p.PaneAtRight), b(p.PaneAtTop), b(p.PaneAtBottom), str(p.WindowID), str(p.SessionID),
		str(p.PaneIndex), str(p.PaneActive), str(p.PaneTTY), str(p.PanePID), str(p.PaneTitle)}, "\x1f")
}

// layoutWindows builds, in sessions main and other, windows of every shape
// whose panes' geometry list_panes reads from layouts: nested splits both
// ways, odd and resized window sizes, pane-border-status top, bottom and
// off per window and globally, zoomed windows (one whose border status
// changed while zoomed, so its other panes keep the geometry they had, one
// split with -Z), panes swapped between windows of different border
// status, a rotated window, a pane broken out and one joined in, a tiled
// window of 12 panes, a custom layout, pane-base-index 3, and a window
// linked into both sessions at three places.
func layoutWindows(t *testing.T, ts *tmuxtest.Server) {
	t.Helper()
	run := ts.MustRun
	run("set-option", "-g", "pane-border-status", "top")
	// main:0 nested splits, odd size, global (top) status.
	run("resize-window", "-t", "main:0", "-x", "97", "-y", "31")
	run("split-window", "-h", "-t", "main:0")
	run("split-window", "-v", "-t", "main:0.1")
	run("split-window", "-h", "-t", "main:0.2")
	run("split-window", "-v", "-t", "main:0.0", "-l", "7")
	// main:1 bottom status, nested the other way.
	run("new-window", "-d", "-t", "main:1")
	run("set-option", "-w", "-t", "main:1", "pane-border-status", "bottom")
	run("split-window", "-v", "-t", "main:1")
	run("split-window", "-h", "-t", "main:1.0")
	run("split-window", "-v", "-t", "main:1.1")
	run("resize-window", "-t", "main:1", "-x", "120", "-y", "41")
	// main:2 status off, tiled 12 panes, base index 3.
	run("new-window", "-d", "-t", "main:2")
	run("set-option", "-w", "-t", "main:2", "pane-border-status", "off")
	run("set-option", "-w", "-t", "main:2", "pane-base-index", "3")
	run("resize-window", "-t", "main:2", "-x", "151", "-y", "53")
	for range 11 {
		run("split-window", "-d", "-t", "main:2")
		run("select-layout", "-t", "main:2", "tiled")
	}
	// main:3 zoomed, status top.
	run("new-window", "-d", "-t", "main:3")
	run("split-window", "-h", "-t", "main:3")
	run("split-window", "-v", "-t", "main:3.1")
	run("resize-pane", "-Z", "-t", "main:3.1")
	// main:4 zoomed, then its status changed: the hidden panes keep theirs.
	run("new-window", "-d", "-t", "main:4")
	run("split-window", "-v", "-t", "main:4")
	run("split-window", "-h", "-t", "main:4.0")
	run("resize-pane", "-Z", "-t", "main:4.2")
	run("set-option", "-w", "-t", "main:4", "pane-border-status", "bottom")
	// main:5 split with -Z -d: the new pane never had its cell applied.
	run("new-window", "-d", "-t", "main:5")
	run("split-window", "-Z", "-d", "-h", "-t", "main:5")
	// main:6 a custom layout, status bottom; then rotated.
	run("new-window", "-d", "-t", "main:6")
	run("split-window", "-h", "-t", "main:6")
	run("split-window", "-v", "-t", "main:6.0")
	run("resize-window", "-t", "main:6", "-x", "90", "-y", "30")
	run("set-option", "-w", "-t", "main:6", "pane-border-status", "bottom")
	run("select-layout", "-t", "main:6", "main-vertical")
	run("rotate-window", "-t", "main:6")
	// Panes swapped between main:0 (top) and main:6 (bottom).
	run("swap-pane", "-d", "-s", "main:0.1", "-t", "main:6.2")
	// A pane broken out of main:1 into a window of its own, and one of
	// main:2 joined into main:6.
	run("break-pane", "-d", "-s", "main:1.3", "-t", "main:7")
	run("join-pane", "-d", "-h", "-s", "main:2.5", "-t", "main:6.0")
	// other: its own window with status off globally overridden, and
	// main:1 linked in twice (main:1 is then listed three times).
	run("set-option", "-w", "-t", "other:0", "pane-border-status", "off")
	run("split-window", "-h", "-t", "other:0")
	run("link-window", "-d", "-s", "main:1", "-t", "other:5")
	run("link-window", "-d", "-s", "main:1", "-t", "other:6")
}

// checkLayoutRows calls list_panes in scope between two of tmux's own
// answers and returns the panes whose row (layoutFormat) equals neither.
func checkLayoutRows(t *testing.T, e *env, args map[string]any, tmuxScope ...string) (bad []string, n int) {
	t.Helper()
	before := tmuxLayoutRows(t, e.tmux, tmuxScope...)
	var got []PaneInfo
	e.list("list_panes", args, &got)
	after := tmuxLayoutRows(t, e.tmux, tmuxScope...)
	for _, p := range got {
		row := layoutRow(p)
		if row != before[p.PaneID] && row != after[p.PaneID] {
			bad = append(bad, fmt.Sprintf("%v: list_panes says %q, tmux said %q before and %q after", args, row, before[p.PaneID], after[p.PaneID]))
		}
	}
	if len(got) != len(before) && len(got) != len(after) {
		bad = append(bad, fmt.Sprintf("%v: %d panes, tmux listed %d before and %d after", args, len(got), len(before), len(after)))
	}
	return bad, len(got)
}

// TestListPanesLayoutMatchesTmux is the differential test of the pane
// fields list_panes takes from window rows (panes_layout.go): over windows
// of every shape (layoutWindows), for the whole server and for sessions,
// every pane's row is tmux's own, taken just before or just after the
// call, and no listing had to ask tmux per pane. Then windows change while
// calls run (resized, zoomed and unzoomed, border status cycled, layouts
// changed, panes split and killed): each call at most one change of which
// overlapped is checked the same way.
func TestListPanesLayoutMatchesTmux(t *testing.T) {
	skipOverSSH(t, "the fast listing is for local servers")
	ts := tmuxtest.NewWith(t, "main", "other")
	layoutWindows(t, ts)
	e := newEnvOn(t, ts)
	mainID := strings.TrimSpace(ts.MustRun("display-message", "-p", "-t", "main", "#{session_id}"))
	scopes := []struct {
		args map[string]any
		tmux []string
	}{
		{map[string]any{}, []string{"-a"}},
		{map[string]any{"session_name": "main"}, []string{"-s", "-t", "main"}},
		{map[string]any{"session_id": mainID}, []string{"-s", "-t", mainID}},
		{map[string]any{"session_name": "other"}, []string{"-s", "-t", "other"}},
	}
	for _, s := range scopes {
		bad, n := checkLayoutRows(t, e, s.args, s.tmux...)
		for _, b := range bad {
			t.Error(b)
		}
		if n < 4 {
			t.Errorf("%v: %d panes", s.args, n)
		}
	}
	if n := e.srv.layoutAsked.Load(); n != 0 {
		t.Errorf("%d listings asked tmux for the layout fields, want none", n)
	}

	// Windows changing while calls run, one change every 30 ms.
	var started, done atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	changes := [][]string{
		{"resize-window", "-t", "main:0", "-x", "101", "-y", "29"},
		{"resize-pane", "-Z", "-t", "main:1.0"},
		{"set-option", "-w", "-t", "main:2", "pane-border-status", "top"},
		{"select-layout", "-t", "main:6", "even-vertical"},
		{"split-window", "-d", "-t", "main:7"},
		{"resize-window", "-t", "main:0", "-x", "97", "-y", "31"},
		{"resize-pane", "-Z", "-t", "main:1.0"},
		{"set-option", "-w", "-t", "main:2", "pane-border-status", "bottom"},
		{"select-layout", "-t", "main:6", "main-horizontal"},
		{"kill-pane", "-t", "main:7.1"},
		{"set-option", "-w", "-t", "main:2", "pane-border-status", "off"},
		{"resize-pane", "-Z", "-t", "main:3"},
		{"set-option", "-g", "pane-border-status", "bottom"},
		{"resize-pane", "-Z", "-t", "main:3"},
		{"set-option", "-g", "pane-border-status", "top"},
	}
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(30 * time.Millisecond):
			}
			started.Add(1)
			if _, err := ts.Run(changes[i%len(changes)]...); err != nil {
				t.Error(err)
			}
			done.Add(1)
		}
	})
	conclusive, during := 0, 0
	for i := 0; i < 120; i++ {
		s := scopes[i%2]
		d0 := done.Load()
		bad, _ := checkLayoutRows(t, e, s.args, s.tmux...)
		switch started.Load() - d0 {
		case 0:
		case 1:
			during++
		default:
			continue // two changes or more may have come between
		}
		conclusive++
		for _, b := range bad {
			t.Error(b)
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d of 120 calls while windows changed were conclusive, %d of them with a change between tmux's answers; %d changes made", conclusive, during, done.Load())
	if conclusive < 40 {
		t.Errorf("only %d of 120 calls had at most one change near them", conclusive)
	}
	// A window zoomed or unzoomed between a listing and its question about
	// zoomed windows sends that listing to the fallback: rare.
	if n := e.srv.layoutAsked.Load(); n > 5 {
		t.Errorf("%d of 120 listings asked tmux for the layout fields", n)
	}
}

// TestListPanesLayoutFallback: a listing whose window layouts do not
// account for its panes (here made so: one window's layout dropped, or a
// pane taken out of one), or whose zoomed window was not zoomed any more
// when its panes were asked (here: a window said to be zoomed that is
// not), asks tmux for those fields per pane, with the same answers.
func TestListPanesLayoutFallback(t *testing.T) {
	skipOverSSH(t, "the fast listing is for local servers")
	ts := tmuxtest.NewWith(t, "main", "other")
	layoutWindows(t, ts)
	e := newEnvOn(t, ts)
	for _, tc := range []struct {
		name string
		edit func(wins []tmux.Row)
	}{
		{"a window unzoomed in between", func(wins []tmux.Row) {
			for _, w := range wins {
				if w["window_zoomed_flag"] == "0" {
					w["window_zoomed_flag"] = "1"
					return
				}
			}
		}},
		{"a layout too long for tmux", func(wins []tmux.Row) { wins[len(wins)/2]["window_layout"] = "" }},
		{"a pane missing", func(wins []tmux.Row) {
			for _, w := range wins {
				if cells, ok := layoutPaneCells(w["window_layout"]); ok && len(cells) > 1 {
					// A layout of its first pane alone.
					w["window_layout"] = fmt.Sprintf("0000,%dx%d,0,0,%s", cells[0].w, cells[0].h, cells[0].pane[1:])
					return
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.srv.testWindowRows = tc.edit
			defer func() { e.srv.testWindowRows = nil }()
			asked := e.srv.layoutAsked.Load()
			bad, _ := checkLayoutRows(t, e, map[string]any{}, "-a")
			for _, b := range bad {
				t.Error(b)
			}
			if got := e.srv.layoutAsked.Load() - asked; got != 1 {
				t.Errorf("%d listings asked tmux for the layout fields, want 1", got)
			}
		})
	}
}
