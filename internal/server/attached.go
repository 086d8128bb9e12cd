package server

import (
	"context"
	"strconv"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// ownClientPIDs are the tmux clients this process keeps attached on the
// call's host: the control-mode engine's connections and the watchers. On
// a remote host they are the pids tmux reports there for our clients, kept
// by that host's engine, so they never mix with the local ones.
func (c *Call) ownClientPIDs() map[int]bool {
	pids := c.watch.PIDs()
	if cr, ok := c.tmux.Runner.(interface{ ClientPIDs() []int }); ok {
		for _, p := range cr.ClientPIDs() {
			pids[p] = true
		}
	}
	return pids
}

var clientFields = []string{"client_pid", "session_id"}

// sessionQuery runs cmds (the last one a session query printing fields)
// and, in the same round trip, lists the clients, so that session_attached
// can leave ours out. It returns the session rows and how many of our
// clients each session has.
//
// The client list is asked for on every query, and our own clients are
// read both before and after the round trip: the round trip itself may
// attach a control client (the first call of the process, or the first
// after a tmux server restart), and a watcher may attach or go away while
// it runs. A pid in either set is ours: tmux lists a client by the pid of
// the process we started, and we never share those processes.
func (c *Call) sessionQuery(ctx context.Context, sock tmux.Socket, fields []string, cmds ...tmux.Command) ([]tmux.Row, map[string]int, error) {
	own := c.ownClientPIDs()
	cmds = append(cmds, tmux.Command{"list-clients", "-F", tmux.Format(clientFields...)})
	outs, err := c.tmux.Run(ctx, sock, cmds...)
	if err != nil {
		return nil, nil, err
	}
	for p := range c.ownClientPIDs() {
		own[p] = true
	}
	last := len(cmds) - 1
	ours := map[string]int{}
	clients, _ := tmux.ParseRows(outs[last], clientFields)
	for _, cl := range clients {
		if pid, err := strconv.Atoi(cl["client_pid"]); err == nil && own[pid] {
			ours[cl["session_id"]]++
		}
	}
	rows, err := tmux.ParseRows(outs[last-1], fields)
	return c.scopeActivePanes(rows), ours, err
}

// sessionInfos builds SessionInfo results with session_attached counting
// only other clients: our own control clients attach to sessions to work,
// and an agent must not read that as a person being there.
func sessionInfos(rows []tmux.Row, ours map[string]int) []SessionInfo {
	out := make([]SessionInfo, 0, len(rows))
	for _, r := range rows {
		si := sessionInfo(r)
		if n := ours[si.SessionID]; n > 0 && si.SessionAttached != nil {
			v := strconv.Itoa(max(atoi(*si.SessionAttached)-n, 0))
			si.SessionAttached = &v
		}
		out = append(out, si)
	}
	return out
}
