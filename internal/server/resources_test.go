package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestFixPaneURI(t *testing.T) {
	cases := map[string]string{
		"tmux://panes/%12":              "tmux://panes/%2512",
		"tmux://panes/%2512":            "tmux://panes/%2512",
		"tmux://panes/%0/content":       "tmux://panes/%250/content",
		"tmux://panes/%25":              "tmux://panes/%2525",
		"tmux://panes/%3?socket_name=x": "tmux://panes/%253?socket_name=x",
		"tmux://sessions/main":          "tmux://sessions/main",
	}
	for in, want := range cases {
		if got := fixPaneURI(in); got != want {
			t.Errorf("%s -> %s, want %s", in, got, want)
		}
	}
}

func TestResourcesRead(t *testing.T) {
	e := newEnv(t)
	e.tmux.MustRun("respawn-pane", "-k", "-t", "%0", "sh")
	e.tmux.MustRun("send-keys", "-t", "%0", "echo resource-$((5*5))", "Enter")
	ctx := context.Background()
	n := 0
	for _, err := range e.cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if want := 6 + len(recordingTemplates) + len(hostResourceTemplatesIf(e)); n != want {
		t.Errorf("%d templates", n)
	}
	read := func(uri string) (string, error) {
		res, err := e.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			return "", err
		}
		return res.Contents[0].Text, nil
	}
	cases := []struct{ uri, want string }{
		{"tmux://sessions", `"session_name": "main"`},
		{"tmux://sessions/main", `"windows": [`},
		{"tmux://sessions/main/windows", `"window_index": "0"`},
		{"tmux://sessions/main/windows/0", `"panes": [`},
		{"tmux://panes/%250", `"pane_id": "%0"`},
		{"tmux://panes/%0", `"pane_id": "%0"`},
		{"tmux://sessions?socket_name=" + e.tmux.Socket.Name, `"session_name": "main"`},
	}
	for _, c := range cases {
		got, err := read(c.uri)
		if err != nil || !strings.Contains(got, c.want) {
			t.Errorf("%s: %v %s", c.uri, err, got)
		}
	}
	tmuxWait(t, func() bool { got, _ := read("tmux://panes/%250/content"); return strings.Contains(got, "resource-25") })
	for _, uri := range []string{"tmux://sessions/nope", "tmux://panes/%2599", "tmux://sessions/main/windows/9"} {
		_, err := read(uri)
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != codeResourceNotFound {
			t.Errorf("%s: want -32002, got %v", uri, err)
		}
	}
}

func tmuxWait(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// notifyClient connects a client that records resource notifications.
func notifyClient(t *testing.T, e *env) (*mcp.ClientSession, func() (updated []string, listChanged int)) {
	t.Helper()
	var mu sync.Mutex
	var updated []string
	listChanged := 0
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := e.srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "sub", Version: "0"}, &mcp.ClientOptions{
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
	}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, func() ([]string, int) {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), updated...), listChanged
	}
}

// Subscribe to a pane's content, change the pane, see the notification.
func TestResourceSubscriptionPaneContent(t *testing.T) {
	e := newEnv(t)
	e.tmux.MustRun("respawn-pane", "-k", "-t", "%0", "sh")
	cs, seen := notifyClient(t, e)
	ctx := context.Background()
	uri := "tmux://panes/%250/content"
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	// The SDK's Subscribe can return before the server-side handler has
	// attached its watcher; wait for the watcher before changing the pane.
	tmuxWait(t, func() bool { return e.srv.watch.Subscriptions() > 0 })
	start := time.Now()
	e.tmux.MustRun("send-keys", "-t", "%0", "echo changed", "Enter")
	tmuxWait(t, func() bool { u, _ := seen(); return len(u) > 0 })
	u, _ := seen()
	t.Logf("subscribed %s; typed into %%0; notifications/resources/updated for %v after %v", uri, u, time.Since(start).Round(time.Millisecond))
	if u[0] != uri {
		t.Errorf("updated %v", u)
	}
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	// The SDK's 2026-07-28 Subscribe does not carry the handler's error back
	// to the caller, so check the handler itself.
	rs := newResourceState(e.srv)
	err := rs.subscribe(ctx, &mcp.SubscribeRequest{Params: &mcp.SubscribeParams{URI: "tmux://panes/%2577/content"}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != codeResourceNotFound {
		t.Errorf("subscribing to a missing pane: %v", err)
	}
	for _, bad := range []string{"tmux://sessions?socket_name=..%2Fx", "tmux://panes/%250/content?socket_name=a%2Fb"} {
		err := rs.subscribe(ctx, &mcp.SubscribeRequest{Params: &mcp.SubscribeParams{URI: bad}})
		if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams || !strings.Contains(we.Message, "socket_name") {
			t.Errorf("subscribing with a bad socket_name %s: %v", bad, err)
		}
	}
}

// resources/list shows what exists now; a new session is announced with
// list_changed to a subscribed client.
func TestResourceListChanged(t *testing.T) {
	e := newEnv(t)
	cs, seen := notifyClient(t, e)
	ctx := context.Background()
	list := func() map[string]bool {
		m := map[string]bool{}
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			m[r.URI] = true
		}
		return m
	}
	got := list()
	for _, want := range []string{"tmux://sessions", "tmux://sessions/main", "tmux://panes/%250", "tmux://panes/%250/content", "tmux://sessions/main/windows/0"} {
		if !got[want] {
			t.Errorf("resources/list lacks %s: %v", want, got)
		}
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "tmux://sessions"}); err != nil {
		t.Fatal(err)
	}
	tmuxWait(t, func() bool { return e.srv.watch.Subscriptions() > 0 })
	_, before := seen()
	e.tmux.MustRun("new-session", "-d", "-s", "fresh")
	tmuxWait(t, func() bool { _, n := seen(); return n > before })
	tmuxWait(t, func() bool { u, _ := seen(); return len(u) > 0 && u[0] == "tmux://sessions" })
	if !list()["tmux://sessions/fresh"] {
		t.Error("new session not listed")
	}
}

func TestCompletion(t *testing.T) {
	e := newEnv(t)
	e.tmux.MustRun("new-session", "-d", "-s", "mango")
	e.tmux.MustRun("new-session", "-d", "-s", "melon")
	e.tmux.MustRun("new-window", "-d", "-t", "mango:7")
	ctx := context.Background()
	complete := func(ref *mcp.CompleteReference, arg, val string, context map[string]string) []string {
		p := &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: val}}
		if context != nil {
			p.Context = &mcp.CompleteContext{Arguments: context}
		}
		res, err := e.cs.Complete(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return res.Completion.Values
	}
	tmpl := &mcp.CompleteReference{Type: "ref/resource", URI: "tmux://sessions/{session_name}/windows/{window_index}{?socket_name}"}
	if got := complete(tmpl, "session_name", "m", nil); strings.Join(got, ",") != "main,mango,melon" {
		t.Errorf("session names %v", got)
	}
	if got := complete(tmpl, "window_index", "", map[string]string{"session_name": "mango"}); strings.Join(got, ",") != "0,7" {
		t.Errorf("window indexes %v", got)
	}
	prompt := &mcp.CompleteReference{Type: "ref/prompt", Name: "diagnose_failing_pane"}
	if got := complete(prompt, "pane_id", "%", nil); len(got) != 4 {
		t.Errorf("pane ids %v", got)
	}
	b, _ := json.Marshal(complete(prompt, "pane_id", "%9", nil))
	if string(b) != "[]" {
		t.Errorf("no match: %s", b)
	}
}

// A client that listed resources hears list_changed without subscribing
// to anything, also for a pane split off (without focus) in a session the
// follower is not attached to, and after the session it was attached to
// is killed.
func TestResourceListFollowsWithoutSubscribing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tmux.MustRun("new-session", "-d", "-s", "other", "sh")
	cs, seen := notifyClient(t, e)
	ctx := context.Background()
	listed := func(uri string) bool {
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			if r.URI == uri {
				return true
			}
		}
		return false
	}
	if !listed("tmux://sessions/other") {
		t.Fatal("resources/list lacks the other session")
	}
	tmuxWait(t, func() bool { return e.srv.watch.Subscriptions() > 0 })
	for _, step := range []string{"split in the other session", "split after the followed session was killed"} {
		if step == "split after the followed session was killed" {
			e.tmux.MustRun("kill-session", "-t", "main")
			tmuxWait(t, func() bool { return !listed("tmux://sessions/main") })
			// The follower moved to "other": its new watcher is live.
			tmuxWait(t, func() bool { return e.srv.watch.Count() == 1 && e.srv.watch.Subscriptions() > 0 })
		}
		// resources/list itself may announce a change (it syncs first);
		// let those notifications land before counting.
		before := -1
		for {
			_, n := seen()
			if n == before {
				break
			}
			before = n
			time.Sleep(300 * time.Millisecond)
		}
		pane := strings.TrimSpace(e.tmux.MustRun("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", "other:", "sh"))
		uri := "tmux://panes/" + url.PathEscape(pane)
		start := time.Now()
		tmuxWait(t, func() bool { _, n := seen(); return n > before })
		t.Logf("%s: list_changed %v after %s appeared", step, time.Since(start).Round(time.Millisecond), pane)
		if !listed(uri) {
			t.Errorf("%s: %s not listed", step, uri)
		}
	}
}
