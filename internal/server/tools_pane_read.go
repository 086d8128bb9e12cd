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
	WindowIndex *string      `json:"window_index" desc:"Window index within the session; needs session_name or session_id."`
	Filters     StringMapArg `json:"filters" desc:"Django-style filters on tmux fields, as a mapping or JSON object string, e.g. {\"pane_current_command__contains\": \"vim\"}. Operators: exact, iexact, contains, icontains, startswith, istartswith, endswith, iendswith, in, nin (comma-separated), regex, iregex."`
	SocketArgs
}

func paneReadTools() []*Tool {
	return []*Tool{
		define(Tool{
			Name: "get_pane_info", Title: "Get Pane Info", Toolset: "pane", Tier: config.Readonly, Preset: RO,
			Description: "Get detailed information about one pane: size, position, edges, tty, pid, title, current command and path, and whether it is the pane this server runs in (is_caller). Target by pane_id; with session or window only, the first pane there.",
		}, func(ctx context.Context, c *Call, a getPaneInfoArgs) (PaneInfo, error) {
			r, err := c.resolvePane(ctx, c.Socket(a.SocketArgs), a.PaneTarget, paneFields)
			if err != nil {
				return PaneInfo{}, err
			}
			return c.paneInfo(r), nil
		}),
		define(Tool{
			Name: "list_panes", Title: "List tmux Panes", Toolset: "pane", Tier: config.Readonly, Preset: RO, AlwaysLoad: true,
			Description: "List panes with their ids and metadata (not their content; use search_panes or capture_pane for text). Scope: a window (window_id, or window_index within a session), a session, or every pane on the server. Each row has is_caller.",
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
