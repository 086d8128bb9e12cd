package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"

	"github.com/tmux-mcp/tmux-mcp/internal/foreground"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// Foreground is what a pane's foreground program is doing, as the
// operating system says (internal/foreground): the object the waits,
// snapshot_pane, and get_pane_info and list_panes with foreground=true
// return.
type Foreground struct {
	PID          int     `json:"pid" desc:"The foreground process group's leader."`
	Command      string  `json:"command" desc:"Its name, as pane_current_command shows it."`
	State        string  `json:"state" enum:"waiting_for_input,running,sleeping,stopped,exited,unknown" desc:"waiting_for_input: blocked reading the pane's terminal, nothing runnable (typed input goes to it); running; sleeping: blocked on something else (a timer, the network, a child); stopped; exited: the pane's program ended; unknown: this platform cannot tell."`
	StateSeconds float64 `json:"state_seconds" desc:"How long it has been in this state (for running: since first seen running, at most its CPU time)."`
	Secret       bool    `json:"secret" desc:"The terminal is canonical with echo off: a password prompt (getpass, read -s). Readline and full-screen programs are not secret."`
	Basis        string  `json:"basis" enum:"exact,inferred" desc:"exact: the kernel says so (a read on the terminal, an epoll set holding it, a thread's state); inferred: from the terminal's mode and the files a program holds (select/poll)."`
}

// fgFields are the pane fields a foreground inspection needs.
var fgFields = []string{"pane_id", "pane_pid", "pane_tty", "pane_dead", "pane_current_command"}

// fgPaneFields are a pane's location (tmux.WhereFields: to follow its
// output) and fgFields: what a wait on its foreground program reads of it
// (wait_for_prompt, send_and_wait, a run_command that lost its host).
var fgPaneFields = func() []string {
	f := slices.Clone(tmux.WhereFields)
	for _, name := range fgFields {
		if !slices.Contains(f, name) {
			f = append(f, name)
		}
	}
	return f
}()

// foregroundModel is the answer object of a report.
func foregroundModel(r foreground.Report) *Foreground {
	return &Foreground{PID: r.PID, Command: r.Command, State: string(r.State), StateSeconds: r.StateSeconds, Secret: r.Secret, Basis: string(r.Basis)}
}

// runFunc runs a command list on the call's tmux server: c.tmux.Run, or a
// watcher's own connection during a wait.
type runFunc func(ctx context.Context, cmds ...tmux.Command) ([][]byte, error)

// inspectForeground reports what the foreground of a pane is doing. row
// holds fgFields. A local pane is read from this machine's kernel (no
// process, no tmux call); a remote one through run, or when run is nil
// through a watcher of the pane's session (the host's control connection,
// whose replies are nonce-checked: the dump holds text programs choose),
// which runs foreground.RemoteScript there.
func (c *Call) inspectForeground(ctx context.Context, sock tmux.Socket, row tmux.Row, run runFunc) foreground.Report {
	pid, _ := strconv.Atoi(row["pane_pid"])
	var r foreground.Report
	switch {
	case row["pane_dead"] == "1":
		r = foreground.ExitedReport(pid, row["pane_current_command"])
	case c.host == "":
		r = foreground.Inspect(foreground.Target{PanePID: pid, TTY: row["pane_tty"]}, c.fgOptions)
	default:
		r = c.remoteForeground(ctx, sock, row, run)
	}
	key := c.host + "\x00" + sock.String() + "\x00" + row["pane_id"] + "\x00" + row["pane_pid"]
	return c.fgTracker.Observe(key, r)
}

// remoteForeground runs the fixed dump script in the pane's own tmux
// server and decides from its output; the buffer it leaves is deleted in
// the same command list. A pane that died meanwhile is exited.
func (c *Call) remoteForeground(ctx context.Context, sock tmux.Socket, row tmux.Row, run runFunc) foreground.Report {
	pane := row["pane_id"]
	pid, _ := strconv.Atoi(row["pane_pid"])
	if run == nil {
		where := tmux.WhereOf(row)
		if where.Session == "" || where.Window == "" {
			var err error
			if where, err = c.tmux.Locate(ctx, sock, tmux.PaneID(pane)); err != nil {
				return foreground.ParseRemote(nil, pid)
			}
		}
		ps, _, err := c.openStreamAt(ctx, sock, where)
		if err != nil {
			return foreground.ParseRemote(nil, pid)
		}
		defer ps.close()
		run = ps.sub.Watcher().Command
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	buf := "tmux-mcp-fg-" + hex.EncodeToString(b[:])
	outs, err := run(ctx,
		tmux.Command{"display-message", "-p", "-t", pane, "#{pane_dead}"},
		tmux.Command{"run-shell", "-t", pane, foreground.RemoteScript(buf)},
		tmux.Command{"show-buffer", "-b", buf},
		tmux.Command{"delete-buffer", "-b", buf})
	if len(outs) > 0 && strings.TrimSpace(string(outs[0])) == "1" {
		return foreground.ExitedReport(pid, row["pane_current_command"])
	}
	if err != nil || len(outs) < 3 {
		r := foreground.ParseRemote(nil, pid)
		if err != nil {
			r.Why = "the host's dump failed: " + strings.TrimSpace(err.Error())
		}
		return r
	}
	return foreground.ParseRemote(outs[2], pid)
}

// isShell reports whether a program name is a shell run_command drives.
func isShell(name string) bool {
	name = strings.TrimPrefix(name, "-")
	return posixShells[name] || fishShells[name]
}
