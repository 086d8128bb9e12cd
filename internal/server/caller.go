package server

import (
	"path/filepath"

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

func samePath(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	if err1 != nil || err2 != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return ra == rb
}

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
