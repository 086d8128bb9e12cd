package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// TestStdioResources drives the resource side of the built binary over
// stdio as a client would: list, read with a raw pane id, subscribe to a
// pane's content and see it change, hear list_changed when a tool creates
// a session, complete a session name, and render a prompt.
func TestStdioResources(t *testing.T) {
	ts := tmuxtest.New(t)
	ts.MustRun("respawn-pane", "-k", "-t", "%0", "sh")
	var mu sync.Mutex
	var updated []string
	listChanged := 0
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-resources", Version: "0"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			mu.Lock()
			updated = append(updated, r.Params.URI)
			mu.Unlock()
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			mu.Lock()
			listChanged++
			mu.Unlock()
		},
	}).Connect(ctx, &mcp.CommandTransport{Command: serverCmd(ts)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	seen := func() ([]string, int) {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), updated...), listChanged
	}
	listed := func() map[string]bool {
		m := map[string]bool{}
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			m[r.URI] = true
		}
		return m
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not seen in 10 s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	if got := listed(); !got["tmux://panes/%250/content"] || !got["tmux://sessions/main"] {
		t.Fatalf("resources/list: %v", got)
	}
	// A raw %0 is accepted as well as the encoded %250.
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tmux://panes/%0"})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, `"pane_id": "%0"`) {
		t.Fatalf("read tmux://panes/%%0: %v %+v", err, rr)
	}
	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tmux://panes/%2599"})
	if we := (*jsonrpc.Error)(nil); !errors.As(err, &we) || we.Code != -32002 {
		t.Errorf("reading a missing pane: %v, want error -32002", err)
	}

	// Subscribe to the pane's content, type into it with a tool, and wait
	// for the notification.
	uri := "tmux://panes/%250/content"
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the subscription's entry capture
	quiet, _ := seen()
	start := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "send_keys", Arguments: map[string]any{"pane_id": "%0", "keys": "echo subscribed-$((6*7))"}})
	if err != nil || res.IsError {
		t.Fatalf("send_keys: %v %+v", err, res)
	}
	waitFor("resources/updated", func() bool {
		u, _ := seen()
		return len(u) > len(quiet) && u[len(u)-1] == uri
	})
	t.Logf("subscribed %s; typed into %%0 with send_keys; notifications/resources/updated after %v", uri, time.Since(start).Round(time.Millisecond))
	rr, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil || !strings.Contains(rr.Contents[0].Text, "subscribed-$((6*7))") {
		t.Errorf("content after the change: %v %+v", err, rr)
	}

	// A session created by a tool is announced without a subscription.
	_, before := seen()
	start = time.Now()
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_session", Arguments: map[string]any{"session_name": "fresh"}})
	if err != nil || res.IsError {
		t.Fatalf("create_session: %v %+v", err, res)
	}
	waitFor("list_changed", func() bool { _, n := seen(); return n > before })
	t.Logf("create_session fresh; notifications/resources/list_changed after %v", time.Since(start).Round(time.Millisecond))
	if !listed()["tmux://sessions/fresh"] {
		t.Error("the new session is not listed")
	}

	// Completion offers live session names; a prompt renders.
	comp, err := cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "tmux://sessions/{session_name}"},
		Argument: mcp.CompleteParamsArgument{Name: "session_name", Value: "fr"},
	})
	if err != nil || len(comp.Completion.Values) != 1 || comp.Completion.Values[0] != "fresh" {
		t.Errorf("completion of fr: %v %+v", err, comp)
	}
	pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "run_and_wait", Arguments: map[string]string{"command": "make test", "pane_id": "%0"}})
	if err != nil || len(pr.Messages) == 0 {
		t.Fatalf("prompt: %v %+v", err, pr)
	}
	raw, _ := json.Marshal(pr.Messages[0].Content)
	if !strings.Contains(string(raw), "run_command") {
		t.Errorf("run_and_wait does not use run_command: %s", raw)
	}
}
