package server

import (
	"fmt"
	"strings"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
)

// instructionsBudget is the most bytes of instructions we send; some clients
// truncate or drop longer ones.
const instructionsBudget = 2048

const instructionsBase = `tmux-mcp controls tmux: servers hold sessions ($N), sessions hold windows (@N), windows hold panes (%N). Target panes by pane_id; ids are stable, names and indexes are not. Without pane_id a tool uses window_id, else window_index in the session, else the session (session_id or session_name), else the first session; socket_name (tmux -L) or socket_path (tmux -S, wins) picks the tmux server; without them, the configured or default one.
Use these tools when the user says pane, window, session, split, send keys, scrollback, terminal or tmux, or gives a %N/@N/$N id. Not for browser tabs, editor splits, tiling window managers, Jupyter, or login/HTTP sessions.
list_* tools read metadata only; search_panes and capture_* read pane content. Prefer snapshot_pane (content plus cursor and mode in one call), capture_since (only what is new) and display_message (any tmux format).
Wait, don't poll: run_command runs a shell command and returns its exit status and output; send_and_wait drives a REPL, prompt or TUI turn by turn (types, waits until the program reads input again, returns only its answer); wait_for_prompt waits for a program to want input, go quiet or exit; wait_for_text waits for output you did not author; wait_for_channel waits for a tmux wait-for signal.
Hooks are read-only (show_hooks): hooks written by an agent would outlive this server. Buffers: load_buffer returns a name; paste_buffer, show_buffer and delete_buffer take it; there is no list_buffers, so user and clipboard buffers stay private.
run_command suppresses shell history by default; send_keys does not unless suppress_history is true.`

// Instructions returns the server instructions for the configured tier and
// caller, within the byte budget.
func (s *Server) Instructions() string {
	out := buildInstructions(s.cfg.Safety, s.cfg.Caller)
	if s.hosts == nil || len(s.hosts.Names()) == 0 {
		return out
	}
	// The configured hosts, so a model can name one; within the budget.
	line := "\nRemote hosts, named by the host argument (omit it for this machine; ids are per host): " + strings.Join(s.hosts.Names(), ", ") + "."
	if len(out)+len(line) <= instructionsBudget {
		out += line
	}
	return out
}

func buildInstructions(tier config.Tier, caller config.Caller) string {
	var b strings.Builder
	b.WriteString(instructionsBase)
	fmt.Fprintf(&b, "\nSafety tier: %s.", tier)
	if tier == config.Readonly {
		b.WriteString(" Only read-only tools are available; when unsure whether something exists, probe with a list or get tool.")
	}
	base := b.String()
	if caller.PaneID == "" {
		return base
	}
	withSocket := fmt.Sprintf("\nThis MCP server runs inside tmux pane %s", caller.PaneID)
	agent := withSocket + "."
	if caller.SocketPath != "" {
		withSocket += fmt.Sprintf(" (socket %s)", caller.SocketPath)
	}
	withSocket += "."
	tail := " Filter list_panes for is_caller=true to find it; the server refuses to kill its own pane, window, session or server."
	for _, extra := range []string{withSocket + tail, agent + tail} {
		if len(base)+len(extra) <= instructionsBudget {
			return base + extra
		}
	}
	return base
}
