package server

// confirmDocs is the docs/tools.md section on confirmation (confirm.go).
const confirmDocs = `## Confirmation: the person is asked before destroying

A client that declares MCP elicitation (form mode) is asked before a destructive call runs: ` + "`kill_server`, `kill_session`, `kill_window`, `kill_pane`" + `,
and a batch holding one of them. The question goes to the person, not to the model, and names exactly what the call will do,
read from tmux at that moment: the tmux server, the session and its windows, each pane with the program in its foreground and
what that program is doing (the foreground object below), and the text about to be typed. The call runs only if the person
accepts; decline and cancel answer with the error ` + "`ConfirmationDeclined`" + ` and nothing runs. A question nobody answers within
the wait ceiling (` + "`TMUX_MCP_WAIT_MAX_SECONDS`" + `) is cancelled, with the same error. A batch asks once, listing every row; its rows
then run unasked.

    tmux-mcp asks before an agent runs kill_session (destructive tier).
    tmux server: socket name work on this machine.
    kill_session: kill session "build" ($3) and its 2 windows:
      window 0 "editor" (@4): %7 vim, waiting for input
      window 1 "tests" (@5): %8 make, running for 42 s; %9 bash, a shell at its prompt
    Accept to run it; decline to refuse.

| setting | effect |
|---|---|
| ` + "`TMUX_MCP_CONFIRM`" + ` unset (default) | destructive calls ask, for clients that declare elicitation; other clients are not asked (the behaviour without this feature) |
| ` + "`TMUX_MCP_CONFIRM=destructive`" + ` | destructive calls ask; a client without elicitation is refused (` + "`ConfirmationRequired`" + `) |
| ` + "`TMUX_MCP_CONFIRM=mutating`" + ` | every call of the mutating tier and up asks (typing, pasting, running a command, creating, renaming...) |
| ` + "`TMUX_MCP_CONFIRM=off`" + ` | nothing asks |
| ` + "`TMUX_MCP_CONFIRM_FALLBACK=allow`" + ` | with ` + "`TMUX_MCP_CONFIRM`" + ` set, a client without elicitation runs such calls unasked instead of being refused |

On protocol 2025-11-25 and before the question is an ` + "`elicitation/create`" + ` request sent while the call waits, over stdio and
over HTTP (on the call's own stream). On 2026-07-28 the call is answered with the question as an input request and a
` + "`requestState`" + `, and runs when the client calls again with the person's answer and that state. The state is a random handle
to what the server remembers: the identity that was asked (over HTTP, the token), the tool and its exact arguments, and
the deadline. It is spent by its first use. An answer with a state this server did not issue to this identity, one
already used, or one issued for other arguments is refused (` + "`ConfirmationInvalid`" + `) and nothing runs; so is an answer
without a state. States live in the server process: a restart forgets the questions it asked. The server holds no request open meanwhile,
so it cannot withdraw the question from the client: an answer that comes back after the wait ceiling counts as cancelled.
` + "`tmux-mcp call`" + ` has no one to ask: with ` + "`TMUX_MCP_CONFIRM`" + ` set it is refused like any client without elicitation.

The audit log gets a ` + "`confirm_question`" + ` record (the question as asked, with typed text replaced by its length and a SHA-256
prefix) and a ` + "`confirm_answer`" + ` record (` + "`accept`, `decline`, `cancel`, `timeout`, `forged`, `replayed`, `mismatch`" + `...), tied
together by ` + "`confirm_id`" + ` and to the call by ` + "`request_id`" + `. Secret input (` + "`send_and_wait`" + ` with ` + "`secret: true`" + `, or text
bound for a pane at a password prompt) is shown neither to the person nor in the log.

The question describes tmux as it is when asked; the call then runs on the same arguments, so a pane id names the same
pane, but a session given by name is whatever session has that name when the call runs.

`
