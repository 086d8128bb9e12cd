package server

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// isCaller computes a pane's is_caller (contract 2.3): null when this process
// is not in a tmux pane, true only when the pane id equals TMUX_PANE and the
// pane's server socket is the caller's socket (compared by real path), false
// otherwise. socketPath is the server's #{socket_path}, read in the same
// query as the pane.
func (s *Server) isCaller(paneID, socketPath string) *bool {
	c := s.cfg.Caller
	if c.PaneID == "" {
		return nil
	}
	res := paneID == c.PaneID && c.SocketPath != "" && socketPath != "" && samePath(c.SocketPath, socketPath)
	return &res
}

func samePath(a, b string) bool { return realPath(a) == realPath(b) }

// callerOnServer is the conservative check behind the kill and respawn guards:
// it answers true (refuse) whenever it cannot prove the target server is not
// the one this process runs in.
func (s *Server) callerOnServer(sock tmux.Socket, serverSocketPath string) bool {
	c := s.cfg.Caller
	if !c.InTmux() {
		return false
	}
	if c.SocketPath == "" {
		return true
	}
	target := serverSocketPath
	if target == "" {
		target = sock.Path
	}
	if target == "" && sock.Name != "" {
		target = filepath.Join(s.cfg.SocketDir(), sock.Name)
	}
	if target == "" {
		// tmux's default socket while TMUX is set is the caller's server.
		return true
	}
	if samePath(c.SocketPath, target) {
		return true
	}
	name := sock.Name
	if name == "" && sock.Path == "" {
		name = "default"
	}
	return name != "" && filepath.Base(c.SocketPath) == name
}

// callerSpot is what the kill guards know about this process's place on a
// target server, read from that server in one round trip.
type callerSpot struct {
	OnServer  bool       // callerOnServer, judged with the server's own #{socket_path}
	PaneKnown bool       // TMUX_PANE is set
	Rows      []tmux.Row // the caller's pane as the server lists it (pane_id, window_id, session_id; one row per session linking its window); none when it is not there
}

// locateCaller runs the commands in pre (they come first, so a bad target
// fails before anything else) followed by the queries that place the caller
// on the target server: the server's #{socket_path} and, when TMUX_PANE is
// set, the caller's pane by id. It returns pre's outputs. When this process
// is not inside tmux it runs only pre.
func (c *Call) locateCaller(ctx context.Context, sock tmux.Socket, pre ...tmux.Command) (callerSpot, [][]byte, error) {
	caller := c.cfg.Caller
	if !caller.InTmux() {
		if len(pre) == 0 {
			return callerSpot{}, nil, nil
		}
		outs, err := c.tmux.Run(ctx, sock, pre...)
		return callerSpot{}, outs, err
	}
	fields := []string{"pane_id", "window_id", "session_id"}
	cmds := append(append([]tmux.Command{}, pre...), tmux.Command{"display-message", "-p", "#{socket_path}"})
	if caller.PaneID != "" {
		cmds = append(cmds, tmux.Command{"list-panes", "-a", "-f", "#{==:#{pane_id}," + caller.PaneID + "}", "-F", tmux.Format(fields...)})
	}
	outs, err := c.tmux.Run(ctx, sock, cmds...)
	if err != nil {
		return callerSpot{}, outs, err
	}
	spot := callerSpot{PaneKnown: caller.PaneID != ""}
	spot.OnServer = c.callerOnServer(sock, strings.TrimSpace(string(outs[len(pre)])))
	if spot.PaneKnown {
		rows, err := tmux.ParseRows(outs[len(pre)+1], fields)
		if err != nil {
			return callerSpot{}, outs, err
		}
		for _, r := range rows {
			if r["pane_id"] == caller.PaneID {
				spot.Rows = append(spot.Rows, r)
			}
		}
	}
	return spot, outs[:len(pre)], nil
}

// holds reports whether the caller's pane may live in the object whose
// field (window_id or session_id) equals id. Unsure counts as yes: on the
// caller's server with no TMUX_PANE, the caller could be anywhere.
func (s callerSpot) holds(field, id string) bool {
	if !s.OnServer {
		return false
	}
	if !s.PaneKnown {
		return true
	}
	for _, r := range s.Rows {
		if r[field] == id {
			return true
		}
	}
	return false
}
