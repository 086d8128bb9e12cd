package server

import (
	"context"
	"slices"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

func init() { toolGroups = append(toolGroups, paneReadTools) }

type getPaneInfoArgs struct {
	PaneTarget
	ForegroundArg
	SocketArgs
}

// ForegroundArg asks a listing for each pane's foreground object, which
// costs an inspection of the OS per pane: off by default, so a plain call
// stays as cheap as before.
type ForegroundArg struct {
	Foreground bool `json:"foreground" default:"false" desc:"Add the foreground program's state (waiting for input, running...)."`
}

// PaneInfoForeground is a PaneInfo with the foreground object a call asked
// for (foreground=true).
type PaneInfoForeground struct {
	PaneInfo
	Foreground *Foreground `json:"foreground,omitempty" desc:"What the pane's foreground program is doing; only with foreground=true. Addition of tmux-mcp."`
}

type listPanesArgs struct {
	SessionName *string      `json:"session_name"`
	SessionID   *string      `json:"session_id"`
	WindowID    *string      `json:"window_id"`
	WindowIndex *string      `json:"window_index" desc:"Needs session_name or session_id."`
	Filters     StringMapArg `json:"filters" desc:"Mapping or JSON string of tmux field lookups, e.g. {\"pane_current_command__contains\": \"vim\"}. Ops: exact, contains, startswith, endswith, regex (i-prefix: any case), in, nin."`
	ForegroundArg
	SocketArgs
}

func paneReadTools() []*Tool {
	return []*Tool{
		define(Tool{
			Name: "get_pane_info", Title: "Get Pane Info", Toolset: "pane", Tier: config.Readonly, Preset: RO,
			Description: "Get one pane's size, position, tty, pid, title, command, path and is_caller (the pane this server runs in). Target by pane_id; else a session's or window's first pane. For its text use capture_pane.",
		}, func(ctx context.Context, c *Call, a getPaneInfoArgs) (PaneInfoForeground, error) {
			sock := c.Socket(a.SocketArgs)
			r, err := c.resolvePane(ctx, sock, a.PaneTarget, c.withForegroundFields(paneFields, a.ForegroundArg))
			if err != nil {
				return PaneInfoForeground{}, err
			}
			return c.paneInfoForeground(ctx, sock, r, a.ForegroundArg), nil
		}),
		define(Tool{
			Name: "list_panes", Title: "List tmux Panes", Toolset: "pane", Tier: config.Readonly, Preset: RO, AlwaysLoad: true,
			Description: "List panes with ids and metadata, not content (use search_panes or capture_pane for text). Scope: a window (window_id, or window_index in a session), a session, or the server.",
		}, func(ctx context.Context, c *Call, a listPanesArgs) (paneList, error) {
			fs, err := parseFilters(a.Filters)
			if err != nil {
				return nil, err
			}
			scope := tmux.PaneScope{WindowID: str(a.WindowID), WindowIndex: str(a.WindowIndex), SessionID: str(a.SessionID), SessionName: str(a.SessionName)}
			args, err := scope.Target()
			if err != nil {
				return nil, err
			}
			sock := c.Socket(a.SocketArgs)
			fields := c.withForegroundFields(filterFields(paneListFields, fs), a.ForegroundArg)
			if !c.currentFromOS(fields) {
				fields = c.withForegroundFields(filterFields(paneFields, fs), a.ForegroundArg)
			}
			rows, err := c.listPaneRows(ctx, sock, args, fields)
			if err != nil {
				return nil, notFoundAs(err, scopeKind(scope), scopeName(scope))
			}
			out := make(paneList, 0, len(rows))
			for _, r := range rows {
				if matchFilters(r, fs) {
					out = append(out, c.paneInfoForeground(ctx, sock, r, a.ForegroundArg))
				}
			}
			return out, nil
		}),
	}
}

// withForegroundFields adds what an inspection needs to a pane query when
// the call asked for the foreground object (before the last field, which
// stays last: see filterFields).
func (c *Call) withForegroundFields(fields []string, a ForegroundArg) []string {
	if !a.Foreground || slices.Contains(fields, "pane_dead") {
		return fields
	}
	last := len(fields) - 1
	return append(append(append([]string{}, fields[:last]...), "pane_dead"), fields[last])
}

func (c *Call) paneInfoForeground(ctx context.Context, sock tmux.Socket, r tmux.Row, a ForegroundArg) PaneInfoForeground {
	out := PaneInfoForeground{PaneInfo: c.paneInfo(r)}
	if a.Foreground {
		out.Foreground = foregroundModel(c.inspectForeground(ctx, sock, r, nil))
	}
	return out
}
