package server

import (
	"context"
	"strconv"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// ownClientPIDs are the tmux clients this process keeps attached: the
// control-mode engine's connections and the watchers.
func (s *Server) ownClientPIDs() map[int]bool {
	pids := s.watch.PIDs()
	if cr, ok := s.tmux.Runner.(interface{ ClientPIDs() []int }); ok {
		for _, p := range cr.ClientPIDs() {
			pids[p] = true
		}
	}
	return pids
}

// sessionInfos builds SessionInfo results with session_attached counting
// only other clients: our own control clients attach to sessions to work,
// and an agent must not read that as a person being there. It costs one
// more query only while we have clients attached.
func (c *Call) sessionInfos(ctx context.Context, sock tmux.Socket, rows []tmux.Row) []SessionInfo {
	out := make([]SessionInfo, 0, len(rows))
	for _, r := range rows {
		out = append(out, sessionInfo(r))
	}
	own := c.ownClientPIDs()
	if len(own) == 0 || len(out) == 0 {
		return out
	}
	clients, err := c.tmux.Rows(ctx, sock, tmux.Command{"list-clients"}, []string{"client_pid", "session_id"})
	if err != nil {
		return out
	}
	ours := map[string]int{}
	for _, cl := range clients {
		if pid, err := strconv.Atoi(cl["client_pid"]); err == nil && own[pid] {
			ours[cl["session_id"]]++
		}
	}
	for i := range out {
		if n := ours[out[i].SessionID]; n > 0 && out[i].SessionAttached != nil {
			v := strconv.Itoa(max(atoi(*out[i].SessionAttached)-n, 0))
			out[i].SessionAttached = &v
		}
	}
	return out
}
