package server

import (
	"context"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
)

// Owner names the client that created a handle: a run_id, a capture_since
// cursor, a buffer. Handles live in server-wide stores, and over stdio there
// is one client; over HTTP many clients share one process, and one must never
// collect, read or delete another's handles. Keying every store by Owner
// from the start means per-client state needs no redesign when more
// transports arrive: a transport puts the client's identity in the request
// context with WithOwner, and stores look it up with OwnerFrom.
type Owner string

// LocalOwner is the owner of every handle made over stdio or by the call
// subcommand: the one client of the process.
const LocalOwner Owner = "local"

type ownerKey struct{}

// WithOwner returns ctx carrying the client identity o.
func WithOwner(ctx context.Context, o Owner) context.Context {
	return context.WithValue(ctx, ownerKey{}, o)
}

// OwnerFrom returns the client identity in ctx, LocalOwner when none was set.
func OwnerFrom(ctx context.Context) Owner {
	if o, ok := ctx.Value(ownerKey{}).(Owner); ok && o != "" {
		return o
	}
	return LocalOwner
}

// Client is the authenticated caller of a request, when the transport
// authenticates (HTTP bearer tokens or OAuth). Its Name goes into every
// audit record; its Tier caps the tools it may call, below the server's own
// tier: tools/list shows the server's tools whatever the token (2026-07-28
// forbids lists that vary per connection), so the cap is enforced at call
// time, by the gate, and the refusal is audited.
type Client struct {
	Name string
	Tier config.Tier // 0: no cap beyond the server's tier
	// Scope confines the client to some sessions (scope.Parse's syntax);
	// "" leaves it to the server's configured scope (Config.Scope).
	Scope string
}

type clientKey struct{}

// WithClient returns ctx carrying the authenticated client c.
func WithClient(ctx context.Context, c Client) context.Context {
	return context.WithValue(ctx, clientKey{}, c)
}

// ClientFrom returns the authenticated client in ctx; ok is false over
// stdio and the call subcommand, where nothing is authenticated.
func ClientFrom(ctx context.Context) (Client, bool) {
	c, ok := ctx.Value(clientKey{}).(Client)
	return c, ok
}

// ReleaseOwner frees what owner holds: its buffers are deleted, its
// capture_since cursors forgotten, and its run_ids dropped (a command still
// running keeps its pane busy until it ends or is abandoned, as any
// uncollected run does). A transport calls it when a client's session ends
// (disconnect, DELETE, idle expiry).
func (s *Server) ReleaseOwner(ctx context.Context, owner Owner) error {
	s.cursors().release(owner)
	s.runs().release(owner)
	return s.ReleaseBuffers(ctx, owner)
}
