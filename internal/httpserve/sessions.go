package httpserve

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/server"
)

// sessionTable tracks the live stateful sessions: it caps how many there
// are, and when one ends (client DELETE, idle expiry, a failed initialize,
// shutdown) it releases the state its client held in the server.
type sessionTable struct {
	max     int
	release func(server.Owner)

	// pingEvery, when set, is how often a live session's client is pinged
	// (see keepListening).
	pingEvery time.Duration

	mu      sync.Mutex
	live    map[*mcp.ServerSession]string // the token name of each
	pending int                           // new sessions being initialized right now
	ending  sync.WaitGroup                // releases in progress
}

func newSessionTable(max int, release func(server.Owner)) *sessionTable {
	return &sessionTable{max: max, release: release, live: map[*mcp.ServerSession]string{}}
}

// reserve takes a place for a session about to be created; false when
// the table is full. unreserve gives it back once the creating request is
// over (by then the session is in live, or was never made).
func (t *sessionTable) reserve() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.live)+t.pending >= t.max {
		return false
	}
	t.pending++
	return true
}

func (t *sessionTable) unreserve() {
	t.mu.Lock()
	t.pending--
	t.mu.Unlock()
}

// track records a live session of the token name the first time one of
// its requests is seen and arranges the release of owner's state when it
// ends.
func (t *sessionTable) track(ss *mcp.ServerSession, name string, owner server.Owner) {
	t.mu.Lock()
	if _, ok := t.live[ss]; ok {
		t.mu.Unlock()
		return
	}
	t.live[ss] = name
	t.ending.Add(1)
	t.mu.Unlock()
	go func() {
		defer t.ending.Done()
		ended := make(chan struct{})
		go func() { _ = ss.Wait(); close(ended) }()
		t.keepListening(ss, ended)
		t.mu.Lock()
		delete(t.live, ss)
		t.mu.Unlock()
		t.release(owner)
	}()
}

// keepListening pings the session's client every pingEvery until the
// session ends. The SDK's idle timer counts only POST requests, so a client
// that holds its GET stream open to hear notifications, and makes no call
// for the idle timeout, would lose its session and its subscriptions while
// listening. The ping travels on that GET stream and the client's answer is
// a POST, which restarts the timer; a client with no stream open, or gone,
// never answers, and its session expires as before. A failed ping is not an
// error: expiry is the idle timer's business.
func (t *sessionTable) keepListening(ss *mcp.ServerSession, ended <-chan struct{}) {
	if t.pingEvery <= 0 {
		<-ended
		return
	}
	tick := time.NewTicker(t.pingEvery)
	defer tick.Stop()
	for {
		select {
		case <-ended:
			return
		case <-tick.C:
			ctx, cancel := context.WithTimeout(context.Background(), t.pingEvery)
			_ = ss.Ping(ctx, nil)
			cancel()
		}
	}
}

// closeNamed closes the live sessions of the given token names and returns
// how many; each is then released as any ending session is.
func (t *sessionTable) closeNamed(names map[string]bool) int {
	t.mu.Lock()
	var hit []*mcp.ServerSession
	for ss, name := range t.live {
		if names[name] {
			hit = append(hit, ss)
		}
	}
	t.mu.Unlock()
	for _, ss := range hit {
		_ = ss.Close()
	}
	return len(hit)
}

// listenStreams are the open subscriptions/listen requests by token name,
// each with the cancel of its request's context, so a revoked token's
// streams can be ended (a stateless stream has no session to close).
type listenStreams struct {
	mu     sync.Mutex
	next   int
	byName map[string]map[int]context.CancelFunc
}

// add records a stream and returns its removal.
func (l *listenStreams) add(name string, cancel context.CancelFunc) (remove func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byName == nil {
		l.byName = map[string]map[int]context.CancelFunc{}
	}
	if l.byName[name] == nil {
		l.byName[name] = map[int]context.CancelFunc{}
	}
	l.next++
	k := l.next
	l.byName[name][k] = cancel
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.byName[name], k)
		if len(l.byName[name]) == 0 {
			delete(l.byName, name)
		}
	}
}

// end cancels the streams of the given names and returns how many.
func (l *listenStreams) end(names map[string]bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for name := range names {
		for _, cancel := range l.byName[name] {
			cancel()
			n++
		}
	}
	return n
}

// Revoke ends what the clients of the given token names hold open: their
// stateful sessions are closed (and their runs, cursors, buffers and
// subscriptions released, as at any session's end) and their
// subscriptions/listen streams ended. It is for tokens that were removed
// or replaced (TokensFile.Reload): from then on their requests get 401,
// and nothing opened with them keeps receiving notifications. It returns
// how many sessions and streams it ended.
func (d *Daemon) Revoke(names []string) int {
	if len(names) == 0 {
		return 0
	}
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	return d.sessions.closeNamed(set) + d.listens.end(set)
}

// closeAll closes every live session (shutdown).
func (t *sessionTable) closeAll() {
	t.mu.Lock()
	all := make([]*mcp.ServerSession, 0, len(t.live))
	for ss := range t.live {
		all = append(all, ss)
	}
	t.mu.Unlock()
	for _, ss := range all {
		_ = ss.Close()
	}
}

// waitReleased waits at most d for the releases of ended sessions.
func (t *sessionTable) waitReleased(d time.Duration) {
	done := make(chan struct{})
	go func() { t.ending.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// errUnauthenticated answers an MCP request that reached the server
// without an identity, which the HTTP stack never lets happen.
var errUnauthenticated = errors.New("unauthenticated request")

// identify is the MCP receiving middleware that turns the authenticated
// token of a request (carried by the SDK as its TokenInfo) into the
// server's view of the client: server.WithClient (the name for the audit
// log, the token's tier for the gate) and server.WithOwner, the key of the
// client's run_ids, cursors and buffers: the token's name plus the
// session id when there is one. A 2026-07-28 client has no session, so its
// handles belong to its token.
func (d *Daemon) identify(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ti := req.GetExtra()
		if ti == nil || ti.TokenInfo == nil || ti.TokenInfo.UserID == "" {
			if strings.HasPrefix(method, "notifications/") {
				return next(ctx, method, req)
			}
			return nil, errUnauthenticated
		}
		tier, _ := ti.TokenInfo.Extra[tierKey].(config.Tier)
		name := ti.TokenInfo.UserID
		owner := server.Owner("http:" + name)
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil && ss.ID() != "" {
			owner += server.Owner("/" + ss.ID())
			d.sessions.track(ss, name, owner)
		}
		ctx = server.WithOwner(ctx, owner)
		ctx = server.WithClient(ctx, server.Client{Name: name, Tier: tier})
		return next(ctx, method, req)
	}
}
