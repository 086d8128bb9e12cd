package server

import (
	"context"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

func init() { toolGroups = append(toolGroups, paneReadTools) }

type getPaneInfoArgs struct {
	PaneTarget
	SocketArgs
}

type listPanesArgs struct {
	SessionName *string      `json:"session_name"`
	SessionID   *string      `json:"session_id"`
	WindowID    *string      `json:"window_id"`
	WindowIndex *string      `json:"window_index" desc:"Needs session_name or session_id."`
	Filters     StringMapArg `json:"filters" desc:"Mapping or JSON string of tmux field lookups, e.g. {\"pane_current_command__contains\": \"vim\"}. Ops: exact, contains, startswith, endswith, regex (i-prefix: any case), in, nin."`
	SocketArgs
}

func paneReadTools() []*Tool {
	return []*Tool{
		define(Tool{
			Name: "get_pane_info", Title: "Get Pane Info", Toolset: "pane", Tier: config.Readonly, Preset: RO,
			Description: "Get one pane's size, position, tty, pid, title, command, path and is_caller (the pane this server runs in). Target by pane_id; else a session's or window's first pane. For its text use capture_pane.",
		}, func(ctx context.Context, c *Call, a getPaneInfoArgs) (PaneInfo, error) {
			r, err := c.resolvePane(ctx, c.Socket(a.SocketArgs), a.PaneTarget, paneFields)
			if err != nil {
				return PaneInfo{}, err
			}
			return c.paneInfo(r), nil
		}),
		define(Tool{
			Name: "list_panes", Title: "List tmux Panes", Toolset: "pane", Tier: config.Readonly, Preset: RO, AlwaysLoad: true,
			Description: "List panes with ids and metadata, not content (use search_panes or capture_pane for text). Scope: a window (window_id, or window_index in a session), a session, or the server.",
		}, func(ctx context.Context, c *Call, a listPanesArgs) ([]PaneInfo, error) {
			fs, err := parseFilters(a.Filters)
			if err != nil {
				return nil, err
			}
			scope := tmux.PaneScope{WindowID: str(a.WindowID), WindowIndex: str(a.WindowIndex), SessionID: str(a.SessionID), SessionName: str(a.SessionName)}
			args, err := scope.Target()
			if err != nil {
				return nil, err
			}
			rows, err := c.tmux.Rows(ctx, c.Socket(a.SocketArgs), append(tmux.Command{"list-panes"}, args...), filterFields(paneFields, fs))
			if err != nil {
				return nil, notFoundAs(err, scopeKind(scope), scopeName(scope))
			}
			out := []PaneInfo{}
			for _, r := range tmux.DedupeBy(rows, "pane_id") {
				if matchFilters(r, fs) {
					out = append(out, c.paneInfo(r))
				}
			}
			return out, nil
		}),
	}
}
