// Package config turns flags and environment into the server's settings.
// Every variable has our name (TMUX_MCP_*) and, where the reference server
// had one, falls back to the reference's name (LIBTMUX_*), so existing client
// configurations keep working. Invalid values fail closed, and no message
// ever repeats a value, since environment blocks often carry secrets.
package config

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// Tier is a safety tier. A tool is visible when its tier is at most the
// configured one. The zero value is deliberately invalid so that a tool that
// forgot to declare its tier cannot register.
type Tier int

const (
	Readonly Tier = iota + 1
	Mutating
	Destructive
)

func (t Tier) String() string {
	switch t {
	case Readonly:
		return "readonly"
	case Mutating:
		return "mutating"
	case Destructive:
		return "destructive"
	}
	return "unset"
}

// ParseTier reads a tier name.
func ParseTier(s string) (Tier, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "readonly":
		return Readonly, true
	case "mutating":
		return Mutating, true
	case "destructive":
		return Destructive, true
	}
	return 0, false
}

// ParseSafety reads a safety setting named name (an environment variable or
// a flag). Anything but a tier name fails closed to readonly, with a
// warning.
func ParseSafety(v, name string) (Tier, Warning) {
	if t, ok := ParseTier(v); ok {
		return t, ""
	}
	return Readonly, Warning(name + " is not one of readonly, mutating, destructive; using readonly")
}

// ParseEngine reads an engine setting: control or exec. The reference has
// no such setting, so nothing is kept compatible by guessing: anything else
// stops start-up.
func ParseEngine(v, name string) (string, error) {
	if v == "control" || v == "exec" {
		return v, nil
	}
	return "", fmt.Errorf("%w: %s must be control or exec", ErrInvalid, name)
}

// ParseSwitch reads a 0/1 setting; anything else is an error, since
// guessing which of two behaviours was meant is worse than not starting.
func ParseSwitch(v, name string) (bool, error) {
	switch strings.TrimSpace(v) {
	case "1":
		return true, nil
	case "0":
		return false, nil
	}
	return false, fmt.Errorf("%w: %s must be 0 or 1", ErrInvalid, name)
}

// Wait ceiling bounds, in seconds (contract 5.1).
const (
	DefaultWaitMax = 30.0
	MinWaitMax     = 1.0
	MaxWaitMax     = 120.0
)

// Caller is where this process runs when it was started inside tmux, read
// from TMUX ("socket,pid,session") and TMUX_PANE ("%N").
type Caller struct {
	SocketPath string // empty when TMUX is unset
	ServerPID  string
	PaneID     string // empty when TMUX_PANE is unset
}

// InTmux reports whether either variable was set.
func (c Caller) InTmux() bool { return c.SocketPath != "" || c.PaneID != "" }

// ParseCaller reads the caller identity, tolerating garbage.
func ParseCaller(tmuxVar, paneVar string) Caller {
	var c Caller
	if tmuxVar != "" {
		parts := strings.SplitN(tmuxVar, ",", 3)
		c.SocketPath = parts[0]
		if len(parts) > 1 {
			c.ServerPID = parts[1]
		}
	}
	if p := strings.TrimSpace(paneVar); len(p) > 1 && p[0] == '%' {
		if _, err := strconv.Atoi(p[1:]); err == nil {
			c.PaneID = p
		}
	}
	return c
}

// Config is the effective configuration.
type Config struct {
	SocketName      string
	SocketPath      string
	TmuxBin         string
	Safety          Tier
	WaitMax         float64 // seconds, clamped to [MinWaitMax, MaxWaitMax]
	SuppressHistory bool
	AuditLog        string
	Toolsets        []string // empty: all
	Caller          Caller
	TmuxTmpdir      string
	PromptsAsTools  bool   // add list_prompts and get_prompt as tools
	Engine          string // how tmux is reached: "control" (persistent control-mode client) or "exec"

	// Remote tmux hosts (hosts.go); the local machine is always there too.
	Hosts      []Host
	SSHCommand []string // the ssh invocation for remote hosts; nil means "ssh"

	// From names where each setting came from, keyed by its flag name
	// (Setting.Flag): "--flag", the variable read (TMUX_MCP_* or the
	// reference's LIBTMUX_*), or "default". Load fills it; doctor shows it.
	From map[string]string
}

// Setting is one configuration entry: its flag, its variable, the
// reference server's variable read when ours is unset, and its default as
// help shows it. Settings is the one list the CLI's flags, its help, doctor
// and the README's table follow.
type Setting struct {
	Flag    string // flag name without dashes
	Env     string // our variable
	Ref     string // the reference's variable, or ""
	Default string // as shown to a user
	Usage   string
	Bool    bool // a switch: --flag alone turns it on
}

// Settings lists every setting, in the order help and doctor show them.
var Settings = []Setting{
	{Flag: "socket", Env: "TMUX_MCP_SOCKET", Ref: "LIBTMUX_SOCKET", Default: "tmux's default", Usage: "tmux socket name (tmux -L)"},
	{Flag: "socket-path", Env: "TMUX_MCP_SOCKET_PATH", Ref: "LIBTMUX_SOCKET_PATH", Default: "none", Usage: "tmux socket path (tmux -S); wins over --socket"},
	{Flag: "tmux-bin", Env: "TMUX_MCP_TMUX_BIN", Ref: "LIBTMUX_TMUX_BIN", Default: "tmux", Usage: "tmux binary"},
	{Flag: "safety", Env: "TMUX_MCP_SAFETY", Ref: "LIBTMUX_SAFETY", Default: "mutating", Usage: "safety tier: readonly, mutating or destructive"},
	{Flag: "wait-max-seconds", Env: "TMUX_MCP_WAIT_MAX_SECONDS", Ref: "LIBTMUX_MCP_WAIT_MAX_SECONDS", Default: "30", Usage: "ceiling for waits, in seconds, 1 to 120"},
	{Flag: "suppress-history", Env: "TMUX_MCP_SUPPRESS_HISTORY", Ref: "LIBTMUX_SUPPRESS_HISTORY", Default: "1", Usage: "default of run_command's suppress_history: 0 or 1"},
	{Flag: "audit-log", Env: "TMUX_MCP_AUDIT_LOG", Default: "stderr", Usage: "append the audit log to this file"},
	{Flag: "toolsets", Env: "TMUX_MCP_TOOLSETS", Default: "all", Usage: "comma-separated toolsets to expose"},
	{Flag: "engine", Env: "TMUX_MCP_ENGINE", Default: "control", Usage: "how to reach tmux: control (one persistent control-mode client per server) or exec (a tmux process per call)"},
	{Flag: "prompts-as-tools", Env: "TMUX_MCP_PROMPTS_AS_TOOLS", Ref: "LIBTMUX_MCP_PROMPTS_AS_TOOLS", Default: "0", Usage: "add list_prompts and get_prompt as tools, for clients without MCP prompts (0 or 1)", Bool: true},
	{Flag: "hosts", Env: "TMUX_MCP_HOSTS", Default: "none", Usage: "remote tmux hosts over ssh: comma-separated name=destination[?tmux=BIN&socket=NAME]"},
	{Flag: "ssh-command", Env: "TMUX_MCP_SSH_COMMAND", Default: "ssh", Usage: "the ssh invocation for remote hosts, split into words without a shell (e.g. \"ssh -F file\")"},
}

// Warning is a problem with a setting that was handled by falling back.
type Warning string

// ErrInvalid is returned for a setting that must stop start-up.
var ErrInvalid = errors.New("invalid configuration")

// Getenv is how the loader reads the environment (os.Getenv in production).
type Getenv func(string) string

// lookup returns our variable, else the reference's, and which name was used.
func lookup(env Getenv, ours, theirs string) (string, string) {
	if v := env(ours); v != "" {
		return v, ours
	}
	if theirs != "" {
		if v := env(theirs); v != "" {
			return v, theirs
		}
	}
	return "", ours
}

// FromEnv builds the configuration from the environment alone.
func FromEnv(env Getenv) (Config, []Warning, error) { return Load(env, nil) }

// Load builds the configuration: for each setting the flag when it was
// given (flags holds only those, keyed by Setting.Flag), else our variable,
// else the reference's, else the default. Invalid values are handled one
// way whatever their source: the safety tier and the wait ceiling warn and
// fall back, as the reference does; every other invalid value is an error
// wrapping ErrInvalid, all of them joined, each naming its flag or
// variable (never the value: environment blocks often carry secrets).
func Load(env Getenv, flags map[string]string) (Config, []Warning, error) {
	var warns []Warning
	var errs []error
	c := Config{Safety: Mutating, WaitMax: DefaultWaitMax, SuppressHistory: true, TmuxBin: "tmux", Engine: "control",
		From: map[string]string{}}
	for _, st := range Settings {
		v, src := "", "default"
		if fv, ok := flags[st.Flag]; ok {
			v, src = fv, "--"+st.Flag
		} else if ev, name := lookup(env, st.Env, st.Ref); ev != "" {
			v, src = ev, name
		}
		c.From[st.Flag] = src
		if src == "default" {
			continue
		}
		var w Warning
		var err error
		switch st.Flag {
		case "socket":
			c.SocketName = v
		case "socket-path":
			c.SocketPath = v
		case "tmux-bin":
			if v != "" {
				c.TmuxBin = v
			}
		case "safety":
			c.Safety, w = ParseSafety(v, src)
		case "wait-max-seconds":
			c.WaitMax, w = ParseWaitMax(v, src)
		case "suppress-history":
			c.SuppressHistory, err = ParseSwitch(v, src)
		case "audit-log":
			c.AuditLog = v
		case "toolsets":
			c.Toolsets = SplitList(v)
		case "engine":
			c.Engine, err = ParseEngine(v, src)
		case "prompts-as-tools":
			c.PromptsAsTools, err = ParseSwitch(v, src)
		case "hosts":
			c.Hosts, err = ParseHosts(v, src)
		case "ssh-command":
			c.SSHCommand, err = ParseSSHCommand(v, src)
		}
		if w != "" {
			warns = append(warns, w)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	c.Caller = ParseCaller(env("TMUX"), env("TMUX_PANE"))
	c.TmuxTmpdir = env("TMUX_TMPDIR")
	return c, warns, errors.Join(errs...)
}

// CheckToolsets reports every entry of the toolsets setting that is not in
// known, by position (the first entry is 1), never by value.
func (c Config) CheckToolsets(known []string) error {
	var errs []error
	for i, ts := range c.Toolsets {
		if !slices.Contains(known, ts) {
			errs = append(errs, fmt.Errorf("%w: %s: entry %d of %d is not a toolset (known: %s)",
				ErrInvalid, c.source("toolsets"), i+1, len(c.Toolsets), strings.Join(known, ", ")))
		}
	}
	return errors.Join(errs...)
}

// source names where a setting came from, for messages: the flag or
// variable that set it, else its variable (a Config built without Load, or
// a setting left at its default, is named by the variable that would set it).
func (c Config) source(flag string) string {
	if s := c.From[flag]; s != "" && s != "default" {
		return s
	}
	for _, st := range Settings {
		if st.Flag == flag {
			return st.Env
		}
	}
	return flag
}

// ParseWaitMax parses a wait ceiling: non-numeric or non-finite falls back to
// the default, out-of-range is clamped; both warn (clamp, never reject).
func ParseWaitMax(v, name string) (float64, Warning) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return DefaultWaitMax, Warning(fmt.Sprintf("%s is not a finite number; using %g", name, DefaultWaitMax))
	}
	if f < MinWaitMax {
		return MinWaitMax, Warning(fmt.Sprintf("%s is below %g; clamped", name, MinWaitMax))
	}
	if f > MaxWaitMax {
		return MaxWaitMax, Warning(fmt.Sprintf("%s is above %g; clamped", name, MaxWaitMax))
	}
	return f, ""
}

// SplitList splits a comma-separated list, dropping blanks.
func SplitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// SocketNameSource names where SocketName came from (TMUX_MCP_SOCKET
// unless a loader said otherwise).
func (c Config) SocketNameSource() string { return c.source("socket") }

// SocketPathSource names where SocketPath came from.
func (c Config) SocketPathSource() string { return c.source("socket-path") }

// CheckSocket stops start-up on a configured socket that tmux must not be
// given (tmux.CheckSocketName, tmux.CheckSocketPath): a server started on
// such a path replaces whatever file is there. Both settings are checked,
// though the path wins when both are set. The message names the variable or
// flag and the rule, not the value. Tool calls check again, since the file
// system changes after start-up.
func (c Config) CheckSocket() error {
	if c.SocketName != "" {
		if err := tmux.CheckSocketName(c.SocketName); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrInvalid, c.SocketNameSource(), err)
		}
		if c.SocketPath == "" {
			if err := tmux.CheckSocketInDir(c.SocketDir(), c.SocketName); err != nil {
				return fmt.Errorf("%w: %s: %w", ErrInvalid, c.SocketNameSource(), err)
			}
		}
	}
	if c.SocketPath != "" {
		if _, err := tmux.CheckSocketPath(c.SocketPath); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrInvalid, c.SocketPathSource(), err)
		}
	}
	return nil
}

// SocketDir is where tmux keeps sockets for this user: $TMUX_TMPDIR (or
// /tmp) plus tmux-<euid>.
func (c Config) SocketDir() string {
	dir := c.TmuxTmpdir
	if dir == "" {
		dir = "/tmp"
	}
	return filepath.Join(dir, fmt.Sprintf("tmux-%d", os.Geteuid()))
}
