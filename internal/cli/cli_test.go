package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

func run(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, strings.NewReader(""), &out, &errb, func(k string) string { return env[k] })
	return code, out.String(), errb.String()
}

// The command line as a Go user expects it: help on stdout with exit 0,
// usage errors on stderr with exit 2, nothing silently ignored.
func TestCommandLine(t *testing.T) {
	cases := []struct {
		name     string
		env      map[string]string
		args     []string
		wantCode int
		wantOut  []string // each must appear on stdout
		wantErr  []string // each must appear on stderr
		notOut   []string // none may appear on stdout
		quietErr bool     // stderr must be empty
		emptyOut bool     // stdout must be empty
	}{
		{name: "--help", args: []string{"--help"}, wantCode: 0, quietErr: true,
			wantOut: []string{"tmux-mcp [flags] call [--raw] [--audit] TOOL", "tools [--stats]", "doctor", "docs [--check]", "[serve]"}},
		{name: "-h", args: []string{"-h"}, wantCode: 0, quietErr: true, wantOut: []string{"--safety VALUE"}},
		{name: "help subcommand", args: []string{"help"}, wantCode: 0, quietErr: true, wantOut: []string{"--engine VALUE"}},
		{name: "subcommand -h", args: []string{"tools", "-h"}, wantCode: 0, quietErr: true, wantOut: []string{"tools [--stats]"}},
		{name: "help names every flag with default and variables", args: []string{"--help"}, wantCode: 0, quietErr: true,
			wantOut: []string{
				"--socket VALUE", "default: tmux's default; environment: TMUX_MCP_SOCKET, else LIBTMUX_SOCKET",
				"--socket-path VALUE", "TMUX_MCP_SOCKET_PATH, else LIBTMUX_SOCKET_PATH",
				"--tmux-bin VALUE", "default: tmux; environment: TMUX_MCP_TMUX_BIN, else LIBTMUX_TMUX_BIN",
				"--safety VALUE", "default: mutating; environment: TMUX_MCP_SAFETY, else LIBTMUX_SAFETY",
				"--wait-max-seconds VALUE", "default: 30; environment: TMUX_MCP_WAIT_MAX_SECONDS, else LIBTMUX_MCP_WAIT_MAX_SECONDS",
				"--suppress-history VALUE", "default: 1; environment: TMUX_MCP_SUPPRESS_HISTORY, else LIBTMUX_SUPPRESS_HISTORY",
				"--audit-log VALUE", "default: stderr; environment: TMUX_MCP_AUDIT_LOG",
				"--toolsets VALUE", "default: all; environment: TMUX_MCP_TOOLSETS", "server, session, window, pane",
				"--engine VALUE", "default: control; environment: TMUX_MCP_ENGINE",
				"--prompts-as-tools ", "default: 0; environment: TMUX_MCP_PROMPTS_AS_TOOLS, else LIBTMUX_MCP_PROMPTS_AS_TOOLS",
				"--version", "-h, --help",
			}},
		{name: "--version", args: []string{"--version"}, wantCode: 0, quietErr: true, wantOut: []string{"tmux-mcp "}},
		{name: "unknown flag", args: []string{"--frobnicate"}, wantCode: 2, emptyOut: true, wantErr: []string{"flag provided but not defined: -frobnicate", "tmux-mcp --help"}},
		{name: "unknown subcommand", args: []string{"frobnicate"}, wantCode: 2, emptyOut: true, wantErr: []string{`unknown subcommand \"frobnicate\"`}},
		{name: "unknown subcommand flag", args: []string{"tools", "--json"}, wantCode: 2, emptyOut: true, wantErr: []string{"tools: flag provided but not defined: -json"}},
		{name: "extra argument to doctor", args: []string{"doctor", "extra"}, wantCode: 2, emptyOut: true, wantErr: []string{"doctor takes no arguments, got 1"}},
		{name: "tools --stats compares with the reference", env: map[string]string{"TMUX_MCP_SAFETY": "destructive"}, args: []string{"tools", "--stats"}, wantCode: 0,
			wantOut: []string{"x the reference", "projected with a host argument on every tool", "(budget 0.60x)", "The reference figure is 72441 bytes"}},
		{name: "extra argument to tools", args: []string{"tools", "--stats", "extra"}, wantCode: 2, emptyOut: true, wantErr: []string{"tools takes no arguments"}},
		{name: "extra argument to serve", args: []string{"serve", "x"}, wantCode: 2, emptyOut: true, wantErr: []string{"serve takes no arguments"}},
		{name: "extra argument to docs", args: []string{"docs", "x"}, wantCode: 2, emptyOut: true, wantErr: []string{"docs takes no arguments"}},
		{name: "call without a tool", args: []string{"call"}, wantCode: 2, emptyOut: true, wantErr: []string{"call needs a tool name"}},
		{name: "call with too many arguments", args: []string{"call", "list_sessions", "{}", "x"}, wantCode: 2, emptyOut: true, wantErr: []string{"call takes at most 2 arguments, got 3"}},
		{name: "call with bad JSON", args: []string{"call", "list_sessions", "{not json"}, wantCode: 2, emptyOut: true, wantErr: []string{"not valid JSON"}},
		{name: "bad --prompts-as-tools", args: []string{"--prompts-as-tools=maybe", "tools"}, wantCode: 2, emptyOut: true, wantErr: []string{"--prompts-as-tools", "must be 0 or 1"}},
		{name: "--prompts-as-tools adds the prompt tools", args: []string{"--prompts-as-tools", "tools"}, wantCode: 0, wantOut: []string{"list_prompts", "get_prompt"}},
		{name: "TMUX_MCP_PROMPTS_AS_TOOLS=1", env: map[string]string{"TMUX_MCP_PROMPTS_AS_TOOLS": "1"}, args: []string{"tools"}, wantCode: 0, wantOut: []string{"list_prompts"}},
		{name: "flag overrides TMUX_MCP_PROMPTS_AS_TOOLS", env: map[string]string{"TMUX_MCP_PROMPTS_AS_TOOLS": "1"}, args: []string{"--prompts-as-tools=false", "tools"}, wantCode: 0, notOut: []string{"list_prompts"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := run(t, c.env, c.args...)
			if code != c.wantCode {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.wantCode, out, errOut)
			}
			for _, w := range c.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range c.notOut {
				if strings.Contains(out, w) {
					t.Errorf("stdout has %q:\n%s", w, out)
				}
			}
			for _, w := range c.wantErr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if c.quietErr && errOut != "" {
				t.Errorf("stderr not empty: %q", errOut)
			}
			if c.emptyOut && out != "" {
				t.Errorf("stdout not empty: %q", out)
			}
		})
	}
}

func TestToolsSubcommandPerTier(t *testing.T) {
	counts := map[string]int{}
	for _, tier := range []string{"readonly", "mutating", "destructive"} {
		code, out, _ := run(t, map[string]string{"TMUX_MCP_SAFETY": tier}, "tools")
		if code != 0 || !strings.Contains(out, "tools visible at the "+tier+" tier") {
			t.Fatalf("tools at %s: %d %q", tier, code, out)
		}
		counts[tier] = strings.Count(out, "\n") - 3
		if tier == "readonly" && (strings.Contains(out, " mutating ") || strings.Contains(out, " destructive ")) {
			t.Errorf("readonly lists higher tiers:\n%s", out)
		}
	}
	if !(counts["readonly"] <= counts["mutating"] && counts["mutating"] <= counts["destructive"]) {
		t.Errorf("tool counts not monotonic: %v", counts)
	}
}

// Invalid settings fail closed and never echo the value.
func TestInvalidConfiguration(t *testing.T) {
	secret := "s3cr3t-value"
	cases := []struct {
		name     string
		env      map[string]string
		args     []string
		wantCode int
		want     string
	}{
		{"bad tier falls back to readonly", map[string]string{"TMUX_MCP_SAFETY": secret}, []string{"tools"}, 0, "readonly tier"},
		{"reference tier name", map[string]string{"LIBTMUX_SAFETY": "destructive"}, []string{"tools"}, 0, "destructive tier"},
		{"ours wins over reference", map[string]string{"LIBTMUX_SAFETY": "destructive", "TMUX_MCP_SAFETY": "readonly"}, []string{"tools"}, 0, "readonly tier"},
		{"bad flag tier", nil, []string{"--safety", secret, "tools"}, 0, "readonly tier"},
		{"bad suppress-history aborts", map[string]string{"LIBTMUX_SUPPRESS_HISTORY": secret}, []string{"tools"}, 2, "must be 0 or 1"},
		{"bad wait ceiling warns", map[string]string{"TMUX_MCP_WAIT_MAX_SECONDS": secret}, []string{"doctor"}, -1, "wait ceiling:    30s"},
		{"wait ceiling clamped", map[string]string{"TMUX_MCP_WAIT_MAX_SECONDS": "1000"}, []string{"doctor"}, -1, "wait ceiling:    120s"},
		{"unknown toolset names its entry", map[string]string{"TMUX_MCP_TOOLSETS": "pane," + secret}, []string{"tools"}, 2, "TMUX_MCP_TOOLSETS: entry 2 of 2 is not a toolset (known: server, session,"},
		{"unknown toolset flag", nil, []string{"--toolsets", secret + ",pane", "tools"}, 2, "--toolsets: entry 1 of 2 is not a toolset"},
		{"bad engine stops", map[string]string{"TMUX_MCP_ENGINE": secret}, []string{"tools"}, 2, "TMUX_MCP_ENGINE must be control or exec"},
		{"bad engine flag stops", nil, []string{"--engine", secret, "tools"}, 2, "--engine must be control or exec"},
		{"bad prompts-as-tools stops", map[string]string{"LIBTMUX_MCP_PROMPTS_AS_TOOLS": secret}, []string{"tools"}, 2, "LIBTMUX_MCP_PROMPTS_AS_TOOLS must be 0 or 1"},
		{"bad suppress-history flag stops", nil, []string{"--suppress-history", secret, "tools"}, 2, "--suppress-history must be 0 or 1"},
		{"bad tier warns naming the reference variable", map[string]string{"LIBTMUX_SAFETY": secret}, []string{"tools"}, 0, "LIBTMUX_SAFETY is not one of readonly"},
		{"bad wait flag warns", nil, []string{"--wait-max-seconds", secret, "doctor"}, -1, "--wait-max-seconds is not a finite number; using 30"},
		{"every bad entry is named", map[string]string{"TMUX_MCP_ENGINE": secret, "TMUX_MCP_SUPPRESS_HISTORY": secret}, []string{"tools"}, 2, "TMUX_MCP_SUPPRESS_HISTORY must be 0 or 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := run(t, c.env, c.args...)
			if c.wantCode >= 0 && code != c.wantCode {
				t.Errorf("exit %d, want %d (%s)", code, c.wantCode, errOut)
			}
			if !strings.Contains(out+errOut, c.want) {
				t.Errorf("output lacks %q:\n%s\n%s", c.want, out, errOut)
			}
			if strings.Contains(out+errOut, secret) {
				t.Errorf("a value was echoed:\n%s\n%s", out, errOut)
			}
			if c.wantCode == 2 && out != "" {
				t.Errorf("stdout not empty on a configuration error: %q", out)
			}
		})
	}
}

func TestCallSubcommand(t *testing.T) {
	ts := tmuxtest.New(t)
	env := map[string]string{"TMUX_MCP_SOCKET": ts.Socket.Name, "TMUX_MCP_TMUX_BIN": ts.Bin}
	// By default: the structured result alone, and nothing on stderr.
	code, out, errOut := run(t, env, "call", "get_pane_info", `{"pane_id":"%0"}`)
	if code != 0 || errOut != "" {
		t.Fatalf("call: %d %q", code, errOut)
	}
	var info map[string]any
	if err := json.Unmarshal([]byte(out), &info); err != nil || info["pane_id"] != "%0" || info["structuredContent"] != nil {
		t.Errorf("call output is not the structured result: %v %s", err, out)
	}
	// --raw: the whole MCP result.
	code, out, _ = run(t, env, "call", "--raw", "get_pane_info", `{"pane_id":"%0"}`)
	var res struct {
		Structured map[string]any `json:"structuredContent"`
		Content    []any          `json:"content"`
	}
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || res.Structured["pane_id"] != "%0" || len(res.Content) == 0 {
		t.Errorf("call --raw: %d %v %s", code, err, out)
	}
	// --audit: the audit line, JSON, on stderr; and every stderr line is JSON.
	code, _, errOut = run(t, map[string]string{"TMUX_MCP_SOCKET": ts.Socket.Name, "TMUX_MCP_TMUX_BIN": ts.Bin, "TMUX_MCP_SAFETY": "bogus"},
		"call", "--audit", "get_pane_info", `{"pane_id":"%0"}`)
	if code != 0 || !strings.Contains(errOut, `"tool":"get_pane_info"`) {
		t.Errorf("call --audit: %d %q", code, errOut)
	}
	assertJSONLines(t, errOut, 2)
	// A tool error: the whole result, with its type, exit 1.
	code, out, _ = run(t, env, "call", "get_pane_info", `{"pane_id":"%42"}`)
	if code != 1 || !strings.Contains(out, `"error_type": "PaneNotFound"`) || !strings.Contains(out, "Pane not found") {
		t.Errorf("tool error: %d %s", code, out)
	}
	// A tool hidden by the tier is refused through the same middleware.
	code, out, _ = run(t, map[string]string{"TMUX_MCP_SOCKET": ts.Socket.Name, "TMUX_MCP_SAFETY": "readonly"}, "call", "get_pane_info", `{}`)
	if code != 0 {
		t.Errorf("readonly call of a readonly tool: %d %s", code, out)
	}
}

// assertJSONLines checks that every line of s is a JSON object and that
// there are at least min of them.
func assertJSONLines(t *testing.T, s string, min int) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if len(lines) < min {
		t.Errorf("%d stderr lines, want at least %d: %q", len(lines), min, s)
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Errorf("stderr line is not JSON: %q", l)
		}
	}
}

// Serving, stderr carries the log and the audit lines in one format: JSON.
func TestServeStderrIsJSON(t *testing.T) {
	ts := tmuxtest.New(t)
	env := map[string]string{"TMUX_MCP_SOCKET": ts.Socket.Name, "TMUX_MCP_TMUX_BIN": ts.Bin, "LIBTMUX_SAFETY": "bogus"}
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_pane_info","arguments":{"pane_id":"%0"}}}
`
	var out, errb bytes.Buffer
	code := Main(context.Background(), nil, strings.NewReader(in), &out, &errb, func(k string) string { return env[k] })
	if code != 0 || !strings.Contains(out.String(), `"id":2`) {
		t.Fatalf("serve: %d %s", code, out.String())
	}
	if !strings.Contains(errb.String(), `"tool":"get_pane_info"`) || !strings.Contains(errb.String(), "LIBTMUX_SAFETY is not one of") {
		t.Errorf("stderr lacks the warning or the audit line: %s", errb.String())
	}
	assertJSONLines(t, errb.String(), 2)
}

func TestDoctor(t *testing.T) {
	ts := tmuxtest.New(t)
	env := map[string]string{"TMUX_MCP_SOCKET": ts.Socket.Name, "TMUX_MCP_TMUX_BIN": ts.Bin,
		"TMUX": ts.SocketPath() + ",123,0", "TMUX_PANE": "%0"}
	code, out, _ := run(t, env, "doctor")
	for _, want := range []string{"tmux 3.", "running (pid", "1 session(s)", "inside tmux: pane %0", "safety:          mutating (from default)", "claude mcp add tmux",
		"(from TMUX_MCP_SOCKET)", "from TMUX_MCP_TMUX_BIN)", "engine:          control (from default)"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	if code != 0 {
		t.Errorf("doctor exit %d", code)
	}
	v, err := exec.Command(ts.Bin, "-V").Output()
	if err != nil {
		t.Fatal(err)
	}
	if note := strings.Contains(out, "note:            tmux before 3.7 can crash"); note != attachCrashes(string(v)) {
		t.Errorf("%s: note about the attach crash shown=%v:\n%s", v, note, out)
	}
	code, out, _ = run(t, map[string]string{"TMUX_MCP_TMUX_BIN": "/nonexistent/tmux"}, "doctor")
	if code != 1 || !strings.Contains(out, "NOT FOUND") {
		t.Errorf("missing tmux: %d %s", code, out)
	}
}

func TestAttachCrashes(t *testing.T) {
	for v, want := range map[string]bool{"tmux 3.3a": true, "tmux 3.6b": true, "tmux 3.7": false, "tmux next-3.7": false,
		"tmux 4.0": false, "tmux 2.9": true, "tmux master": false, "garbage": true} {
		if got := attachCrashes(v); got != want {
			t.Errorf("attachCrashes(%q)=%v", v, got)
		}
	}
}

func TestTooOld(t *testing.T) {
	for v, want := range map[string]bool{"tmux 3.3a": false, "tmux 3.2": false, "tmux 3.1c": true, "tmux 2.9": true,
		"tmux next-3.6": false, "tmux master": false, "garbage": true, "tmux 10.0": false} {
		if got := tooOld(v); got != want {
			t.Errorf("tooOld(%q)=%v", v, got)
		}
	}
}

// doctor names where each setting came from: a flag, our variable, the
// reference's, or the default.
func TestDoctorNamesSources(t *testing.T) {
	ts := tmuxtest.New(t)
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want []string
	}{
		{"flag", map[string]string{"TMUX_MCP_TMUX_BIN": ts.Bin, "TMUX_MCP_SOCKET": "other"}, []string{"--socket", ts.Socket.Name, "--safety", "readonly", "--scope", "own,sessions=ci-*"},
			[]string{"name " + ts.Socket.Name + ", i.e.", "(from --socket)", "safety:          readonly (from --safety)",
				"scope:           own,sessions=ci-*, as identity stdio on a stdio server (a guard against mistakes, not a sandbox) (from --scope)"}},
		{"our variables", map[string]string{"TMUX_MCP_TMUX_BIN": ts.Bin, "TMUX_MCP_SOCKET": ts.Socket.Name, "TMUX_MCP_WAIT_MAX_SECONDS": "5", "TMUX_MCP_ENGINE": "exec"},
			nil, []string{"(from TMUX_MCP_SOCKET)", "wait ceiling:    5s (from TMUX_MCP_WAIT_MAX_SECONDS)", "engine:          exec (from TMUX_MCP_ENGINE)",
				"scope:           none: every session is in reach (from default)"}},
		{"reference variables", map[string]string{"LIBTMUX_TMUX_BIN": ts.Bin, "LIBTMUX_SOCKET": ts.Socket.Name, "LIBTMUX_SAFETY": "destructive", "LIBTMUX_SUPPRESS_HISTORY": "0", "LIBTMUX_MCP_PROMPTS_AS_TOOLS": "1"},
			nil, []string{"(from LIBTMUX_SOCKET)", "from LIBTMUX_TMUX_BIN)", "safety:          destructive (from LIBTMUX_SAFETY)", "false (from LIBTMUX_SUPPRESS_HISTORY)", "prompt tools:    true (from LIBTMUX_MCP_PROMPTS_AS_TOOLS)"}},
		{"socket path from the reference variable", map[string]string{"TMUX_MCP_TMUX_BIN": ts.Bin, "LIBTMUX_SOCKET_PATH": ts.SocketPath()},
			nil, []string{"path " + ts.SocketPath() + " (from LIBTMUX_SOCKET_PATH)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := run(t, c.env, append(c.args, "doctor")...)
			if code != 0 {
				t.Errorf("doctor exit %d: %s", code, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("doctor output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestWriteResult(t *testing.T) {
	text := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "one"}, &mcp.TextContent{Text: "two"}}}
	structured := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"a":1}`}}, StructuredContent: map[string]any{"a": 1}}
	cases := []struct {
		name string
		res  *mcp.CallToolResult
		raw  bool
		want string
	}{
		{"text only", text, false, "one\ntwo\n"},
		{"structured", structured, false, "{\n  \"a\": 1\n}\n"},
		{"raw", structured, true, "{\n  \"content\": [\n    {\n      \"type\": \"text\",\n      \"text\": \"{\\\"a\\\":1}\"\n    }\n  ],\n  \"structuredContent\": {\n    \"a\": 1\n  }\n}\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			writeResult(&b, c.res, c.raw)
			if b.String() != c.want {
				t.Errorf("got %q, want %q", b.String(), c.want)
			}
		})
	}
}
