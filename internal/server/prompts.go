package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Prompt is one recipe: a named, argument-taking message that teaches an
// agent a multi-step workflow with the tools.
type Prompt struct {
	Name        string
	Title       string
	Description string
	Args        []*mcp.PromptArgument
	Render      func(args map[string]string) (string, error)
}

// call renders a tool call the way every prompt writes it:
// tool_name({"arg": value, ...}), with JSON arguments so an agent (and our
// test) can read them unambiguously.
func call(tool string, kv ...any) string {
	var b strings.Builder
	b.WriteString(tool + "({")
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(verbatimJSON(kv[i]))
		b.WriteString(": ")
		b.WriteString(verbatimJSON(kv[i+1]))
	}
	b.WriteString("})")
	return b.String()
}

// verbatimJSON is json.Marshal without HTML escaping: a prompt is read by a
// model, not embedded in a web page, and "make 2>&1" must stay readable rather
// than become "make 2\u003e\u00261" (the reference renders it verbatim).
func verbatimJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

// Prompts are the reference's four recipes (contract 3.2), corrected where
// its advice was wrong (a timed-out run_command is resumed with
// wait_for_run, never by running the command again).
func Prompts() []*Prompt {
	return []*Prompt{
		{
			Name: "run_and_wait", Title: "Run a command and wait for it",
			Description: "Run one shell command in a pane and report its exit status and output.",
			Args: []*mcp.PromptArgument{
				{Name: "command", Description: "Shell command to run", Required: true},
				{Name: "pane_id", Description: "Target pane (e.g. %1)", Required: true},
				{Name: "timeout", Description: "Seconds to wait (default 60)"},
			},
			Render: func(a map[string]string) (string, error) {
				timeout := 60.0
				if s := a["timeout"]; s != "" {
					f, err := strconv.ParseFloat(s, 64)
					if err != nil || f <= 0 {
						return "", fmt.Errorf("timeout must be a positive number")
					}
					timeout = f
				}
				kv := []any{"pane_id", a["pane_id"], "command", a["command"], "timeout", timeout, "max_lines", 100}
				var warn string
				if strings.ContainsAny(a["command"], "\r\n") {
					kv = append(kv, "suppress_history", false)
					warn = "\nThe command spans several lines, so history suppression is off for it: the shell may record it.\n"
				}
				return "Run the command with one call:\n\n" + call("run_command", kv...) + "\n" + warn + `
Then read exit_status, timed_out and output from the result. Do not use send_keys followed by capture loops for this.
The wait is capped by the server's ceiling (30 s by default): read effective_timeout. If timed_out is true the command
is still running; call ` + call("wait_for_run", "run_id", "<run_id from the result>") + ` to keep waiting.
Never run the command again to "check on it". For TUIs or a long-lived shell session, use send_keys or
send_keys_batch with capture_since instead.`, nil
			},
		},
		{
			Name: "diagnose_failing_pane", Title: "Diagnose a failing pane",
			Description: "Work out why the program in a pane failed, without changing anything.",
			Args:        []*mcp.PromptArgument{{Name: "pane_id", Description: "Pane to diagnose (e.g. %1)", Required: true}},
			Render: func(a map[string]string) (string, error) {
				p := a["pane_id"]
				return "Diagnose what went wrong in pane " + p + ":\n\n" +
					"1. " + call("snapshot_pane", "pane_id", p) + " to see the screen, cursor and mode.\n" +
					"2. If content_truncated is true, " + call("snapshot_pane", "pane_id", p, "max_lines", nil) + " for the whole screen.\n" +
					"3. " + call("capture_since", "pane_id", p) + " and keep the cursor it returns; later calls with that cursor show only what is new.\n" +
					"4. Identify the last command run and the output it produced.\n" +
					"5. Propose a root cause and one command that would verify it. Do not execute anything.", nil
			},
		},
		{
			Name: "build_dev_workspace", Title: "Build a development workspace",
			Description: "Create a session with an editor, a shell and a log pane.",
			Args: []*mcp.PromptArgument{
				{Name: "session_name", Description: "Name of the new session", Required: true},
				{Name: "log_command", Description: "Command for the log pane (default: watch -n 1 date)"},
			},
			Render: func(a map[string]string) (string, error) {
				logCmd := a["log_command"]
				if logCmd == "" {
					logCmd = "watch -n 1 date"
				}
				s := a["session_name"]
				return "Build the workspace step by step, targeting panes by id from the start:\n\n" +
					"1. " + call("create_session", "session_name", s) + "; call its active_pane_id %A.\n" +
					"2. " + call("split_window", "pane_id", "%A", "direction", "below") + "; call the new pane %B.\n" +
					"3. " + call("split_window", "pane_id", "%B", "direction", "right") + "; call the new pane %C.\n" +
					"4. " + call("send_keys", "pane_id", "%A", "keys", "vim") + "\n" +
					"5. " + call("send_keys", "pane_id", "%C", "keys", logCmd) + "\n" +
					"6. Optionally " + call("wait_for_text", "pane_id", "%C", "patterns", nil, "timeout", 3.0) + " to confirm the log pane drew.\n" +
					"Use the real ids the calls return in place of %A, %B and %C.", nil
			},
		},
		{
			Name: "interrupt_gracefully", Title: "Interrupt a running program gracefully",
			Description: "Stop the foreground program in a pane with Ctrl-C and confirm the shell prompt came back.",
			Args:        []*mcp.PromptArgument{{Name: "pane_id", Description: "Pane to interrupt (e.g. %1)", Required: true}},
			Render: func(a map[string]string) (string, error) {
				p := a["pane_id"]
				return "Interrupt the program in pane " + p + " gently:\n\n" +
					"1. " + call("get_pane_info", "pane_id", p) + " and note pane_current_command.\n" +
					"2. " + call("send_keys", "pane_id", p, "keys", "C-c", "literal", false, "enter", false) + "\n" +
					"3. " + call("wait_for_text", "pane_id", p, "patterns", []string{`\$ `, `# `, `% `, `> `}, "regex", true, "timeout", 5.0) +
					" to see a shell prompt. Do not put ^C in stop.\n" +
					"4. " + call("get_pane_info", "pane_id", p) + " again: if pane_current_command is unchanged, stop and ask the user. " +
					"Never escalate to C-\\ or kill on your own.", nil
			},
		},
	}
}

// addPrompts registers the recipes on an SDK server.
func addPrompts(ms *mcp.Server) {
	for _, p := range Prompts() {
		ms.AddPrompt(&mcp.Prompt{Name: p.Name, Title: p.Title, Description: p.Description, Arguments: p.Args},
			func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				text, err := renderPrompt(p, req.Params.Arguments)
				if err != nil {
					return nil, err
				}
				return &mcp.GetPromptResult{Description: p.Description,
					Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}, nil
			})
	}
}

// promptNamed is the prompt called name, or nil.
func promptNamed(name string) *Prompt {
	for _, p := range Prompts() {
		if p.Name == name {
			return p
		}
	}
	return nil
}

func renderPrompt(p *Prompt, args map[string]string) (string, error) {
	for _, a := range p.Args {
		if a.Required && args[a.Name] == "" {
			return "", fmt.Errorf("prompt %s needs argument %s", p.Name, a.Name)
		}
	}
	return p.Render(args)
}
