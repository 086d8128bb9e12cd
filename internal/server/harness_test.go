package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/remote"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// env is one test's isolated tmux server plus an MCP client session talking
// to a tmux-mcp server pointed at it (by configured socket name, as a user
// would set TMUX_MCP_SOCKET).
type env struct {
	t    testing.TB
	tmux *tmuxtest.Server
	srv  *Server
	cs   *mcp.ClientSession
	// host is the remote host every tool call names unless it names one
	// itself ("" none): "box" under TMUX_MCP_TEST_TRANSPORT=ssh.
	host string
}

type envOption func(*config.Config)

func withTier(t config.Tier) envOption            { return func(c *config.Config) { c.Safety = t } }
func withCaller(c config.Caller) envOption        { return func(cfg *config.Config) { cfg.Caller = c } }
func withToolsets(ts ...string) envOption         { return func(c *config.Config) { c.Toolsets = ts } }
func withConfig(f func(*config.Config)) envOption { return f }

// configT lets test files name the config type without importing config.
type configT = config.Config

const configReadonly = config.Readonly

// newEnv starts an isolated tmux server with one session "main" and a
// connected client.
func newEnv(t testing.TB, opts ...envOption) *env {
	t.Helper()
	return newEnvOn(t, tmuxtest.New(t), opts...)
}

func newEnvOn(t testing.TB, ts *tmuxtest.Server, opts ...envOption) *env {
	t.Helper()
	cfg := config.Config{
		SocketName: ts.Socket.Name, TmuxBin: ts.Bin, Safety: config.Destructive,
		WaitMax: config.DefaultWaitMax, SuppressHistory: true,
	}
	for _, o := range opts {
		o(&cfg)
	}
	if sshMode() {
		return newSSHEnv(t, ts, cfg)
	}
	return newEnvWith(t, ts, cfg, testRunner(t, ts))
}

// testRunner is the transport the tool tests run over: the control-mode
// engine (the production default) unless TMUX_MCP_TEST_TRANSPORT=exec. CI
// runs this package under both.
func testRunner(t testing.TB, ts *tmuxtest.Server) tmux.Runner {
	if os.Getenv("TMUX_MCP_TEST_TRANSPORT") == "exec" {
		return ts.Runner()
	}
	r := &tmux.ControlRunner{Bin: ts.Bin, Env: tmuxtest.CleanEnv()}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func newEnvWith(t testing.TB, ts *tmuxtest.Server, cfg config.Config, r tmux.Runner) *env {
	t.Helper()
	return newEnvHosts(t, ts, cfg, r, nil)
}

// newEnvHosts is newEnvWith with remote hosts (nil: none).
func newEnvHosts(t testing.TB, ts *tmuxtest.Server, cfg config.Config, r tmux.Runner, hosts *remote.Set) *env {
	t.Helper()
	level := slog.LevelError + 100
	if os.Getenv("TMUX_MCP_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	srv, err := New(cfg, Options{Tmux: &tmux.Client{Runner: r}, Logger: logger, ChildEnv: tmuxtest.CleanEnv(), Hosts: hosts})
	if err != nil {
		t.Fatal(err)
	}
	cs := connectClient(t, srv.MCP(), "test", nil, nil, nil)
	t.Cleanup(srv.watch.CloseAll)
	return &env{t: t, tmux: ts, srv: srv, cs: cs}
}

// connectClient connects a client named name to ms over in-memory
// transports and closes both ends at cleanup. wrap, when not nil, wraps
// the client's end of the transport (to see the raw messages).
func connectClient(t testing.TB, ms *mcp.Server, name string, copts *mcp.ClientOptions, sopts *mcp.ClientSessionOptions, wrap func(mcp.Transport) mcp.Transport) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := ms.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	var tr mcp.Transport = ct
	if wrap != nil {
		tr = wrap(ct)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "0"}, copts).Connect(ctx, tr, sopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// call invokes a tool and checks that any structured result validates
// against the tool's advertised output schema.
func (e *env) call(name string, args any) *mcp.CallToolResult {
	e.t.Helper()
	if e.host != "" {
		args = e.onHost(name, args)
	}
	res, err := e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		e.t.Fatalf("%s: protocol error: %v", name, err)
	}
	if !res.IsError && res.StructuredContent != nil {
		validateOutput(e.t, e.srv, name, res.StructuredContent)
	}
	return res
}

// ok calls a tool that must succeed and decodes its structured result (or
// returns its text for text tools through out *string).
func (e *env) ok(name string, args any, out any) *mcp.CallToolResult {
	e.t.Helper()
	res := e.call(name, args)
	if res.IsError {
		e.t.Fatalf("%s(%v): unexpected error: %s", name, args, text(res))
	}
	if out == nil {
		return res
	}
	if sp, isText := out.(*string); isText {
		*sp = text(res)
		return res
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, out); err != nil {
		e.t.Fatalf("%s: decode %s: %v", name, raw, err)
	}
	return res
}

// fail calls a tool that must fail and returns its error text and _meta.
func (e *env) fail(name string, args any) (string, mcp.Meta) {
	e.t.Helper()
	res := e.call(name, args)
	if !res.IsError {
		e.t.Fatalf("%s(%v): expected an error, got %s", name, args, text(res))
	}
	return text(res), res.Meta
}

// list decodes a {"result": [...]} list result.
func (e *env) list(name string, args any, out any) {
	e.t.Helper()
	var wrapped struct {
		Result json.RawMessage `json:"result"`
	}
	e.ok(name, args, &wrapped)
	if err := json.Unmarshal(wrapped.Result, out); err != nil {
		e.t.Fatalf("%s: decode: %v", name, err)
	}
}

// validateOutput checks a structured result against the tool's output
// schema with the SDK's own JSON Schema implementation, independent of our
// validator.
func validateOutput(t testing.TB, srv *Server, name string, structured any) {
	t.Helper()
	var tool *Tool
	for _, x := range srv.All() {
		if x.Name == name {
			tool = x
		}
	}
	if tool == nil || tool.outSchema() == nil {
		t.Fatalf("%s returned structured content but has no output schema", name)
	}
	raw, _ := json.Marshal(tool.outSchema())
	var sch jsonschema.Schema
	if err := json.Unmarshal(raw, &sch); err != nil {
		t.Fatalf("%s: output schema does not parse: %v", name, err)
	}
	res, err := sch.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: output schema does not resolve: %v", name, err)
	}
	var v any
	b, _ := json.Marshal(structured)
	_ = json.Unmarshal(b, &v)
	if err := res.Validate(v); err != nil {
		t.Fatalf("%s: result does not validate against its output schema: %v\n%s", name, err, b)
	}
}

// countingEnv is newEnv with a runner that counts tmux processes (round
// trips over the exec transport), to hold each tool to its budget.
func countingEnv(t testing.TB) (*env, *atomic.Int64) {
	t.Helper()
	ts := tmuxtest.New(t)
	var n atomic.Int64
	r := ts.Runner()
	r.OnSpawn = func([]string) { n.Add(1) }
	cfg := config.Config{SocketName: ts.Socket.Name, TmuxBin: ts.Bin, Safety: config.Destructive, WaitMax: config.DefaultWaitMax}
	return newEnvWith(t, ts, cfg, r), &n
}

// decodeStructured decodes a result's structured content.
func decodeStructured(t testing.TB, res *mcp.CallToolResult, out any) {
	t.Helper()
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}
