package server

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// TestTiers: tools above the configured tier are absent from tools/list and
// refused with a clear message when called anyway.
func TestTiers(t *testing.T) {
	t.Parallel()
	all := allToolsServer(t).All()
	for _, tier := range []config.Tier{config.Readonly, config.Mutating, config.Destructive} {
		t.Run(tier.String(), func(t *testing.T) {
			e := newEnv(t, withTier(tier), withConfig(func(c *configT) { c.PromptsAsTools = true }))
			listed := map[string]bool{}
			for tool, err := range e.cs.Tools(context.Background(), nil) {
				if err != nil {
					t.Fatal(err)
				}
				listed[tool.Name] = true
			}
			for _, tool := range all {
				if want := tool.Tier <= tier; listed[tool.Name] != want {
					t.Errorf("%s (tier %s) listed=%v at %s", tool.Name, tool.Tier, listed[tool.Name], tier)
				}
				if tool.Tier > tier {
					msg, meta := e.fail(tool.Name, map[string]any{})
					if !strings.Contains(msg, "not available at the current safety level ("+tier.String()+")") ||
						!strings.Contains(msg, "TMUX_MCP_SAFETY="+tool.Tier.String()) || meta["expected"] != true {
						t.Errorf("%s refusal: %q", tool.Name, msg)
					}
				}
			}
		})
	}
}

func TestToolsetsHideTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withToolsets("server"))
	for tool, err := range e.cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if e.srv.tool(tool.Name).Toolset != "server" {
			t.Errorf("%s listed outside its toolset", tool.Name)
		}
	}
	msg, _ := e.fail("get_pane_info", map[string]any{})
	if !strings.Contains(msg, "pane toolset") {
		t.Errorf("refusal: %q", msg)
	}
	if _, err := New(config.Config{Toolsets: []string{"bogus"}}, Options{}); err == nil {
		t.Error("unknown toolset accepted")
	}
}

func TestUnknownToolIsProtocolError(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, err := e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "no_such_tool"})
	if err == nil {
		t.Error("unknown tool accepted")
	}
}

// TestPanicBecomesErrorResult: a panicking handler yields an isError result
// and the server keeps serving.
func TestPanicBecomesErrorResult(t *testing.T) {
	t.Parallel()
	s := allToolsServer(t)
	boom := define(Tool{Name: "boom", Title: "Boom", Description: "d", Tier: config.Readonly, Preset: RO, Toolset: "pane"},
		func(ctx context.Context, c *Call, a struct{}) (Text, error) { panic("kaboom") })
	res := s.invoke(context.Background(), boom, nil, json.RawMessage(`{}`), "")
	if !res.IsError || res.Meta["error_type"] != "InternalError" || strings.Contains(text(res), "kaboom") {
		t.Errorf("panic result: %+v %q", res.Meta, text(res))
	}
}

// flakyRunner fails the first n round trips with a transient tmux error.
type flakyRunner struct {
	tmux.Runner
	fails atomic.Int32
	kind  error
}

func (f *flakyRunner) Run(ctx context.Context, sock tmux.Socket, cmds ...tmux.Command) ([][]byte, error) {
	if f.fails.Add(-1) >= 0 {
		return nil, &tmux.CommandError{Command: cmds[0], Stderr: "server busy", ExitCode: 1, Kind: f.kind}
	}
	return f.Runner.Run(ctx, sock, cmds...)
}

// TestReadonlyRetry: one retry on a transient failure, none on not-found.
func TestReadonlyRetry(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		fails   int32
		kind    error
		wantErr bool
	}{
		{"transient failure retried once", 1, nil, false},
		{"two failures give up", 2, nil, true},
		{"not found is not retried", 1, tmux.ErrNotFound, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			fr := &flakyRunner{Runner: e.tmux.Runner(), kind: c.kind}
			fr.fails.Store(c.fails)
			e2 := newEnvWith(t, e.tmux, e.srv.cfg, fr)
			res := e2.call("get_pane_info", map[string]any{"pane_id": "%0"})
			if res.IsError != c.wantErr {
				t.Errorf("isError=%v: %s", res.IsError, text(res))
			}
		})
	}
}

func TestErrorMapping(t *testing.T) {
	cases := []struct {
		err      error
		wantType string
		expected bool
	}{
		{&tmux.NotFoundError{What: "pane", Detail: "%1"}, "PaneNotFound", true},
		{&tmux.NotFoundError{What: "window", Detail: "@1"}, "TmuxObjectDoesNotExist", true},
		{tmux.ErrTmuxMissing, "TmuxCommandNotFound", false},
		{&tmux.CommandError{Stderr: "ambiguous", Kind: tmux.ErrAmbiguous}, "MultipleObjectsReturned", true},
		{&tmux.CommandError{Stderr: "bad", Kind: nil}, "LibTmuxException", true},
		{tmux.ErrTimeout, "TmuxTimeout", false},
		{errors.New("x"), "InternalError", false},
		{expectedf("nope"), "ExpectedToolError", true},
	}
	for _, c := range cases {
		te := toToolError(c.err)
		if te.Type != c.wantType || te.Expected != c.expected {
			t.Errorf("%v: type %s expected %v", c.err, te.Type, te.Expected)
		}
	}
}

func TestInstructions(t *testing.T) {
	long := strings.Repeat("x", 3000)
	for _, tier := range []config.Tier{config.Readonly, config.Mutating, config.Destructive} {
		for _, caller := range []config.Caller{{}, {PaneID: "%3"}, {PaneID: "%3", SocketPath: "/tmp/tmux-0/default"}, {PaneID: "%3", SocketPath: "/" + long}} {
			got := buildInstructions(tier, caller)
			if len(got) > instructionsBudget {
				t.Errorf("tier %s caller %+v: %d bytes", tier, caller.PaneID, len(got))
			}
			if !strings.Contains(got, "Safety tier: "+tier.String()) {
				t.Errorf("tier not mentioned")
			}
			if caller.PaneID != "" && !strings.Contains(got, "pane %3") {
				t.Errorf("caller pane not mentioned: %s", got)
			}
			if caller.PaneID == "" && strings.Contains(got, "is_caller=true") {
				t.Errorf("caller hint without caller")
			}
		}
	}
}
