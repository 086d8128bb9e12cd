package server

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var renderedCall = regexp.MustCompile(`([a-z_]+)\((\{.*?\})\)`)

// TestPromptsNameRealToolsAndArguments: every tool call a prompt renders
// names a real tool, and its arguments pass that tool's schema.
func TestPromptsNameRealToolsAndArguments(t *testing.T) {
	s := allToolsServer(t)
	args := map[string]string{"command": "make test\nmake lint", "pane_id": "%1", "timeout": "12", "session_name": "dev", "log_command": "tail -f x.log"}
	for _, p := range Prompts() {
		text, err := renderPrompt(p, args)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		calls := renderedCall.FindAllStringSubmatch(text, -1)
		if len(calls) == 0 {
			t.Errorf("%s renders no tool call", p.Name)
		}
		for _, m := range calls {
			tool := s.tool(m[1])
			if tool == nil {
				t.Errorf("%s: %s is not a tool", p.Name, m[1])
				continue
			}
			if !json.Valid([]byte(m[2])) {
				t.Errorf("%s: %s arguments are not JSON: %s", p.Name, m[1], m[2])
				continue
			}
			if _, err := checkArguments(tool.Title, tool.inSchema(), json.RawMessage(m[2])); err != nil {
				t.Errorf("%s: %s%s: %v", p.Name, m[1], m[2], err)
			}
		}
	}
	text, _ := renderPrompt(Prompts()[0], map[string]string{"command": "a\nb", "pane_id": "%1"})
	if !strings.Contains(text, `"suppress_history": false`) || !strings.Contains(text, "may record it") {
		t.Errorf("multi-line run_and_wait: %s", text)
	}
	if _, err := renderPrompt(Prompts()[0], map[string]string{"pane_id": "%1"}); err == nil {
		t.Error("missing required argument accepted")
	}
}

func TestPromptsOverMCP(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var names []string
	for p, err := range e.cs.Prompts(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, p.Name)
	}
	if len(names) != 4 {
		t.Errorf("prompts %v", names)
	}
	res, err := e.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "interrupt_gracefully", Arguments: map[string]string{"pane_id": "%3"}})
	if err != nil || !strings.Contains(res.Messages[0].Content.(*mcp.TextContent).Text, `"keys": "C-c"`) {
		t.Errorf("%v %+v", err, res)
	}
}

func TestPromptsAsTools(t *testing.T) {
	e := newEnv(t, withTier(configReadonly), withConfig(func(c *configT) { c.PromptsAsTools = true }))
	var list []PromptInfo
	e.list("list_prompts", map[string]any{}, &list)
	if len(list) != 4 {
		t.Fatalf("%+v", list)
	}
	var r RenderedPrompt
	e.ok("get_prompt", map[string]any{"name": "diagnose_failing_pane", "arguments": map[string]any{"pane_id": "%2"}}, &r)
	if !strings.Contains(r.Text, `snapshot_pane({"pane_id": "%2"})`) {
		t.Errorf("%s", r.Text)
	}
	e.fail("get_prompt", map[string]any{"name": "nope"})
}

// TestPromptsRenderVerbatim: <, > and & reach the model as typed, not as
// \u003c-style escapes (issue 10 item 10), both in the user's command and in
// the prompt's own placeholders.
func TestPromptsRenderVerbatim(t *testing.T) {
	var p *Prompt
	for _, q := range Prompts() {
		if q.Name == "run_and_wait" {
			p = q
		}
	}
	cmd := "make 2>&1 | tee log && echo ok"
	text, err := renderPrompt(p, map[string]string{"command": cmd, "pane_id": "%1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"command": "make 2>&1 | tee log && echo ok"`, `"<run_id from the result>"`} {
		if !strings.Contains(text, want) {
			t.Errorf("prompt lacks %s:\n%s", want, text)
		}
	}
	if strings.Contains(text, `\u00`) {
		t.Errorf("prompt has JSON escapes:\n%s", text)
	}
}
