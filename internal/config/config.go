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
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/scope"
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
	// Scope confines every caller that brings none of its own (stdio,
	// tokens without a scope field) to some sessions, in scope.Parse's
	// syntax; "" or "none" is no scope. Load checks it.
	Scope string

	// Confirm is which calls ask the person first (confirm.go); with
	// ConfirmFallbackAllow, a client that cannot be asked runs them
	// unasked instead of being refused (only when Confirm was set).
	Confirm              Confirm
	ConfirmFallbackAllow bool

	// HTTP holds the settings of serve --http; zero values are defaults.
	HTTP HTTP

	// Limits of each record_pane recording; zero: the defaults.
	RecordMaxBytes    int64
	RecordMaxDuration time.Duration

	// Remote tmux hosts (hosts.go); the local machine is always there too.
	Hosts      []Host
	SSHCommand []string // the ssh invocation for remote hosts; nil means "ssh"

	// From names where each setting came from, keyed by its flag name
	// (Setting.Flag): "--flag", the variable read (TMUX_MCP_* or the
	// reference's LIBTMUX_*), or "default". Load fills it; doctor shows it.
	From map[string]string
}

// HTTP is the configuration of the streamable HTTP daemon (serve --http).
type HTTP struct {
	Addr           string // host:port; empty: serve stdio
	Token          string // TMUX_MCP_HTTP_TOKEN: one bearer token (environment only: argv is visible to every user)
	TokensFile     string // TOKEN [NAME [TIER [SCOPE]]] per line
	AllowedOrigins []string
	IdleTimeout    time.Duration // stateful sessions idle this long are closed
	MaxSessions    int           // concurrent stateful sessions
	MaxInFlight    int           // concurrent requests per client
	TLSCert        string
	TLSKey         string
	InsecureRemote bool // allow a non-loopback bind without TLS

	// OAuth: when Issuer is set, JWTs from it are accepted as well.
	OAuthIssuer     string
	OAuthJWKS       string // file or URL
	OAuthAudience   string // empty: this server's /mcp URL
	OAuthScopeTiers map[string]Tier
	OAuthScope      string // the scope of OAuth callers (scope.Parse); "": Config.Scope's

	// Metrics is the host:port of the Prometheus listener (/metrics, no
	// token); empty: no metrics. MetricsInsecure allows one off loopback.
	Metrics         string
	MetricsInsecure bool
}

// Defaults of the HTTP settings.
const (
	DefaultIdleTimeout = 30 * time.Minute
	DefaultMaxSessions = 256
	DefaultMaxInFlight = 32
)

// Defaults of the recording limits (record-max-size, record-max-duration):
// an hour of a busy build log is a few MB; a pane that floods for hours is
// stopped before it fills a disk.
const (
	DefaultRecordMaxBytes    = 100 << 20
	DefaultRecordMaxDuration = 4 * time.Hour
)

// ParseSize reads a size in bytes: a whole number above 0, optionally
// followed by K, M or G (powers of 1024).
func ParseSize(v, name string) (int64, error) {
	v = strings.TrimSpace(v)
	mult := int64(1)
	if n := len(v); n > 0 {
		switch v[n-1] {
		case 'K', 'k':
			mult, v = 1<<10, v[:n-1]
		case 'M', 'm':
			mult, v = 1<<20, v[:n-1]
		case 'G', 'g':
			mult, v = 1<<30, v[:n-1]
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%w: %s must be a size above 0 in bytes, optionally with K, M or G (e.g. 100M)", ErrInvalid, name)
	}
	return n * mult, nil
}

// HTTPTokenEnv is the variable holding one bearer token for serve --http.
// It has no flag: a flag's value is visible to every user in ps.
const HTTPTokenEnv = "TMUX_MCP_HTTP_TOKEN"

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
	HTTP    bool // a setting of serve --http only (not offered to registries that launch stdio servers)
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
	{Flag: "scope", Env: "TMUX_MCP_SCOPE", Default: "none", Usage: "confine the agent to some sessions: own (those it created), sessions=NAME,$ID,PREFIX* or own,sessions=...; over HTTP, the scope of tokens that name none"},
	{Flag: "engine", Env: "TMUX_MCP_ENGINE", Default: "control", Usage: "how to reach tmux: control (one persistent control-mode client per server) or exec (a tmux process per call)"},
	{Flag: "prompts-as-tools", Env: "TMUX_MCP_PROMPTS_AS_TOOLS", Ref: "LIBTMUX_MCP_PROMPTS_AS_TOOLS", Default: "0", Usage: "add list_prompts and get_prompt as tools, for clients without MCP prompts (0 or 1)", Bool: true},
	{Flag: "http", Env: "TMUX_MCP_HTTP", Default: "off (stdio)", Usage: "serve streamable HTTP at this host:port, endpoint /mcp (e.g. 127.0.0.1:8765)", HTTP: true},
	{Flag: "tokens-file", Env: "TMUX_MCP_TOKENS_FILE", Default: "TMUX_MCP_HTTP_TOKEN, else a generated token", Usage: "bearer tokens, one per line: TOKEN [NAME [TIER [SCOPE]]]; the file must not be group/world-readable", HTTP: true},
	{Flag: "allowed-origins", Env: "TMUX_MCP_ALLOWED_ORIGINS", Default: "the server's own loopback origins", Usage: "comma-separated Origins a browser may call /mcp from; any other Origin gets 403", HTTP: true},
	{Flag: "session-idle-timeout", Env: "TMUX_MCP_SESSION_IDLE_TIMEOUT", Default: "30m", Usage: "close a stateful HTTP session idle this long (Go duration) and release its state", HTTP: true},
	{Flag: "max-sessions", Env: "TMUX_MCP_MAX_SESSIONS", Default: "256", Usage: "most concurrent stateful HTTP sessions and subscriptions/listen streams; more get 429", HTTP: true},
	{Flag: "max-inflight", Env: "TMUX_MCP_MAX_INFLIGHT", Default: "32", Usage: "most concurrent requests per HTTP client; more get 429", HTTP: true},
	{Flag: "tls-cert", Env: "TMUX_MCP_TLS_CERT", Default: "none", Usage: "TLS certificate file (PEM) for serve --http", HTTP: true},
	{Flag: "tls-key", Env: "TMUX_MCP_TLS_KEY", Default: "none", Usage: "TLS private key file (PEM) for serve --http", HTTP: true},
	{Flag: "insecure-remote", Env: "TMUX_MCP_INSECURE_REMOTE", Default: "0", Usage: "allow serve --http on a non-loopback address without TLS (tokens cross the network in clear)", Bool: true, HTTP: true},
	{Flag: "oauth-issuer", Env: "TMUX_MCP_OAUTH_ISSUER", Default: "none", Usage: "accept JWTs from this OAuth issuer and publish RFC 9728 metadata", HTTP: true},
	{Flag: "oauth-jwks", Env: "TMUX_MCP_OAUTH_JWKS", Default: "none", Usage: "JWKS file or URL verifying the issuer's JWTs", HTTP: true},
	{Flag: "oauth-audience", Env: "TMUX_MCP_OAUTH_AUDIENCE", Default: "this server's /mcp URL", Usage: "the aud a JWT must carry", HTTP: true},
	{Flag: "oauth-scope-tiers", Env: "TMUX_MCP_OAUTH_SCOPE_TIERS", Default: "tmux:read=readonly,tmux:write=mutating,tmux:admin=destructive", Usage: "comma-separated scope=tier pairs mapping JWT scopes to safety tiers", HTTP: true},
	{Flag: "oauth-session-scope", Env: "TMUX_MCP_OAUTH_SESSION_SCOPE", Default: "--scope's", Usage: "the sessions OAuth callers may reach, as --scope (own: each subject its own sessions)", HTTP: true},
	{Flag: "metrics", Env: "TMUX_MCP_METRICS", Default: "off", Usage: "serve Prometheus metrics at this host:port, path /metrics, without a token (serve --http only; e.g. 127.0.0.1:9464)", HTTP: true},
	{Flag: "metrics-insecure", Env: "TMUX_MCP_METRICS_INSECURE", Default: "0", Usage: "allow --metrics on a non-loopback address (the metrics carry no token: whoever reaches the address reads them)", Bool: true, HTTP: true},
	{Flag: "confirm", Env: "TMUX_MCP_CONFIRM", Default: "destructive if the client supports elicitation, else off", Usage: "ask the person (MCP elicitation) before these calls run: destructive, mutating or off"},
	{Flag: "confirm-fallback", Env: "TMUX_MCP_CONFIRM_FALLBACK", Default: "refuse", Usage: "with --confirm set, a client without elicitation: refuse the call, or allow it unasked"},
	{Flag: "record-max-size", Env: "TMUX_MCP_RECORD_MAX_SIZE", Default: "100M", Usage: "the largest a record_pane recording grows, in bytes (K, M or G suffix); it stops there with a marker"},
	{Flag: "record-max-duration", Env: "TMUX_MCP_RECORD_MAX_DURATION", Default: "4h", Usage: "the longest a record_pane recording runs (Go duration); it stops then with a marker"},
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
		case "scope":
			c.Scope, err = parseScope(v, src)
		case "engine":
			c.Engine, err = ParseEngine(v, src)
		case "prompts-as-tools":
			c.PromptsAsTools, err = ParseSwitch(v, src)
		case "http":
			c.HTTP.Addr = strings.TrimSpace(v)
		case "tokens-file":
			c.HTTP.TokensFile = v
		case "allowed-origins":
			c.HTTP.AllowedOrigins = SplitList(v)
		case "session-idle-timeout":
			c.HTTP.IdleTimeout, err = parsePositiveDuration(v, src)
		case "max-sessions":
			c.HTTP.MaxSessions, err = parsePositiveInt(v, src)
		case "max-inflight":
			c.HTTP.MaxInFlight, err = parsePositiveInt(v, src)
		case "tls-cert":
			c.HTTP.TLSCert = v
		case "tls-key":
			c.HTTP.TLSKey = v
		case "insecure-remote":
			c.HTTP.InsecureRemote, err = ParseSwitch(v, src)
		case "oauth-issuer":
			c.HTTP.OAuthIssuer = strings.TrimSpace(v)
		case "oauth-jwks":
			c.HTTP.OAuthJWKS = strings.TrimSpace(v)
		case "oauth-audience":
			c.HTTP.OAuthAudience = strings.TrimSpace(v)
		case "oauth-scope-tiers":
			c.HTTP.OAuthScopeTiers, err = parseScopeTiers(v, src)
		case "oauth-session-scope":
			c.HTTP.OAuthScope, err = parseScope(v, src)
		case "metrics":
			c.HTTP.Metrics = strings.TrimSpace(v)
		case "metrics-insecure":
			c.HTTP.MetricsInsecure, err = ParseSwitch(v, src)
		case "confirm":
			c.Confirm, err = ParseConfirm(v, src)
		case "confirm-fallback":
			var refuse bool
			refuse, err = ParseConfirmFallback(v, src)
			c.ConfirmFallbackAllow = !refuse
		case "record-max-size":
			c.RecordMaxBytes, err = ParseSize(v, src)
		case "record-max-duration":
			c.RecordMaxDuration, err = parsePositiveDuration(v, src)
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
	c.HTTP.Token = strings.TrimSpace(env(HTTPTokenEnv))
	if c.HTTP.IdleTimeout == 0 {
		c.HTTP.IdleTimeout = DefaultIdleTimeout
	}
	if c.HTTP.MaxSessions == 0 {
		c.HTTP.MaxSessions = DefaultMaxSessions
	}
	if c.HTTP.MaxInFlight == 0 {
		c.HTTP.MaxInFlight = DefaultMaxInFlight
	}
	if c.RecordMaxBytes == 0 {
		c.RecordMaxBytes = DefaultRecordMaxBytes
	}
	if c.RecordMaxDuration == 0 {
		c.RecordMaxDuration = DefaultRecordMaxDuration
	}
	c.Caller = ParseCaller(env("TMUX"), env("TMUX_PANE"))
	c.TmuxTmpdir = env("TMUX_TMPDIR")
	warns = append(warns, c.confirmWarnings()...)
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

// parsePositiveDuration reads a Go duration (30m, 1h) greater than zero.
func parsePositiveDuration(v, name string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%w: %s must be a positive duration such as 30m or 1h", ErrInvalid, name)
	}
	return d, nil
}

// parsePositiveInt reads a whole number greater than zero.
func parsePositiveInt(v, name string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%w: %s must be a whole number above 0", ErrInvalid, name)
	}
	return n, nil
}

// parseScope checks a scope setting (scope.Parse) and keeps it in its
// canonical form ("none" when it confines nothing, so that an explicit
// none is told from an unset setting); the error names the setting and the syntax, never the
// value.
func parseScope(v, name string) (string, error) {
	sc, err := scope.Parse(v)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrInvalid, name, err)
	}
	return sc.String(), nil
}

// parseScopeTiers reads scope=tier pairs ("tmux.read=readonly,tmux.write=mutating").
func parseScopeTiers(v, name string) (map[string]Tier, error) {
	m := map[string]Tier{}
	for i, pair := range SplitList(v) {
		scope, tier, ok := strings.Cut(pair, "=")
		t, tok := ParseTier(tier)
		if !ok || strings.TrimSpace(scope) == "" || !tok {
			return nil, fmt.Errorf("%w: %s: entry %d is not scope=tier (tier: readonly, mutating or destructive)", ErrInvalid, name, i+1)
		}
		m[strings.TrimSpace(scope)] = t
	}
	return m, nil
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
