package server

import (
	"context"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// The scope outside tool calls: resource reads go through the tools
// (internalCall, safeCall), so they are confined there; what is left is
// the resource list, which mirrors the whole default server for every
// client, subscriptions to a pane's content, and completions.

// scopedView is the view of sock for the caller in ctx, or nil when the
// caller has no scope.
func (c *Call) scopedView(ctx context.Context, sock tmux.Socket) (*scopeView, error) {
	sc := c.callerScope(ctx)
	if sc.None() {
		return nil, nil
	}
	return c.loadScopeView(ctx, sock, sc, CallerIdentity(ctx))
}

// scopeResourceList keeps the resources of a resources/list answer that
// are inside the caller's scope (the list is the default server's; see
// resourceState.sync). What cannot be placed is left out.
func (s *Server) scopeResourceList(ctx context.Context, res *mcp.ListResourcesResult) error {
	if res == nil {
		return nil
	}
	c := s.newCall()
	v, err := c.scopedView(ctx, c.Socket(SocketArgs{}))
	if err != nil || v == nil {
		return err
	}
	keep := res.Resources[:0]
	for _, r := range res.Resources {
		if v.admitsURI(r.URI) {
			keep = append(keep, r)
		}
	}
	res.Resources = keep
	return nil
}

// admitsURI reports whether a mirrored resource is inside: the sessions
// list always is (its contents are confined when read).
func (v *scopeView) admitsURI(uri string) bool {
	ref, err := parseResourceURI(uri)
	if err != nil {
		return false
	}
	switch ref.kind {
	case "sessions":
		return true
	case "session", "windows", "window":
		name, err := url.PathUnescape(ref.session)
		if err != nil {
			return false
		}
		s := v.byName[name]
		return s != nil && s.in
	case "pane", "content":
		id, err := url.PathUnescape(ref.pane)
		if err != nil {
			id = ref.pane
		}
		return v.paneIn(id)
	}
	return false
}

// scopeSubscription refuses a subscription to an outside pane's content
// with the answer a pane that is not there gets. Structure subscriptions
// (sessions, a session's windows) are made for any name, as they are
// without a scope, and tell only that the server's structure changed:
// what is read after is confined.
func (c *Call) scopeSubscription(ctx context.Context, ref resourceRef, sock tmux.Socket) error {
	if ref.kind != "content" {
		return nil
	}
	v, err := c.scopedView(ctx, sock)
	if err != nil {
		return resourceNotFound("Pane not found: " + ref.pane)
	}
	if v != nil && v.outsidePane(ref.pane) {
		return resourceNotFound("Pane not found: " + ref.pane)
	}
	return nil
}

// scopeListing keeps the rows of a pane listing (one row per session and
// pane) that are inside the caller's scope, for the questions put to the
// person before a call (confirm_describe.go): an outside target is
// described as a missing one, and a batch row on another host or socket is
// judged by that server's view.
func (c *Call) scopeListing(ctx context.Context, sock tmux.Socket, rows []tmux.Row) ([]tmux.Row, error) {
	v, err := c.scopedView(ctx, sock)
	if err != nil || v == nil {
		return rows, err
	}
	return v.keep(rows, "pane_id"), nil
}

// scopeCompletion confines a completion to the caller's scope: it sets
// the call's view, so the listings complete reads are kept to it
// (scopeRows). ok is false when the caller is scoped and its server could
// not be read: nothing is offered then.
func (c *Call) scopeCompletion(ctx context.Context, sock tmux.Socket) (ok bool) {
	v, err := c.scopedView(ctx, sock)
	if err != nil {
		return false
	}
	if v != nil {
		c.scope = &callScope{view: v}
	}
	return true
}
