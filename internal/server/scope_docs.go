package server

// scopeDocs is docs/tools.md's section on scopes (scope.go).
const scopeDocs = `## Scope: confining an agent to its sessions

` + "`--scope` / `TMUX_MCP_SCOPE`" + ` confines the agent to some sessions. Over HTTP each token may carry its own scope (the
tokens file's fourth field: ` + "`TOKEN NAME TIER SCOPE`" + `; a token without one gets ` + "`--scope`" + `'s), and OAuth callers get
` + "`--oauth-session-scope`" + ` (default: ` + "`--scope`" + `'s). The scope is configuration, not a tool argument: the agent cannot widen it.

| scope | the sessions inside |
|---|---|
| ` + "`none`" + ` (default) | every session: no confinement |
| ` + "`own`" + ` | the sessions this caller created: ` + "`create_session`" + ` marks each with the session user option ` + "`@tmux-mcp-owner`" + ` set to the caller's identity (` + "`stdio`" + ` for a stdio server and the ` + "`call`" + ` subcommand, the token's name over HTTP, ` + "`oauth:SUBJECT`" + ` for OAuth). The mark lives in tmux: it survives a restart of tmux-mcp and shows in ` + "`tmux show-options -t SESSION`" + `; a person can set it by hand to hand a session over |
| ` + "`sessions=NAME,$ID,PREFIX*`" + ` | sessions by exact name, by id, or by name prefix (` + "`ci-*`" + `) |
| ` + "`own,sessions=LIST`" + ` | both |

Windows and panes belong to their session: a window or pane made in a session inside stays inside. A window that is
also linked into a session outside (` + "`link-window`" + `, grouped sessions) is outside, since tmux names its sessions in
its answers.

Under a scope, what is outside is invisible and untouchable through every tool, batch row, resource, subscription and
completion:

- Lists and searches leave it out: ` + "`list_sessions`" + `, ` + "`list_windows`" + `, ` + "`list_panes`" + `, ` + "`search_panes`" + `, ` + "`resources/list`" + `, completions;
  ` + "`get_server_info`" + ` counts only the sessions inside.
- A target naming it (by id, name or window index, in a ` + "`capture_since`" + ` cursor, a ` + "`send_keys_batch`" + ` row, a batch row, a
  resource URI or a subscription) gets exactly the answer a missing object gets, error type and wording alike: no
  oracle. ` + "`%05`" + ` is read as ` + "`%5`" + `, as tmux reads it.
- A call that names no target uses the first session inside, not the server's first. A session holding a window linked
  in from outside is addressed by window or pane there: a call that would let tmux pick its window is refused.
- ` + "`display_message`" + ` takes only text and plain ` + "`#{variable}`" + `s of its target (` + "`pane_*`, `window_*`, `session_*`, `cursor_*`" + `...): no
  loops (` + "`#{S:...}`" + `), no modifiers (` + "`#{N/s:name}`" + `, ` + "`#{==:...}`" + `), no conditionals, no ` + "`#S`" + `-style aliases, no client or
  server variables, nothing naming other sessions (` + "`#{session_group_list}`" + `).
- ` + "`create_session`" + ` under ` + "`own`" + ` makes a session the caller owns; under ` + "`sessions=`" + ` alone the name must be one the scope lists.
  ` + "`rename_session`" + ` cannot take a session out of the scope.
- Refused, with ` + "`error_type: OutOfScope`" + `: ` + "`kill_server`" + `, ` + "`list_servers`" + `, options and hooks at global or server scope
  (` + "`global_`" + `, ` + "`scope: server`" + `, a server option named in full or by a prefix tmux would complete), changing
  ` + "`@tmux-mcp-owner`" + `, and the global environment (` + "`show_environment`/`set_environment`" + ` without a session).
- Still available: ` + "`wait_for_channel`" + ` and ` + "`signal_channel`" + ` (a channel names no session), the buffer tools (they only
  ever reach the caller's own ` + "`load_buffer`" + ` buffers), ` + "`wait_for_run`" + ` (the caller's own run_ids), ` + "`list_recordings`" + ` and
  the recordings' resources (the caller's own) and the prompts. ` + "`record_pane`" + ` records only a pane inside.
- A tool without a scope rule (one added later) is refused under any scope until it gets one: fail closed.
- A question put to the person before a call (Confirmation, below) names nothing outside either: a call on an outside
  object is asked about as one on a missing object, and a refused tool is refused before anyone is asked.

A scope applies on every socket and every ` + "`host`" + `: each tmux server's sessions are judged by the same rule, on that
server. It costs each call one extra tmux round trip (two with ` + "`own`" + `, which reads the owner marks).

**A guard against mistakes, not a sandbox.** A scope confines what the tools address. It does not confine what a
command typed into a pane inside can do: that shell can run ` + "`tmux`" + ` itself (` + "`tmux kill-server`, `tmux send-keys -t editor ...`" + `),
and so can a hook or a ` + "`#()`" + ` format stored in an option of a session inside, which tmux runs with its full reach.
Session names are one namespace per server, so creating or renaming a session to a taken name answers that it is
taken. Structure notifications (` + "`notifications/resources/list_changed`" + `, a subscription to ` + "`tmux://sessions`" + `) tell that
the server changed somewhere; what is read after is confined.

`
