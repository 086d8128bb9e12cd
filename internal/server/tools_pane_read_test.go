package server

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

func TestGetPaneInfo(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tmux.MustRun("split-window", "-d", "-t", "main")
	e.tmux.MustRun("new-session", "-d", "-s", "other", "-x", "100", "-y", "30")
	ids := strings.Fields(e.tmux.MustRun("list-panes", "-a", "-F", "#{pane_id}"))
	if len(ids) != 3 {
		t.Fatalf("setup: panes %v", ids)
	}
	cases := []struct {
		name   string
		args   map[string]any
		wantID string
	}{
		{"by pane id", map[string]any{"pane_id": ids[1]}, ids[1]},
		{"no target is the first pane of the first session", map[string]any{}, ids[0]},
		{"session name", map[string]any{"session_name": "other"}, ids[2]},
		{"session id", map[string]any{"session_id": "$1"}, ids[2]},
		{"window id", map[string]any{"window_id": "@0"}, ids[0]},
		{"pane id wins over session", map[string]any{"pane_id": ids[1], "session_name": "other"}, ids[1]},
		{"explicit nulls", map[string]any{"pane_id": nil, "session_name": "other"}, ids[2]},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var p PaneInfo
			e.ok("get_pane_info", c.args, &p)
			if p.PaneID != c.wantID {
				t.Errorf("pane %s, want %s", p.PaneID, c.wantID)
			}
			if p.PaneWidth == nil || p.WindowID == nil || p.SessionID == nil || p.PaneAtLeft == nil || p.IsCaller != nil {
				t.Errorf("fields missing or is_caller set outside tmux: %+v", p)
			}
		})
	}
	var p PaneInfo
	e.ok("get_pane_info", map[string]any{"session_name": "other"}, &p)
	if *p.PaneWidth != "100" || *p.PaneHeight != "30" || *p.PaneRight != 99 || *p.PaneBottom != 29 {
		t.Errorf("geometry: %+v", p)
	}
}

func TestGetPaneInfoErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cases := []struct {
		name     string
		args     map[string]any
		wantText string
		wantType string
	}{
		{"unknown pane", map[string]any{"pane_id": "%999"}, "Pane not found: %999", "PaneNotFound"},
		{"malformed pane id", map[string]any{"pane_id": "1"}, "malformed tmux id", "PaneNotFound"},
		{"pane id injection", map[string]any{"pane_id": "%1;kill-server"}, "malformed tmux id", "PaneNotFound"},
		{"unknown session", map[string]any{"session_name": "nope"}, "Session not found: nope", "TmuxObjectDoesNotExist"},
		{"session name with colon", map[string]any{"session_name": "a:b"}, "cannot contain", "TmuxObjectDoesNotExist"},
		{"unknown session id", map[string]any{"session_id": "$42"}, "Session not found: $42", "TmuxObjectDoesNotExist"},
		{"unknown window", map[string]any{"window_id": "@42"}, "Window not found: @42", "TmuxObjectDoesNotExist"},
		{"wrong type", map[string]any{"pane_id": 3}, "Input should be string or null", "ValidationError"},
		{"unknown argument", map[string]any{"pane": "%0"}, "Remove or correct the unrecognized argument(s): pane.", "ValidationError"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg, meta := e.fail("get_pane_info", c.args)
			if !strings.Contains(msg, c.wantText) {
				t.Errorf("message %q does not contain %q", msg, c.wantText)
			}
			if meta["error_type"] != c.wantType {
				t.Errorf("error_type %v, want %s", meta["error_type"], c.wantType)
			}
			if meta["expected"] != true {
				t.Errorf("expected=%v", meta["expected"])
			}
		})
	}
}

func TestValidationErrorsNeverEchoValues(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	secret := "hunter2-SECRET"
	for _, args := range []map[string]any{
		{"pane_id": map[string]any{"x": secret}},
		{"pane_id": []any{secret}},
		{secret: secret},
		{"socket_name": 1, "session_name": []any{secret}},
	} {
		msg, _ := e.fail("get_pane_info", args)
		if strings.Contains(msg, "hunter2") && !strings.Contains(msg, "unrecognized argument(s): "+secret) {
			t.Errorf("error echoes a value: %q", msg)
		}
	}
}

func TestListPanes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tmux.MustRun("split-window", "-d", "-t", "main")
	e.tmux.MustRun("new-window", "-d", "-t", "main:5")
	e.tmux.MustRun("new-session", "-d", "-s", "other")
	cases := []struct {
		name string
		args map[string]any
		want int
	}{
		{"whole server", map[string]any{}, 4},
		{"session", map[string]any{"session_name": "main"}, 3},
		{"window by index", map[string]any{"session_name": "main", "window_index": "5"}, 1},
		{"window by id", map[string]any{"window_id": "@0"}, 2},
		{"filter exact", map[string]any{"filters": map[string]any{"session_name": "other"}}, 1},
		{"filter as JSON string", map[string]any{"filters": `{"window_index__in": "0,5"}`}, 4},
		{"filter icontains", map[string]any{"filters": map[string]any{"session_name__icontains": "MAI"}}, 3},
		{"filter regex", map[string]any{"filters": map[string]any{"pane_index__regex": "^1$"}}, 1},
		{"filter unknown field matches nothing", map[string]any{"filters": map[string]any{"no_such_field": "x"}}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var panes []PaneInfo
			e.list("list_panes", c.args, &panes)
			if len(panes) != c.want {
				t.Errorf("%d panes, want %d: %+v", len(panes), c.want, panes)
			}
		})
	}
	msg, _ := e.fail("list_panes", map[string]any{"filters": map[string]any{"pane_id__like": "x"}})
	if !strings.Contains(msg, "valid operators: contains") {
		t.Errorf("bad operator message: %q", msg)
	}
	msg, _ = e.fail("list_panes", map[string]any{"window_index": "1"})
	if !strings.Contains(msg, "needs session_name") {
		t.Errorf("window_index without session: %q", msg)
	}
}

// Grouped sessions list each pane once per session; pane-id targeting must
// still work (the reference answered "ambiguous", contract 9.1#2).
func TestGroupedSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tmux.MustRun("new-session", "-d", "-t", "main", "-s", "grouped")
	var panes []PaneInfo
	e.list("list_panes", map[string]any{}, &panes)
	if len(panes) != 1 {
		t.Fatalf("grouped panes listed %d times, want once", len(panes))
	}
	var p PaneInfo
	e.ok("get_pane_info", map[string]any{"pane_id": panes[0].PaneID}, &p)
	e.ok("get_pane_info", map[string]any{"session_name": "grouped"}, &p)
}

func TestDeadServer(t *testing.T) {
	t.Parallel()
	e := newEnvOn(t, tmuxtest.NewWith(t))
	msg, meta := e.fail("get_pane_info", map[string]any{"pane_id": "%0"})
	if meta["error_type"] != "TmuxServerNotRunning" || !strings.Contains(msg, "list_servers") {
		t.Errorf("dead server: %q %v", msg, meta)
	}
}

func TestIsCaller(t *testing.T) {
	skipOverSSH(t, "the caller's pane is on this machine: a remote pane is never is_caller nor self-protected")
	t.Parallel()
	ts := tmuxtest.New(t)
	ts.MustRun("split-window", "-d", "-t", "main")
	cases := []struct {
		name   string
		caller config.Caller
		want   []any // is_caller of %0, %1
	}{
		{"outside tmux", config.Caller{}, []any{nil, nil}},
		{"same socket", config.Caller{SocketPath: ts.SocketPath(), PaneID: "%1"}, []any{false, true}},
		{"other socket, same id", config.Caller{SocketPath: "/tmp/tmux-0/some-other-socket", PaneID: "%1"}, []any{false, false}},
		{"TMUX_PANE without TMUX", config.Caller{PaneID: "%1"}, []any{false, false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnvOn(t, ts, withCaller(c.caller))
			var panes []PaneInfo
			e.list("list_panes", map[string]any{}, &panes)
			for i, p := range panes {
				var got any
				if p.IsCaller != nil {
					got = *p.IsCaller
				}
				if got != c.want[i] {
					t.Errorf("%s is_caller=%v, want %v", p.PaneID, got, c.want[i])
				}
			}
		})
	}
}

// cmdLog is a Runner that records every command it passes on.
type cmdLog struct {
	r    tmux.Runner
	mu   sync.Mutex
	cmds []tmux.Command
}

func (l *cmdLog) Run(ctx context.Context, sock tmux.Socket, cmds ...tmux.Command) ([][]byte, error) {
	l.mu.Lock()
	l.cmds = append(l.cmds, cmds...)
	l.mu.Unlock()
	return l.r.Run(ctx, sock, cmds...)
}

// The pane readers ask tmux only for what their result holds (tmux 3.3a
// spends microseconds per field and pane): no window or session names or
// index, and not the edges computed from the others, which still come out
// exactly as tmux reports them.
func TestPaneQueriesAskOnlyForResultFields(t *testing.T) {
	ts := tmuxtest.New(t)
	ts.MustRun("split-window", "-h", "-t", "main:0")
	ts.MustRun("split-window", "-v", "-t", "main:0")
	ts.MustRun("set-option", "-w", "-t", "main:0", "pane-border-status", "top")
	log := &cmdLog{r: testRunner(t, ts)}
	e := newEnvWith(t, ts, configT{SocketName: ts.Socket.Name, TmuxBin: ts.Bin}, log)

	var panes []PaneInfo
	e.list("list_panes", map[string]any{}, &panes)
	var one PaneInfo
	e.ok("get_pane_info", map[string]any{"pane_id": panes[2].PaneID}, &one)
	var snap PaneSnapshot
	e.ok("snapshot_pane", map[string]any{"pane_id": panes[1].PaneID}, &snap)

	for _, c := range log.cmds {
		f := strings.Join(c, " ")
		for _, unused := range []string{"window_name", "session_name", "window_index", "pane_right", "pane_bottom", "pane_at_left"} {
			if strings.Contains(f, "#{"+unused+"}") {
				t.Errorf("%s asks for #{%s}, which no result of these tools holds or needs", c[0], unused)
			}
		}
	}
	want := map[string]string{}
	for _, line := range strings.Split(ts.MustRun("list-panes", "-a", "-F", "#{pane_id} #{pane_right} #{pane_bottom} #{pane_at_left}"), "\n") {
		id, rest, _ := strings.Cut(line, " ")
		want[id] = rest
	}
	edges := func(e PaneEdges) string {
		b := "0"
		if *e.PaneAtLeft {
			b = "1"
		}
		return fmt.Sprintf("%d %d %s", *e.PaneRight, *e.PaneBottom, b)
	}
	if len(panes) != 3 {
		t.Fatalf("%d panes", len(panes))
	}
	for _, p := range panes {
		if got := edges(p.PaneEdges); got != want[p.PaneID] {
			t.Errorf("list_panes %s: right bottom at_left = %s, tmux says %s", p.PaneID, got, want[p.PaneID])
		}
	}
	if got := edges(one.PaneEdges); got != want[one.PaneID] {
		t.Errorf("get_pane_info %s: %s, tmux says %s", one.PaneID, got, want[one.PaneID])
	}
	if got := edges(snap.PaneEdges); got != want[snap.PaneID] {
		t.Errorf("snapshot_pane %s: %s, tmux says %s", snap.PaneID, got, want[snap.PaneID])
	}
}

// A filter on a field the query does not ask for by default adds it, and
// the free-form path stays the last field.
func TestListPanesFilterOnAFieldNotListed(t *testing.T) {
	ts := tmuxtest.New(t)
	ts.MustRun("new-window", "-d", "-t", "main", "-n", "other")
	e := newEnvOn(t, ts)
	var panes []PaneInfo
	e.list("list_panes", map[string]any{"filters": map[string]any{"window_name": "other"}}, &panes)
	if len(panes) != 1 || panes[0].PaneCurrentPath == nil || *panes[0].PaneCurrentPath == "" {
		t.Fatalf("%+v", panes)
	}
	if got := filterFields(paneFields, []filterSpec{{field: "window_name"}}); got[len(got)-1] != "pane_current_path" {
		t.Errorf("fields %v", got)
	}
}
