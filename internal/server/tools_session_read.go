package server

import (
	"context"
	"fmt"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/errarg"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

func init() { toolGroups = append(toolGroups, sessionReadTools) }

// WindowTarget is the reference's window target (WT): window_id wins; else
// the session (session_id, then session_name, else the first session) and
// within it window_index, else its first window.
type WindowTarget struct {
	WindowID    *string `json:"window_id"`
	WindowIndex *string `json:"window_index"`
	SessionName *string `json:"session_name"`
	SessionID   *string `json:"session_id"`
}

type listWindowsArgs struct {
	SessionName *string      `json:"session_name"`
	SessionID   *string      `json:"session_id"`
	Filters     StringMapArg `json:"filters" desc:"Mapping or JSON string of tmux field lookups, e.g. {\"window_name__contains\": \"vim\"}. Ops: exact, contains, startswith, endswith, regex (i-prefix: any case), in, nin."`
	SocketArgs
}

type getSessionInfoArgs struct {
	SessionID   *string `json:"session_id"`
	SessionName *string `json:"session_name"`
	SocketArgs
}

type getWindowInfoArgs struct {
	WindowTarget
	SocketArgs
}

type findPaneByPositionArgs struct {
	Corner string `json:"corner" enum:"top-left,top-right,bottom-left,bottom-right" doc:"Which corner of the window."`
	WindowTarget
	SocketArgs
}

func sessionReadTools() []*Tool {
	return []*Tool{
		define(Tool{
			Name: "list_windows", Title: "List tmux Windows", Toolset: "session", Tier: config.Readonly, Preset: RO, AlwaysLoad: true,
			Description: "List windows with ids, names, layout and active pane. Scope: one session, or the whole server. Use list_panes for their panes.",
		}, func(ctx context.Context, c *Call, a listWindowsArgs) ([]WindowInfo, error) {
			fs, err := parseFilters(a.Filters)
			if err != nil {
				return nil, err
			}
			scope, err := tmux.WindowScope(str(a.SessionID), str(a.SessionName))
			if err != nil {
				return nil, err
			}
			rows, err := c.tmux.Rows(ctx, c.Socket(a.SocketArgs), append(tmux.Command{"list-windows"}, scope...), filterFields(windowFields, fs))
			if err != nil {
				return nil, notFoundAs(err, sessionKind(a.SessionID, a.SessionName), sessionLabel(a.SessionID, a.SessionName))
			}
			out := []WindowInfo{}
			for _, r := range c.scopeRows(rows, "window_id") {
				if matchFilters(r, fs) {
					out = append(out, windowInfo(r))
				}
			}
			return out, nil
		}),
		define(Tool{
			Name: "get_session_info", Title: "Get tmux Session Info", Toolset: "session", Tier: config.Readonly, Preset: RO,
			Description: "Get one session's id, name, window count, clients, creation time and active pane. Target by session_id or session_name; else the first session. list_sessions lists all.",
		}, func(ctx context.Context, c *Call, a getSessionInfoArgs) (SessionInfo, error) {
			id, name := str(a.SessionID), str(a.SessionName)
			if _, err := tmux.SessionTarget(id, name); err != nil {
				return SessionInfo{}, err
			}
			rows, ours, err := c.sessionQuery(ctx, c.Socket(a.SocketArgs), sessionFields, tmux.Command{"list-sessions", "-F", tmux.Format(sessionFields...)})
			if err != nil {
				return SessionInfo{}, err
			}
			for _, r := range rows {
				if id != "" && r["session_id"] == id || id == "" && (name == "" || r["session_name"] == name) {
					return sessionInfos([]tmux.Row{r}, ours)[0], nil
				}
			}
			if id == "" && name == "" {
				return SessionInfo{}, &tmux.NotFoundError{What: "session", Detail: "the server has no sessions"}
			}
			return SessionInfo{}, &tmux.NotFoundError{What: "session", Detail: sessionLabel(a.SessionID, a.SessionName)}
		}),
		define(Tool{
			Name: "get_window_info", Title: "Get tmux Window Info", Toolset: "window", Tier: config.Readonly, Preset: RO,
			Description: "Get one window's name, index, session, size, layout, pane count and active pane. Target by window_id, or window_index in a session; else the first window. list_windows lists all.",
		}, func(ctx context.Context, c *Call, a getWindowInfoArgs) (WindowInfo, error) {
			rows, err := c.windowTargetRows(ctx, c.Socket(a.SocketArgs), a.WindowTarget, "list-windows", windowFields)
			if err != nil {
				return WindowInfo{}, err
			}
			return windowInfo(rows[0]), nil
		}),
		define(Tool{
			Name: "find_pane_by_position", Title: "Find Pane By Position", Toolset: "pane", Tier: config.Readonly, Preset: RO,
			Description: "Find the pane in a corner of a window. Window target as get_window_info. Returns the pane's info; list_panes lists all.",
		}, func(ctx context.Context, c *Call, a findPaneByPositionArgs) (PaneInfo, error) {
			if cornerScores[a.Corner] == nil {
				return PaneInfo{}, expectedf("corner must be one of top-left, top-right, bottom-left, bottom-right")
			}
			rows, err := c.windowTargetRows(ctx, c.Socket(a.SocketArgs), a.WindowTarget, "list-panes", paneFields)
			if err != nil {
				return PaneInfo{}, err
			}
			best := cornerPane(rows, a.Corner)
			if best == nil {
				return PaneInfo{}, expectedf("no pane touches the %s corner of window %s", a.Corner, rows[0]["window_id"])
			}
			return c.paneInfo(best), nil
		}),
	}
}

// cornerPane picks, among one window's panes, the one in the given corner:
// it must touch both of the corner's edges, and of several such panes the
// one reaching furthest into the corner wins (the first listed on a tie).
// nil when no pane touches both edges.
func cornerPane(rows []tmux.Row, corner string) tmux.Row {
	score := cornerScores[corner]
	if score == nil {
		return nil
	}
	best, bestScore := tmux.Row(nil), 0
	for _, r := range tmux.DedupeBy(rows, "pane_id") {
		deriveEdges(r)
		s, in := score(r)
		if in && (best == nil || s > bestScore) {
			best, bestScore = r, s
		}
	}
	return best
}

// cornerScores say whether a pane touches a corner's two edges and how far
// into that corner it reaches (larger is further): the pane that really sits
// in the corner wins even when several panes report both edges (not the
// reference's largest left+top for every corner, contract 9.1#12).
var cornerScores = map[string]func(tmux.Row) (int, bool){
	"top-left": func(r tmux.Row) (int, bool) {
		return -(atoi(r["pane_left"]) + atoi(r["pane_top"])), r["pane_at_top"] == "1" && r["pane_at_left"] == "1"
	},
	"top-right": func(r tmux.Row) (int, bool) {
		return atoi(r["pane_right"]) - atoi(r["pane_top"]), r["pane_at_top"] == "1" && r["pane_at_right"] == "1"
	},
	"bottom-left": func(r tmux.Row) (int, bool) {
		return atoi(r["pane_bottom"]) - atoi(r["pane_left"]), r["pane_at_bottom"] == "1" && r["pane_at_left"] == "1"
	},
	"bottom-right": func(r tmux.Row) (int, bool) {
		return atoi(r["pane_right"]) + atoi(r["pane_bottom"]), r["pane_at_bottom"] == "1" && r["pane_at_right"] == "1"
	},
}

// windowTargetRows resolves a window target in one tmux round trip and
// returns the rows of that window from listCmd ("list-windows": one row;
// "list-panes": one row per pane). A window_id is looked up across the
// server and, when grouped sessions share the window, taken in the first
// session that lists it, so it is never ambiguous. Otherwise the session
// (or the whole server, whose first session is then used) is listed and
// the window picked by index, else its first window.
func (c *Call) windowTargetRows(ctx context.Context, sock tmux.Socket, t WindowTarget, listCmd string, fields []string) ([]tmux.Row, error) {
	fields = withField(withField(withField(fields, "window_id"), "window_index"), "session_id")
	wid, idx := str(t.WindowID), str(t.WindowIndex)
	var args []string
	if wid != "" {
		if _, err := tmux.ParseWindowID(wid); err != nil {
			return nil, err
		}
		args = []string{"-a"}
	} else {
		if idx != "" && !tmux.IsDigits(idx) {
			return nil, &tmux.BadIDError{Kind: "window", Detail: "window_index must be a non-negative integer"}
		}
		st, err := tmux.SessionTarget(str(t.SessionID), str(t.SessionName))
		if err != nil {
			return nil, err
		}
		switch {
		case st == "":
			args = []string{"-a"}
		case listCmd == "list-panes":
			args = []string{"-s", "-t", st}
		default:
			args = []string{"-t", st}
		}
	}
	rows, err := c.tmux.Rows(ctx, sock, append(tmux.Command{listCmd}, args...), fields)
	if err != nil {
		return nil, notFoundAs(err, sessionKind(t.SessionID, t.SessionName), sessionLabel(t.SessionID, t.SessionName))
	}
	if wid != "" {
		rows = keep(rows, "window_id", wid)
		if len(rows) == 0 {
			return nil, &tmux.NotFoundError{What: "window", Detail: wid}
		}
		return keep(rows, "session_id", rows[0]["session_id"]), nil
	}
	if len(rows) == 0 {
		return nil, &tmux.NotFoundError{What: "session", Detail: "the server has no sessions"}
	}
	rows = keep(rows, "session_id", rows[0]["session_id"])
	if idx != "" {
		if rows = keep(rows, "window_index", idx); len(rows) == 0 {
			where := sessionLabel(t.SessionID, t.SessionName)
			if where == "" {
				where = "the first session"
			}
			return nil, &tmux.NotFoundError{What: "window", Detail: fmt.Sprintf("index %s in %s", errarg.Bare(idx), where)}
		}
		return rows, nil
	}
	return keep(rows, "window_id", rows[0]["window_id"]), nil
}

// keep returns the rows whose field equals v.
func keep(rows []tmux.Row, field, v string) []tmux.Row {
	out := rows[:0:0]
	for _, r := range rows {
		if r[field] == v {
			out = append(out, r)
		}
	}
	return out
}

// sessionKind is "session" when a session was named, so tmux's "can't find
// session" gets the list_sessions hint; "" leaves other errors as they are.
func sessionKind(id, name *string) string {
	if str(id) != "" || str(name) != "" {
		return "session"
	}
	return ""
}

// sessionLabel names the session the agent asked for (id wins).
func sessionLabel(id, name *string) string {
	if v := str(id); v != "" {
		return errarg.Bare(v)
	}
	return errarg.Bare(str(name))
}
