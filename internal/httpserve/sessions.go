package httpserve

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/metrics"
	"github.com/tmux-mcp/tmux-mcp/internal/server"
)

// sessionTable tracks the live stateful sessions: it caps how many there
// are, ends them with what they hold (calls, GET streams) when their
// client deletes them or their token is revoked, and when one ends
// (DELETE, revocation, idle expiry, a failed initialize, shutdown) it
// releases the state its client held in the server. It also knows the
// calls of 2026-07-28 clients, which have no session, by token name.
type sessionTable struct {
	max     int
	release func(server.Owner)

	// pingEvery, when set, is how often a live session's client is pinged
	// (see keepListening).
	pingEvery time.Duration

	mu        sync.Mutex
	live      map[*mcp.ServerSession]*sessionEntry
	byID      map[string]*sessionEntry
	stateless map[string]map[int]context.CancelCauseFunc // calls without a session, by token name
	next      int                                        // key of the next call or stream
	pending   int                                        // new sessions being initialized right now
	ending    sync.WaitGroup                             // releases in progress
}

// sessionEntry is one live session and what runs in it. Its fields after
// owner are guarded by the table's mu.
type sessionEntry struct {
	ss    *mcp.ServerSession
	name  string // the token's
	owner server.Owner

	calls   map[int]context.CancelCauseFunc // running calls
	streams map[int]*getStream              // open GET streams
	posts   int                             // POST requests being served
	drained chan struct{}                   // closed when posts reaches 0 after end
	ended   error                           // why the session was ended; nil while it lives
}

// getStream is an open GET stream of a session: ending the session cuts
// it off (no write gets through from then on) and ends its request.
type getStream struct {
	off    atomic.Bool
	cancel context.CancelFunc
}

func newSessionTable(max int, release func(server.Owner)) *sessionTable {
	return &sessionTable{max: max, release: release, live: map[*mcp.ServerSession]*sessionEntry{},
		byID: map[string]*sessionEntry{}, stateless: map[string]map[int]context.CancelCauseFunc{}}
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
// its requests is seen, arranges the release of owner's state when it
// ends, and returns its entry.
func (t *sessionTable) track(ss *mcp.ServerSession, name string, owner server.Owner) *sessionEntry {
	t.mu.Lock()
	if e, ok := t.live[ss]; ok {
		t.mu.Unlock()
		return e
	}
	e := &sessionEntry{ss: ss, name: name, owner: owner, calls: map[int]context.CancelCauseFunc{}, streams: map[int]*getStream{}}
	t.live[ss] = e
	t.byID[ss.ID()] = e
	t.ending.Add(1)
	t.mu.Unlock()
	metrics.SessionOpened()
	go func() {
		defer t.ending.Done()
		ended := make(chan struct{})
		go func() { _ = ss.Wait(); close(ended) }()
		t.keepListening(ss, ended)
		t.mu.Lock()
		delete(t.live, ss)
		if t.byID[ss.ID()] == e {
			delete(t.byID, ss.ID())
		}
		t.mu.Unlock()
		metrics.SessionClosed()
		t.release(owner)
	}()
	return e
}

// lookup is the live session of that id, or nil.
func (t *sessionTable) lookup(id string) *sessionEntry {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byID[id]
}

// addCall records a running call of session e (nil: a call of token name
// without a session) and returns its removal. A call of a session already
// ended is cancelled at once, so none slips past the end.
func (t *sessionTable) addCall(e *sessionEntry, name string, cancel context.CancelCauseFunc) (remove func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next++
	k := t.next
	if e != nil {
		if e.ended != nil {
			cancel(e.ended)
			return func() {}
		}
		e.calls[k] = cancel
		return func() {
			t.mu.Lock()
			delete(e.calls, k)
			t.mu.Unlock()
		}
	}
	if t.stateless[name] == nil {
		t.stateless[name] = map[int]context.CancelCauseFunc{}
	}
	t.stateless[name][k] = cancel
	return func() {
		t.mu.Lock()
		delete(t.stateless[name], k)
		if len(t.stateless[name]) == 0 {
			delete(t.stateless, name)
		}
		t.mu.Unlock()
	}
}

// beginPost counts a POST request of session e being served; false when
// the session has ended (the request must be refused).
func (t *sessionTable) beginPost(e *sessionEntry) (ok bool, end func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e.ended != nil {
		return false, nil
	}
	e.posts++
	return true, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if e.posts--; e.posts == 0 && e.drained != nil {
			close(e.drained)
		}
	}
}

// addStream records an open GET stream of session e; false when the
// session has ended.
func (t *sessionTable) addStream(e *sessionEntry, s *getStream) (ok bool, remove func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e.ended != nil {
		return false, nil
	}
	t.next++
	k := t.next
	e.streams[k] = s
	return true, func() {
		t.mu.Lock()
		delete(e.streams, k)
		t.mu.Unlock()
	}
}

// end ends session e for cause: from now on its requests are refused, its
// GET streams are cut off and its running calls cancelled with cause (a
// call then answers at once, see identify). The returned channel is closed
// once every POST of the session has been answered. The session itself is
// closed by closeWhenDrained.
func (t *sessionTable) end(e *sessionEntry, cause error) (drained <-chan struct{}) {
	drained, _ = t.endOnce(e, cause)
	return drained
}

// endOnce is end, also reporting whether this call ended the session
// (false: it had ended already).
func (t *sessionTable) endOnce(e *sessionEntry, cause error) (drained <-chan struct{}, first bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e.ended != nil {
		return e.drained, false
	}
	e.ended = cause
	e.drained = make(chan struct{})
	if e.posts == 0 {
		close(e.drained)
	}
	for _, s := range e.streams {
		s.off.Store(true)
		s.cancel()
	}
	for _, cancel := range e.calls {
		cancel(cause)
	}
	return e.drained, true
}

// closeWhenDrained closes e's session once its POSTs have been answered,
// or after closeWait at most: the SDK's Close waits for the session's
// calls to return and then refuses to write their answers, so closing
// first would leave them an empty body.
func (t *sessionTable) closeWhenDrained(e *sessionEntry, drained <-chan struct{}) {
	go func() {
		select {
		case <-drained:
		case <-time.After(closeWait):
		}
		_ = e.ss.Close()
	}()
}

// endNamed ends the sessions and session-less calls of the given token
// names for cause and returns how many sessions it ended.
func (t *sessionTable) endNamed(names map[string]bool, cause error) int {
	t.mu.Lock()
	var hit []*sessionEntry
	for _, e := range t.live {
		if names[e.name] && e.ended == nil {
			hit = append(hit, e)
		}
	}
	for name := range names {
		for _, cancel := range t.stateless[name] {
			cancel(cause)
		}
	}
	t.mu.Unlock()
	for _, e := range hit {
		t.closeWhenDrained(e, t.end(e, cause))
	}
	return len(hit)
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
// stateful sessions are ended (their running calls answer at once with a
// JSON-RPC error, their GET streams end and deliver nothing more; then the
// session is closed and its runs, cursors, buffers and subscriptions
// released, as at any session's end), their calls without a session
// (2026-07-28) end the same way, and their subscriptions/listen streams
// are ended. It is for tokens that were removed or replaced
// (TokensFile.Reload): from then on their requests get 401, and nothing
// opened with them keeps receiving anything. It returns how many sessions
// and listen streams it ended, without waiting for the sessions to close.
func (d *Daemon) Revoke(names []string) int {
	if len(names) == 0 {
		return 0
	}
	metrics.TokensRevoked(len(names))
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	return d.sessions.endNamed(set, errTokenRevoked) + d.listens.end(set)
}

// closeAll closes every live session (shutdown).
func (t *sessionTable) closeAll() {
	t.mu.Lock()
	all := make([]*mcp.ServerSession, 0, len(t.live))
	for ss, e := range t.live {
		all = append(all, ss)
		for _, s := range e.streams {
			s.off.Store(true)
			s.cancel()
		}
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
var errUnauthenticated = &jsonrpc.Error{Code: codeUnauthorized, Message: "Unauthorized: the request carries no authenticated identity"}

// errTokenRevoked is the cause given to the calls of a revoked token
// (Revoke), and the JSON-RPC error they answer with.
var errTokenRevoked = &jsonrpc.Error{Code: codeUnauthorized,
	Message: "Unauthorized: the token this call was made with was revoked (the server's tokens file was reloaded), so the call was ended"}

// How long the ending of a session waits for its calls to answer: a
// DELETE answers after endWait at most, and the session is closed after
// closeWait at most even if a call has not answered (see
// closeWhenDrained).
var (
	endWait   = 750 * time.Millisecond
	closeWait = 5 * time.Second
)

// identify is the MCP receiving middleware that turns the authenticated
// token of a request (carried by the SDK as its TokenInfo) into the
// server's view of the client: server.WithClient (the name for the audit
// log and the owner mark of its sessions, the token's tier for the gate,
// its scope) and server.WithOwner, the key of the
// client's run_ids, cursors and buffers: the token's name plus the
// session id when there is one. A 2026-07-28 client has no session, so its
// handles belong to its token.
//
// It also makes each call endable with its session or token: the call's
// context is recorded in the session table, which cancels it when the
// session is deleted (cause server.ErrSessionEnded: the call answers with
// what it has) or the token revoked (errTokenRevoked: the call answers with
// that JSON-RPC error, whatever the tool made of its end).
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
		sc, _ := ti.TokenInfo.Extra[scopeKey].(string)
		name := ti.TokenInfo.UserID
		owner := server.Owner("http:" + name)
		var e *sessionEntry
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil && ss.ID() != "" {
			owner += server.Owner("/" + ss.ID())
			e = d.sessions.track(ss, name, owner)
		}
		ctx = server.WithOwner(ctx, owner)
		ctx = server.WithClient(ctx, server.Client{Name: name, Tier: tier, Scope: sc})
		if strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		defer d.sessions.addCall(e, name, cancel)()
		res, err := next(ctx, method, req)
		if context.Cause(ctx) == errTokenRevoked {
			return nil, errTokenRevoked
		}
		return res, err
	}
}

// gateSessions stands before the SDK for the requests of a live session of
// the requesting token: a DELETE ends it here (see deleteSession), a
// request of a session already ended is refused with 404, and the POSTs
// and GET streams of the session are recorded so that its end can wait
// for the first and cut the second. Other requests (no session, an
// unknown one, another token's) go on to the SDK, which answers them.
func (d *Daemon) gateSessions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid := r.Header.Get(headerSessionID)
		if sid == "" {
			if r.Method == http.MethodPost && !useStateless(r) && logInfoFrom(r.Context()).rpc != "initialize" {
				// The SDK would make a session for it that is never
				// initialized and answer HTTP 200 with an error of code 0.
				writeError(w, http.StatusBadRequest, codeInvalidRequest,
					"Bad request: no Mcp-Session-Id header: a session starts with initialize, and every later request carries the Mcp-Session-Id its answer gave (a 2026-07-28 client sends MCP-Protocol-Version: 2026-07-28 instead)")
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		e := d.sessions.lookup(sid)
		id, _ := identityFrom(r.Context())
		if e == nil || e.name != id.Name {
			next.ServeHTTP(w, r)
			return
		}
		switch r.Method {
		case http.MethodDelete:
			d.deleteSession(w, e)
			return
		case http.MethodPost:
			ok, end := d.sessions.beginPost(e)
			if !ok {
				sessionEnded(w)
				return
			}
			defer end()
		case http.MethodGet:
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			s := &getStream{cancel: cancel}
			ok, remove := d.sessions.addStream(e, s)
			if !ok {
				sessionEnded(w)
				return
			}
			defer remove()
			w, r = &cutWriter{statusWriter{ResponseWriter: w}, &s.off}, r.WithContext(ctx)
		}
		next.ServeHTTP(w, r)
	})
}

// deleteSession is a client's DELETE of its session e: the session's
// running calls are ended (each answers with what it has so far), its GET
// streams cut off, and the DELETE is answered once the calls have answered,
// or after endWait at most; the session is then closed and its state
// released (closeWhenDrained). The SDK's own DELETE closes the session
// first, which waits for its calls to finish (a 20 s wait made the DELETE
// take 18.5 s) and then refuses to write their answers (each POST got an
// empty body).
func (d *Daemon) deleteSession(w http.ResponseWriter, e *sessionEntry) {
	drained, first := d.sessions.endOnce(e, server.ErrSessionEnded)
	if !first {
		sessionEnded(w)
		return
	}
	select {
	case <-drained:
	case <-time.After(endWait):
	}
	d.sessions.closeWhenDrained(e, drained)
	w.WriteHeader(http.StatusNoContent)
}

// sessionEnded answers a request of a session that was ended.
func sessionEnded(w http.ResponseWriter) {
	writeError(w, http.StatusNotFound, codeInvalidRequest,
		"Session not found: it was ended (deleted, or its token revoked); start a new session with initialize")
}

// cutWriter is the response of a GET stream: once its session is ended
// (off), nothing more is written to it, even an event the SDK was about to
// send as the stream ended.
type cutWriter struct {
	statusWriter
	off *atomic.Bool
}

func (c *cutWriter) Write(b []byte) (int, error) {
	if c.off.Load() {
		return 0, errSessionCut
	}
	return c.statusWriter.Write(b)
}

var errSessionCut = errors.New("the session was ended")
