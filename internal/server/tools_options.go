package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/errarg"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

func init() { toolGroups = append(toolGroups, optionTools) }

// ScopeArgs selects the options (or hooks) of one tmux object.
type ScopeArgs struct {
	Scope  *string `json:"scope" enum:"server,session,window,pane" desc:"Omitted: tmux infers it."`
	Target *string `json:"target" desc:"Session name, window id or pane id, per scope (needs scope)."`
	Global bool    `json:"global_" default:"false" doc:"Use the global options (-g) instead of the target's own."`
}

type showOptionArgs struct {
	Option string `json:"option" desc:"e.g. history-limit, mouse, @user-option"`
	ScopeArgs
	SocketArgs
}

type setOptionArgs struct {
	Option string `json:"option" doc:"Option name."`
	Value  string `json:"value" desc:"As set-option takes it."`
	ScopeArgs
	SocketArgs
}

type sessionArgs struct {
	SessionName *string `json:"session_name" desc:"Omitted: the global environment."`
	SessionID   *string `json:"session_id"`
}

type showEnvironmentArgs struct {
	sessionArgs
	SocketArgs
}

type setEnvironmentArgs struct {
	Name  string `json:"name" doc:"Variable name."`
	Value string `json:"value" doc:"Variable value."`
	sessionArgs
	SocketArgs
}

type showHooksArgs struct {
	ScopeArgs
	SocketArgs
}

type showHookArgs struct {
	HookName string `json:"hook_name" desc:"e.g. pane-exited"`
	ScopeArgs
	SocketArgs
}

func optionTools() []*Tool {
	return []*Tool{
		define(Tool{
			Name: "show_option", Title: "Show tmux Option", Toolset: "option", Tier: config.Readonly, Preset: RO,
			Description: "Show one tmux option's value. Without global_ it is the value in effect for the target, inherited if not set locally; null for an unset user option. set_option changes it.",
		}, showOption),
		define(Tool{
			Name: "set_option", Title: "Set tmux Option", Toolset: "option", Tier: config.Mutating, Preset: MUT,
			Description: "Set a tmux option at a scope (server, session, window, pane) or globally. The value is not echoed; read it back with show_option.",
		}, setOption),
		define(Tool{
			Name: "show_environment", Title: "Show tmux Environment", Toolset: "environment", Tier: config.Readonly, Preset: RO,
			Description: "Show the tmux environment new panes and windows inherit: a session's, or the global one. A variable tmux removes maps to false. set_environment changes it.",
		}, showEnvironment),
		define(Tool{
			Name: "set_environment", Title: "Set tmux Environment", Toolset: "environment", Tier: config.Mutating, Preset: MUT,
			Description: "Set a variable in a session's tmux environment (or the global one) for panes created later; running processes keep theirs. For one command prefer `env VAR=value cmd` in run_command.",
		}, setEnvironment),
		define(Tool{
			Name: "show_hooks", Title: "Show tmux Hooks", Toolset: "hook", Tier: config.Readonly, Preset: RO,
			Description: "List the tmux hooks set at a scope. scope='server' lists every global hook. For one hook by name use show_hook.",
		}, showHooks),
		define(Tool{
			Name: "show_hook", Title: "Show tmux Hook", Toolset: "hook", Tier: config.Readonly, Preset: RO,
			Description: "Show the commands of one tmux hook; an unset hook gives [], an unknown name an error. show_hooks lists all.",
		}, showHook),
	}
}

// flags turns scope, target and global_ into show-options/set-option
// flags, and returns the kind of the target for not-found errors.
func (a ScopeArgs) flags() (args []string, kind string, err error) {
	scope, target := str(a.Scope), str(a.Target)
	if a.Target != nil && scope == "" {
		return nil, "", expectedf("scope is required when target is specified")
	}
	if a.Global {
		args = append(args, "-g")
	}
	switch scope {
	case "server":
		args = append(args, "-s")
	case "window":
		args = append(args, "-w")
	case "pane":
		args = append(args, "-p")
	}
	if a.Target == nil {
		return args, "", nil
	}
	switch scope {
	case "server":
		return nil, "", expectedf("scope 'server' takes no target")
	case "session":
		if target == "" {
			return nil, "", expectedf("target must be a session name")
		}
		t, err := tmux.SessionTarget("", target)
		if err != nil {
			return nil, "", err
		}
		return append(args, "-t", t), "session", nil
	case "window":
		w, err := tmux.ParseWindowID(target)
		if err != nil {
			return nil, "", err
		}
		return append(args, "-t", string(w)), "window", nil
	default:
		p, err := tmux.ParsePaneID(target)
		if err != nil {
			return nil, "", err
		}
		return append(args, "-t", string(p)), "pane", nil
	}
}

// pinTarget makes an untargeted, non-global session, window or pane scope
// explicit: tmux would otherwise use "the current session", which for the
// control-mode engine is the session it is attached to and for a one-shot
// client the most recently used one. Like every other tool without a
// target, it uses the first session (and that session's current window and
// active pane). It costs a round trip only in that case.
func (c *Call) pinTarget(ctx context.Context, sock tmux.Socket, a ScopeArgs, flags []string) ([]string, error) {
	if a.Global || a.Target != nil || str(a.Scope) == "server" {
		return flags, nil
	}
	id, err := c.firstSession(ctx, sock)
	if err != nil {
		return nil, err
	}
	return append(flags, "-t", id), nil
}

func checkName(what, name string) error {
	if name == "" {
		return expectedf("%s must not be empty", what)
	}
	if strings.ContainsAny(name, "\n\r\t ") {
		return expectedf("%s must not contain whitespace", what)
	}
	return nil
}

// isInvalidOption reports tmux's answer to an unknown option or hook name.
func isInvalidOption(err error) bool {
	var ce *tmux.CommandError
	if !errors.As(err, &ce) {
		return false
	}
	s := strings.ToLower(ce.Stderr)
	return strings.Contains(s, "invalid option") || strings.Contains(s, "unknown option") ||
		strings.Contains(s, "ambiguous option") || strings.Contains(s, "unknown hook")
}

// optionError maps a failed option or hook command: a missing target
// becomes the NotFoundError naming it; any other tmux answer is typed as
// libtmux's handle_option_error types it (InvalidOption for an unknown
// name, OptionError for a value tmux refuses, ...), and an unknown name
// is said in our words. tmux's answers that any command can give (no
// server, an ambiguous target) keep the types toToolError gives them.
func optionError(err error, what, name, kind, target string) error {
	var ce *tmux.CommandError
	if tmuxNotFound(err) || !errors.As(err, &ce) {
		return notFoundAs(err, kind, target)
	}
	typ := optionErrorType(ce.Stderr)
	if typ == "OptionError" && ce.Kind != nil {
		return err // no server, an ambiguous target: typed as for every tool
	}
	te := &ToolError{Msg: "tmux error: " + ce.Error(), Type: typ, Expected: true, Err: err}
	if isInvalidOption(err) {
		te.Msg = fmt.Sprintf("unknown tmux %s %s", what, errarg.Quoted(name))
	}
	return te
}

func showOption(ctx context.Context, c *Call, a showOptionArgs) (OptionResult, error) {
	if err := checkName("option", a.Option); err != nil {
		return OptionResult{}, err
	}
	flags, kind, err := a.flags()
	if err != nil {
		return OptionResult{}, err
	}
	if !a.Global {
		flags = append(flags, "-A") // the value in effect, inherited included
	}
	sock := c.Socket(a.SocketArgs)
	if flags, err = c.pinTarget(ctx, sock, a.ScopeArgs, flags); err != nil {
		return OptionResult{}, err
	}
	base := append(tmux.Command{"show-options"}, flags...)
	keysCmd := append(append(tmux.Command{}, base...), "--", a.Option)
	valCmd := append(append(tmux.Command{}, base...), "-v", "--", a.Option)
	outs, err := c.tmux.Run(ctx, sock, keysCmd, valCmd)
	if err != nil {
		if isInvalidOption(err) && strings.HasPrefix(a.Option, "@") {
			return OptionResult{Option: a.Option, Value: nil}, nil // an unset user option
		}
		return OptionResult{}, optionError(err, "option", a.Option, kind, str(a.Target))
	}
	var keys []string
	for _, line := range splitRows(outs[0]) {
		if line == "" {
			continue
		}
		k, _, _ := strings.Cut(line, " ")
		keys = append(keys, strings.TrimSuffix(k, "*"))
	}
	val := outs[1]
	if len(keys) == 0 {
		return OptionResult{Option: a.Option, Value: nil}, nil
	}
	if strings.Contains(a.Option, "[") || !strings.Contains(keys[0], "[") {
		return OptionResult{Option: a.Option, Value: optionScalar(string(bytes.TrimSuffix(val, []byte("\n"))))}, nil
	}
	// An array option: -v prints one element per line, so the lines match
	// the keys one to one unless an element holds a newline; then each
	// element is asked for on its own.
	lines := splitRows(val)
	if len(lines) == len(keys) {
		return OptionResult{Option: a.Option, Value: optionArray(a.Option, keys, lines)}, nil
	}
	cmds := make([]tmux.Command, len(keys))
	for i, k := range keys {
		cmds[i] = append(append(tmux.Command{}, base...), "-v", "--", k)
	}
	outs, err = c.tmux.Run(ctx, sock, cmds...)
	if err != nil {
		return OptionResult{}, optionError(err, "option", a.Option, kind, str(a.Target))
	}
	elems := make([]string, len(outs))
	for i, o := range outs {
		elems[i] = string(bytes.TrimSuffix(o, []byte("\n")))
	}
	return OptionResult{Option: a.Option, Value: optionArray(a.Option, keys, elems)}, nil
}

// withoutValue removes a secret from a tmux error message: tmux repeats a
// rejected value ("value is invalid: ...").
func withoutValue(err error, value string) error {
	var ce *tmux.CommandError
	if value == "" || !errors.As(err, &ce) || !strings.Contains(ce.Stderr, value) {
		return err
	}
	cp := *ce
	cp.Stderr = strings.ReplaceAll(ce.Stderr, value, "<value>")
	return &cp
}

func setOption(ctx context.Context, c *Call, a setOptionArgs) (OptionSetResult, error) {
	if err := checkName("option", a.Option); err != nil {
		return OptionSetResult{}, err
	}
	flags, kind, err := a.flags()
	if err != nil {
		return OptionSetResult{}, err
	}
	if flags, err = c.pinTarget(ctx, c.Socket(a.SocketArgs), a.ScopeArgs, flags); err != nil {
		return OptionSetResult{}, err
	}
	cmd := append(append(tmux.Command{"set-option"}, flags...), "--", a.Option, a.Value)
	if _, err := c.tmux.Run(ctx, c.Socket(a.SocketArgs), cmd); err != nil {
		return OptionSetResult{}, optionError(withoutValue(err, a.Value), "option", a.Option, kind, str(a.Target))
	}
	return OptionSetResult{Option: a.Option, Value: a.Value, Status: "set"}, nil
}

// envTarget returns "-t <session>" or "-g" for the global environment.
func (a sessionArgs) envTarget() ([]string, error) {
	t, err := tmux.SessionTarget(str(a.SessionID), str(a.SessionName))
	if err != nil {
		return nil, err
	}
	if t == "" {
		return []string{"-g"}, nil
	}
	return []string{"-t", t}, nil
}

func (a sessionArgs) name() string {
	if id := str(a.SessionID); id != "" {
		return id
	}
	return str(a.SessionName)
}

func showEnvironment(ctx context.Context, c *Call, a showEnvironmentArgs) (EnvironmentResult, error) {
	target, err := a.envTarget()
	if err != nil {
		return EnvironmentResult{}, err
	}
	// The shell form (-s) quotes values, so a value holding a newline
	// cannot forge another variable.
	outs, err := c.tmux.Run(ctx, c.Socket(a.SocketArgs), append(tmux.Command{"show-environment", "-s"}, target...))
	if err != nil {
		return EnvironmentResult{}, notFoundAs(err, "session", a.name())
	}
	vars, err := parseShellEnv(outs[0])
	if err != nil {
		return EnvironmentResult{}, err
	}
	return EnvironmentResult{Variables: vars}, nil
}

// parseShellEnv reads `show-environment -s` output: `NAME="value"; export
// NAME;` where tmux escapes $ ` " and \ with a backslash, and `unset NAME;`.
func parseShellEnv(out []byte) (EnvVars, error) {
	vars := EnvVars{}
	s := string(out)
	bad := errors.New("unexpected show-environment output")
	for s != "" {
		if rest, ok := strings.CutPrefix(s, "unset "); ok {
			name, after, found := strings.Cut(rest, ";\n")
			if !found {
				return nil, bad
			}
			vars["-"+name] = true // libtmux's form: tmux prints "-NAME"
			s = after
			continue
		}
		name, rest, found := strings.Cut(s, "=\"")
		if !found {
			return nil, bad
		}
		var b strings.Builder
		i := 0
		for ; i < len(rest) && rest[i] != '"'; i++ {
			if rest[i] == '\\' && i+1 < len(rest) {
				i++
			}
			b.WriteByte(rest[i])
		}
		tail := "\"; export " + name + ";\n"
		if !strings.HasPrefix(rest[i:], tail) {
			return nil, bad
		}
		vars[name] = b.String()
		s = rest[i+len(tail):]
	}
	return vars, nil
}

func setEnvironment(ctx context.Context, c *Call, a setEnvironmentArgs) (EnvironmentSetResult, error) {
	if a.Name == "" || strings.ContainsAny(a.Name, "=\n") {
		return EnvironmentSetResult{}, expectedf("name must be a non-empty variable name without '=' or newlines")
	}
	target, err := a.envTarget()
	if err != nil {
		return EnvironmentSetResult{}, err
	}
	cmd := append(append(tmux.Command{"set-environment"}, target...), "--", a.Name, a.Value)
	if _, err := c.tmux.Run(ctx, c.Socket(a.SocketArgs), cmd); err != nil {
		return EnvironmentSetResult{}, notFoundAs(withoutValue(err, a.Value), "session", a.name())
	}
	return EnvironmentSetResult{Name: a.Name, Value: a.Value, Status: "set"}, nil
}

// hookCommands returns the show-hooks invocations for a scope, with "the
// current session" pinned as pinTarget explains. scope=server without a
// target reads both global trees (session and window hooks), as the
// reference does; tmux has no server hook tree of its own.
func (c *Call) hookCommands(ctx context.Context, sock tmux.Socket, a ScopeArgs, name string) ([]tmux.Command, string, error) {
	var tail []string
	if name != "" {
		tail = []string{"--", name}
	}
	flags, kind, err := a.flags()
	if err != nil {
		return nil, "", err
	}
	if str(a.Scope) == "server" {
		return []tmux.Command{
			append(tmux.Command{"show-hooks", "-g"}, tail...),
			append(tmux.Command{"show-hooks", "-gw"}, tail...),
		}, "", nil
	}
	if flags, err = c.pinTarget(ctx, sock, a, flags); err != nil {
		return nil, "", err
	}
	return []tmux.Command{append(append(tmux.Command{"show-hooks"}, flags...), tail...)}, kind, nil
}

func runHooks(ctx context.Context, c *Call, a ScopeArgs, sock tmux.Socket, name string) (HookListResult, error) {
	cmds, kind, err := c.hookCommands(ctx, sock, a, name)
	if err != nil {
		return HookListResult{}, err
	}
	outs, err := c.tmux.Run(ctx, sock, cmds...)
	if err != nil {
		var ce *tmux.CommandError
		if name != "" && errors.As(err, &ce) && strings.Contains(ce.Stderr, "too many arguments") {
			return HookListResult{Entries: []HookEntry{}}, nil // older tmux: the hook is unset
		}
		return HookListResult{}, optionError(err, "hook", name, kind, str(a.Target))
	}
	return HookListResult{Entries: parseHooks(outs...)}, nil
}

// parseHooks reads show-hooks lines: "name[i] command", "name command", or
// a bare "name" for an unset hook (skipped). Duplicates across the two
// global trees collapse; entries sort by name, then numeric index.
func parseHooks(outs ...[]byte) []HookEntry {
	type key struct {
		name string
		idx  int
	}
	seen := map[key]bool{}
	entries := []HookEntry{}
	for _, out := range outs {
		for _, line := range strings.Split(string(out), "\n") {
			k, cmd, ok := strings.Cut(line, " ")
			if !ok {
				continue
			}
			e := HookEntry{HookName: k, Command: cmd}
			kk := key{k, -1}
			if base, rest, ok := strings.Cut(k, "["); ok && strings.HasSuffix(rest, "]") {
				if n, err := strconv.Atoi(strings.TrimSuffix(rest, "]")); err == nil {
					e.HookName, e.Index, kk = base, &n, key{base, n}
				}
			}
			if seen[kk] {
				continue
			}
			seen[kk] = true
			entries = append(entries, e)
		}
	}
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		if a.HookName != b.HookName {
			return a.HookName < b.HookName
		}
		return idxOf(a) < idxOf(b)
	})
	return entries
}

func idxOf(e HookEntry) int {
	if e.Index == nil {
		return -1
	}
	return *e.Index
}

func showHooks(ctx context.Context, c *Call, a showHooksArgs) (HookListResult, error) {
	return runHooks(ctx, c, a.ScopeArgs, c.Socket(a.SocketArgs), "")
}

func showHook(ctx context.Context, c *Call, a showHookArgs) (HookListResult, error) {
	if err := checkName("hook_name", a.HookName); err != nil {
		return HookListResult{}, err
	}
	return runHooks(ctx, c, a.ScopeArgs, c.Socket(a.SocketArgs), a.HookName)
}
