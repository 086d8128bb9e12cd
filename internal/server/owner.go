package server

import "context"

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
