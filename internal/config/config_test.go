package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) Getenv { return func(k string) string { return m[k] } }

func TestFromEnv(t *testing.T) {
	cases := []struct {
		name  string
		env   map[string]string
		check func(Config) bool
		warns int
	}{
		{"defaults", nil, func(c Config) bool {
			return c.Safety == Mutating && c.WaitMax == 30 && c.SuppressHistory && c.TmuxBin == "tmux"
		}, 0},
		{"reference names", map[string]string{"LIBTMUX_SOCKET": "s", "LIBTMUX_SOCKET_PATH": "/p", "LIBTMUX_TMUX_BIN": "/b",
			"LIBTMUX_SAFETY": "destructive", "LIBTMUX_MCP_WAIT_MAX_SECONDS": "5", "LIBTMUX_SUPPRESS_HISTORY": "0"},
			func(c Config) bool {
				return c.SocketName == "s" && c.SocketPath == "/p" && c.TmuxBin == "/b" && c.Safety == Destructive && c.WaitMax == 5 && !c.SuppressHistory
			}, 0},
		{"ours win", map[string]string{"LIBTMUX_SOCKET": "theirs", "TMUX_MCP_SOCKET": "ours"}, func(c Config) bool { return c.SocketName == "ours" }, 0},
		{"bad tier is readonly", map[string]string{"TMUX_MCP_SAFETY": "root"}, func(c Config) bool { return c.Safety == Readonly }, 1},
		{"tier is case-insensitive", map[string]string{"TMUX_MCP_SAFETY": "ReadOnly"}, func(c Config) bool { return c.Safety == Readonly }, 0},
		{"wait below floor", map[string]string{"TMUX_MCP_WAIT_MAX_SECONDS": "0.1"}, func(c Config) bool { return c.WaitMax == 1 }, 1},
		{"wait NaN", map[string]string{"TMUX_MCP_WAIT_MAX_SECONDS": "NaN"}, func(c Config) bool { return c.WaitMax == 30 }, 1},
		{"wait inf", map[string]string{"TMUX_MCP_WAIT_MAX_SECONDS": "+Inf"}, func(c Config) bool { return c.WaitMax == 30 }, 1},
		{"toolsets", map[string]string{"TMUX_MCP_TOOLSETS": " pane, ,server"}, func(c Config) bool {
			return strings.Join(c.Toolsets, "/") == "pane/server"
		}, 0},
		{"caller", map[string]string{"TMUX": "/tmp/tmux-0/default,123,4", "TMUX_PANE": "%7"}, func(c Config) bool {
			return c.Caller.SocketPath == "/tmp/tmux-0/default" && c.Caller.ServerPID == "123" && c.Caller.PaneID == "%7"
		}, 0},
		{"garbage caller pane", map[string]string{"TMUX_PANE": "%x"}, func(c Config) bool { return c.Caller.PaneID == "" && !c.Caller.InTmux() }, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, warns, err := FromEnv(envOf(c.env))
			if err != nil {
				t.Fatal(err)
			}
			if !c.check(cfg) {
				t.Errorf("config %+v", cfg)
			}
			if len(warns) != c.warns {
				t.Errorf("warnings %v, want %d", warns, c.warns)
			}
			for _, w := range warns {
				for _, v := range c.env {
					if v != "" && strings.Contains(string(w), v) && len(v) > 2 {
						t.Errorf("warning echoes value: %s", w)
					}
				}
			}
		})
	}
	_, _, err := FromEnv(envOf(map[string]string{"TMUX_MCP_SUPPRESS_HISTORY": "yes-secret"}))
	if !errors.Is(err, ErrInvalid) || strings.Contains(err.Error(), "yes-secret") {
		t.Errorf("suppress history: %v", err)
	}
}

// Flags win over both variables; From names each setting's source; every
// invalid entry is reported, by name, in one error.
func TestLoadSourcesAndErrors(t *testing.T) {
	env := envOf(map[string]string{"TMUX_MCP_SAFETY": "readonly", "LIBTMUX_SAFETY": "destructive", "LIBTMUX_MCP_WAIT_MAX_SECONDS": "7"})
	c, warns, err := Load(env, map[string]string{"safety": "mutating", "engine": "exec"})
	if err != nil || len(warns) != 0 {
		t.Fatal(err, warns)
	}
	want := map[string]string{"safety": "--safety", "engine": "--engine", "wait-max-seconds": "LIBTMUX_MCP_WAIT_MAX_SECONDS", "socket": "default", "prompts-as-tools": "default"}
	for k, v := range want {
		if c.From[k] != v {
			t.Errorf("From[%s] = %q, want %q", k, c.From[k], v)
		}
	}
	if c.Safety != Mutating || c.Engine != "exec" || c.WaitMax != 7 {
		t.Errorf("config %+v", c)
	}
	if len(c.From) != len(Settings) {
		t.Errorf("From has %d entries for %d settings", len(c.From), len(Settings))
	}

	_, _, err = Load(envOf(map[string]string{"TMUX_MCP_ENGINE": "x1", "LIBTMUX_MCP_PROMPTS_AS_TOOLS": "true"}), map[string]string{"suppress-history": "x2"})
	for _, name := range []string{"TMUX_MCP_ENGINE must be", "LIBTMUX_MCP_PROMPTS_AS_TOOLS must be 0 or 1", "--suppress-history must be 0 or 1"} {
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), name) {
			t.Errorf("error %v lacks %q", err, name)
		}
	}

	c = Config{Toolsets: []string{"pane", "nope", "server", "zzz"}, From: map[string]string{"toolsets": "--toolsets"}}
	err = c.CheckToolsets([]string{"pane", "server"})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "--toolsets: entry 2 of 4 is not a toolset (known: pane, server)") ||
		!strings.Contains(err.Error(), "entry 4 of 4") || strings.Contains(err.Error(), "nope") {
		t.Errorf("CheckToolsets: %v", err)
	}
}

// TestScopeSettings: --scope and --oauth-session-scope are checked at
// load, kept in canonical form (an explicit none stays "none"), and a bad
// value stops start-up naming the setting, never the value.
func TestScopeSettings(t *testing.T) {
	c, _, err := Load(envOf(map[string]string{"TMUX_MCP_SCOPE": " own,sessions=ci-*, notes "}), map[string]string{"oauth-session-scope": "none"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Scope != "own,sessions=notes,ci-*" || c.HTTP.OAuthScope != "none" || c.From["scope"] != "TMUX_MCP_SCOPE" {
		t.Errorf("scope %q, oauth %q, from %q", c.Scope, c.HTTP.OAuthScope, c.From["scope"])
	}
	c, _, err = Load(envOf(nil), nil)
	if err != nil || c.Scope != "" || c.HTTP.OAuthScope != "" {
		t.Errorf("default: %q %q %v", c.Scope, c.HTTP.OAuthScope, err)
	}
	_, _, err = Load(envOf(map[string]string{"TMUX_MCP_SCOPE": "sessions=secret.name"}), map[string]string{"oauth-session-scope": "everything-secret"})
	for _, want := range []string{"TMUX_MCP_SCOPE: a scope is own", "--oauth-session-scope: a scope is own"} {
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "secret") {
		t.Errorf("error echoes a value: %v", err)
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1", 1, true},
		{" 4096 ", 4096, true},
		{"64K", 64 << 10, true},
		{"100M", 100 << 20, true},
		{"100m", 100 << 20, true},
		{"2G", 2 << 30, true},
		{"0", 0, false},
		{"-5M", 0, false},
		{"M", 0, false},
		{"1.5M", 0, false},
		{"10T", 0, false},
		{"99999999999999999G", 0, false},
	}
	for _, tc := range tests {
		got, err := ParseSize(tc.in, "TMUX_MCP_RECORD_MAX_SIZE")
		if tc.ok && (err != nil || got != tc.want) || !tc.ok && (err == nil || !errors.Is(err, ErrInvalid)) {
			t.Errorf("ParseSize(%q) = %d, %v", tc.in, got, err)
		}
		if err != nil && len(tc.in) > 1 && strings.Contains(err.Error(), tc.in) {
			t.Errorf("the error echoes the value: %v", err)
		}
	}
}

// The recording limits: defaults when unset, the variables or flags when
// set, and a bad value is an error naming its source.
func TestRecordLimits(t *testing.T) {
	env := func(m map[string]string) Getenv { return func(k string) string { return m[k] } }
	c, _, err := Load(env(nil), nil)
	if err != nil || c.RecordMaxBytes != DefaultRecordMaxBytes || c.RecordMaxDuration != DefaultRecordMaxDuration {
		t.Errorf("defaults: %d %v %v", c.RecordMaxBytes, c.RecordMaxDuration, err)
	}
	c, _, err = Load(env(map[string]string{"TMUX_MCP_RECORD_MAX_SIZE": "1M", "TMUX_MCP_RECORD_MAX_DURATION": "90s"}), nil)
	if err != nil || c.RecordMaxBytes != 1<<20 || c.RecordMaxDuration != 90*time.Second {
		t.Errorf("from the environment: %d %v %v", c.RecordMaxBytes, c.RecordMaxDuration, err)
	}
	c, _, err = Load(env(map[string]string{"TMUX_MCP_RECORD_MAX_SIZE": "1M"}), map[string]string{"record-max-size": "2K", "record-max-duration": "1h"})
	if err != nil || c.RecordMaxBytes != 2<<10 || c.RecordMaxDuration != time.Hour {
		t.Errorf("flags win: %d %v %v", c.RecordMaxBytes, c.RecordMaxDuration, err)
	}
	_, _, err = Load(env(map[string]string{"TMUX_MCP_RECORD_MAX_SIZE": "lots", "TMUX_MCP_RECORD_MAX_DURATION": "-1s"}), nil)
	if err == nil || !strings.Contains(err.Error(), "TMUX_MCP_RECORD_MAX_SIZE") || !strings.Contains(err.Error(), "TMUX_MCP_RECORD_MAX_DURATION") {
		t.Errorf("bad values: %v", err)
	}
}
