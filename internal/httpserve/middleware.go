package httpserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// JSON-RPC error codes of the answers this package writes itself, before a
// request reaches the SDK. -32700 and -32600 are JSON-RPC's; the others are
// in the implementation-defined server-error range.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeUnauthorized   = -32001
	codeForbidden      = -32003
	codeTooLarge       = -32004
	codeLimitExceeded  = -32005
	codeBodyTimeout    = -32006 // the request body did not arrive in time
)

// writeError answers with an HTTP status and a JSON-RPC error without id,
// which the spec allows for transport-level rejections and which MCP
// clients (the Go SDK's among them) surface as the call's error.
func writeError(w http.ResponseWriter, status, code int, msg string) {
	writeAnswer(w, status, nil, code, msg) // a nil RawMessage encodes as null
}

// refuseUnread is writeError for a request whose body has not been read to
// its end: the connection is closed after the answer. Otherwise Go's server,
// to keep the connection for another request, first reads and discards up
// to 256 KB of the unread body before it sends the answer at all, with no
// deadline, so a client that announced a body and never sends it would
// hold the connection and its goroutine for ever, token or no token.
func refuseUnread(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Connection", "close")
	writeError(w, status, code, msg)
}

// ---- request logs ----

// logInfo is filled in by inner layers for the log line of a request,
// and carries its identity once authenticated: one context value per
// request instead of two.
type logInfo struct {
	client string          // the token's name, once authenticated
	rpc    string          // the JSON-RPC method of a POST
	id     json.RawMessage // and its id, to answer an unknown method with
	ident  Identity
	authed bool
}

type logKey struct{}

func logInfoFrom(ctx context.Context) *logInfo {
	li, _ := ctx.Value(logKey{}).(*logInfo)
	if li == nil {
		return &logInfo{}
	}
	return li
}

// statusWriter records the status; Unwrap lets http.ResponseController
// (which the SDK uses to flush SSE) reach the real writer.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (sw *statusWriter) WriteHeader(code int) {
	if sw.status == 0 {
		sw.status = code
	}
	sw.ResponseWriter.WriteHeader(code)
}

func (sw *statusWriter) Write(b []byte) (int, error) {
	if sw.status == 0 {
		sw.status = http.StatusOK
	}
	return sw.ResponseWriter.Write(b)
}

func (sw *statusWriter) Flush() {
	if f, ok := sw.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (sw *statusWriter) Unwrap() http.ResponseWriter { return sw.ResponseWriter }

// logRequests writes one structured line per request to the log (stderr):
// HTTP method, path, JSON-RPC method, status, duration and the client's
// name. Never a token, an argument or a session id.
func (d *Daemon) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		li := &logInfo{}
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), logKey{}, li)))
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		// Typed attributes in a fixed array: no boxing, no slice growth on
		// the one line every request writes.
		var buf [7]slog.Attr
		attrs := append(buf[:0], slog.String("http_method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", sw.status), slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000))
		if li.rpc != "" {
			attrs = append(attrs, slog.String("method", li.rpc))
		}
		if li.client != "" {
			attrs = append(attrs, slog.String("client", li.client))
		}
		if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
			attrs = append(attrs, slog.String("remote", host))
		}
		d.log.LogAttrs(r.Context(), slog.LevelInfo, "http request", attrs...)
	})
}

// ---- Origin ----

// originPolicy is the Origin allowlist. With no configured list it holds
// the server's own loopback origins (added by Serve, which knows the port).
type originPolicy struct {
	defaults bool
	allowed  map[string]bool
}

func newOriginPolicy(list []string) originPolicy {
	p := originPolicy{allowed: map[string]bool{}, defaults: len(list) == 0}
	for _, o := range list {
		p.allowed[normalizeOrigin(o)] = true
	}
	return p
}

// addLoopback allows http(s)://{127.0.0.1,localhost,[::1]}:PORT of addr.
func (p *originPolicy) addLoopback(addr net.Addr, withTLS bool) {
	_, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return
	}
	scheme := "http"
	if withTLS {
		scheme = "https"
	}
	for _, h := range []string{"127.0.0.1", "localhost", "[::1]"} {
		p.allowed[scheme+"://"+h+":"+port] = true
	}
}

func normalizeOrigin(o string) string {
	return strings.ToLower(strings.TrimRight(strings.TrimSpace(o), "/"))
}

// checkOrigin refuses a request whose Origin header is present and not
// allowed (403), as the spec requires against DNS rebinding and cross-site
// requests from browsers. Clients that are not browsers send no Origin.
func (d *Daemon) checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !d.origins.allowed[normalizeOrigin(o)] {
			refuseUnread(w, http.StatusForbidden, codeForbidden,
				"Forbidden: Origin not allowed (a browser page may call this server only from an origin listed in --allowed-origins)")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ---- body ----

// readBody reads a POST body whole, at most MaxBodyBytes (413 beyond),
// refuses one that is not JSON (400, JSON-RPC parse error), and notes its
// JSON-RPC method for the log and the limits.
func (d *Daemon) readBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			if r.ContentLength != 0 { // -1: chunked, length unknown
				refuseUnread(w, http.StatusBadRequest, codeInvalidRequest, "Bad request: a "+r.Method+" request to this endpoint takes no body")
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		// The deadline covers this body only: it is lifted once the body is
		// read, so an answer streamed for minutes is not cut (a recorder
		// in tests has no connection, and the calls do nothing).
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(d.bodyTimeout()))
		body, err := readAll(http.MaxBytesReader(w, r.Body, d.opts.MaxBodyBytes), r.ContentLength, d.opts.MaxBodyBytes)
		_ = rc.SetReadDeadline(time.Time{})
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				refuseUnread(w, http.StatusRequestEntityTooLarge, codeTooLarge,
					fmt.Sprintf("Request body too large: the limit is %d bytes", mbe.Limit))
				return
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				refuseUnread(w, http.StatusRequestTimeout, codeBodyTimeout,
					fmt.Sprintf("Request timeout: the request body did not arrive within %v", d.bodyTimeout()))
				return
			}
			refuseUnread(w, http.StatusBadRequest, codeParseError, "Could not read the request body")
			return
		}
		if !json.Valid(body) {
			writeError(w, http.StatusBadRequest, codeParseError, "Parse error: the request body is not valid JSON")
			return
		}
		var head messageHead
		if body[firstNonSpace(body)] == '{' {
			_ = json.Unmarshal(body, &head)
		}
		if msg := checkMessage(body, &head); msg != "" {
			writeError(w, http.StatusBadRequest, codeInvalidRequest, msg)
			return
		}
		li := logInfoFrom(r.Context())
		li.rpc, li.id = head.Method, head.ID
		r.Body = &bodyReader{body}
		r.ContentLength = int64(len(body))
		if len(body) >= largeBody {
			defer d.memory.begin(int64(len(body)))()
		}
		next.ServeHTTP(w, r)
	})
}

// bodyTimeout is bodyReadTimeout, or the test's own.
func (d *Daemon) bodyTimeout() time.Duration {
	if d.bodyReadTimeout > 0 {
		return d.bodyReadTimeout
	}
	return bodyReadTimeout
}

// maxPrealloc is the most readAll allocates on the word of Content-Length
// before the bytes arrive; a larger body grows the buffer as it comes.
const maxPrealloc = 64 << 10

// readAll is io.ReadAll with a buffer sized from Content-Length (when the
// client sent one within the cap): it starts at up to maxPrealloc and
// doubles as the bytes arrive, up to the announced length, so a large body
// is read with about its own size in garbage (append's 1.25× growth made
// four times as much) and a client that announces a large body and sends
// little gets a buffer the size of what it sent.
func readAll(r io.Reader, contentLength, max int64) ([]byte, error) {
	if contentLength <= 0 || contentLength > max {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, min(contentLength+1, maxPrealloc)) // +1: EOF is seen without growing
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			want := min(2*int64(cap(b)), contentLength+1)
			if want <= int64(cap(b)) { // longer than announced: the cap's reader stops it
				want = 2 * int64(cap(b))
			}
			nb := make([]byte, len(b), want)
			copy(nb, b)
			b = nb
		}
	}
}

func firstNonSpace(b []byte) int {
	for i, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return i
		}
	}
	return 0
}

// ---- authentication ----

func identityFrom(ctx context.Context) (Identity, bool) {
	li, _ := ctx.Value(logKey{}).(*logInfo)
	if li == nil || !li.authed {
		return Identity{}, false
	}
	return li.ident, true
}

// authenticate requires a bearer token that one of the checkers accepts;
// anything else gets 401 with WWW-Authenticate: Bearer (RFC 6750), naming
// the OAuth metadata when there is some.
func (d *Daemon) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := bearer(r)
		if !ok {
			d.unauthorized(w, "", "Unauthorized: this server needs an Authorization: Bearer <token> header")
			return
		}
		var id Identity
		var err error
		scope := false
		for _, c := range d.opts.Checkers {
			if id, err = c.Check(r.Context(), token); err == nil {
				break
			}
			scope = scope || errors.Is(err, ErrInsufficientScope)
		}
		if err != nil && scope {
			d.challenge(w, http.StatusForbidden, codeForbidden, `error="insufficient_scope"`,
				"Forbidden: the token is valid but none of its scopes grants a safety tier on this server")
			return
		}
		if err != nil || id.Name == "" {
			d.unauthorized(w, `error="invalid_token"`, "Unauthorized: the bearer token is not valid for this server")
			return
		}
		li, _ := r.Context().Value(logKey{}).(*logInfo)
		if li == nil { // not behind logRequests
			li = &logInfo{}
			r = r.WithContext(context.WithValue(r.Context(), logKey{}, li))
		}
		li.client, li.ident, li.authed = id.Name, id, true
		next.ServeHTTP(w, r)
	})
}

// bearer is the token of an "Authorization: Bearer TOKEN" header: two
// fields separated by white space, the first "Bearer" in any case.
func bearer(r *http.Request) (string, bool) {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	i := strings.IndexAny(h, " \t")
	if i < 0 || !strings.EqualFold(h[:i], "Bearer") {
		return "", false
	}
	token := strings.TrimLeft(h[i:], " \t")
	if token == "" || strings.ContainsAny(token, " \t\r\n\v\f") {
		return "", false
	}
	return token, true
}

func (d *Daemon) unauthorized(w http.ResponseWriter, param, msg string) {
	d.challenge(w, http.StatusUnauthorized, codeUnauthorized, param, msg)
}

// challenge answers status with a WWW-Authenticate: Bearer challenge.
func (d *Daemon) challenge(w http.ResponseWriter, status, code int, param, msg string) {
	params := []string{`realm="tmux-mcp"`}
	if param != "" {
		params = append(params, param)
	}
	if d.opts.ResourceMetadataURL != "" {
		params = append(params, "resource_metadata="+strconv.Quote(d.opts.ResourceMetadataURL))
	}
	w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
	refuseUnread(w, status, code, msg)
}

// tokenInfo is an Identity as the SDK carries it to each request.
func tokenInfo(id Identity) *auth.TokenInfo {
	return &auth.TokenInfo{UserID: id.Name, Expiration: id.Expiry, Extra: map[string]any{tierKey: id.Tier, scopeKey: id.Scope}}
}

// tokenInfos caches the TokenInfo of identities that never expire (static
// tokens: a handful), which the SDK and identify only read, so a request
// does not build one and its map each time. JWT identities, each with its
// own expiry, are built per request.
type tokenInfos struct{ m sync.Map } // Identity -> *auth.TokenInfo

func (c *tokenInfos) get(id Identity) *auth.TokenInfo {
	if !id.Expiry.IsZero() {
		return tokenInfo(id)
	}
	if ti, ok := c.m.Load(id); ok {
		return ti.(*auth.TokenInfo)
	}
	ti, _ := c.m.LoadOrStore(id, tokenInfo(id))
	return ti.(*auth.TokenInfo)
}

const (
	tierKey  = "tmux-mcp/tier"
	scopeKey = "tmux-mcp/scope"
)

// ---- limits ----

// inflightGrace is how long a request over its client's in-flight limit
// waits for a slot before it is refused. A client may send its next request
// as soon as it has read an answer, while the server is still finishing the
// previous one (the SDK closes a stateless request's session, the request log
// is written) and still counts it: without the wait a client that never has
// more than the limit outstanding is refused now and then on a busy machine.
const inflightGrace = 500 * time.Millisecond

// inflightTable counts each client's requests in flight.
type inflightTable struct {
	max     int
	grace   time.Duration
	mu      sync.Mutex
	n       map[clientKey]int
	waiting int           // acquires waiting for a slot
	freed   chan struct{} // closed and replaced by a release while any wait
}

// clientKey is a client as the limits count it: token name and session.
type clientKey struct{ name, session string }

func newInflightTable(max int) *inflightTable {
	return &inflightTable{max: max, grace: inflightGrace, n: map[clientKey]int{}, freed: make(chan struct{})}
}

// acquire takes a slot for key, waiting up to the table's grace for one to
// free; false when none did or ctx ended first.
func (t *inflightTable) acquire(ctx context.Context, key clientKey) bool {
	var timeout <-chan time.Time
	for {
		t.mu.Lock()
		if t.n[key] < t.max {
			t.n[key]++
			t.mu.Unlock()
			return true
		}
		freed := t.freed
		t.waiting++
		t.mu.Unlock()
		if timeout == nil {
			timer := time.NewTimer(t.grace)
			defer timer.Stop()
			timeout = timer.C
		}
		var ok bool
		select {
		case <-freed:
			ok = true
		case <-timeout:
		case <-ctx.Done():
		}
		t.mu.Lock()
		t.waiting--
		t.mu.Unlock()
		if !ok {
			return false
		}
	}
}

func (t *inflightTable) release(key clientKey) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n[key]--; t.n[key] <= 0 {
		delete(t.n, key)
	}
	if t.waiting > 0 { // the common case, nobody waiting, allocates nothing
		close(t.freed)
		t.freed = make(chan struct{})
	}
}

// limit enforces the caps: at most MaxInFlight requests in flight per
// client (token and session), and at most MaxSessions stateful sessions:
// a request that would exceed either gets 429 and a JSON-RPC error saying
// which. Streams (the GET stream, subscriptions/listen) owe no answer and
// are not counted as requests in flight.
func (d *Daemon) limit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, _ := identityFrom(r.Context())
		listen := r.Method == http.MethodPost && logInfoFrom(r.Context()).rpc == "subscriptions/listen"
		if r.Method == http.MethodPost && !listen {
			key := clientKey{id.Name, r.Header.Get(headerSessionID)}
			if !d.limits.acquire(r.Context(), key) {
				w.Header().Set("Retry-After", "1")
				writeError(w, http.StatusTooManyRequests, codeLimitExceeded,
					fmt.Sprintf("Too many requests in flight for client %q (the limit is %d per client, --max-inflight): wait for an answer before sending more", id.Name, d.limits.max))
				return
			}
			defer d.limits.release(key)
			d.requests.Add(1)
			defer d.requests.Add(-1)
		}
		if listen || r.Method == http.MethodPost && r.Header.Get(headerSessionID) == "" && !useStateless(r) {
			// A new stateful session (initialize), or a 2026-07-28 listen
			// stream, which holds a session of its own in the SDK for as
			// long as it is open: both count against --max-sessions, or
			// one token could open streams without end.
			if !d.sessions.reserve() {
				w.Header().Set("Retry-After", "5")
				writeError(w, http.StatusTooManyRequests, codeLimitExceeded,
					fmt.Sprintf("Too many sessions: the server holds its limit of %d (--max-sessions, counting subscriptions/listen streams); close idle sessions (HTTP DELETE) or streams, or try again later", d.sessions.max))
				return
			}
			defer d.sessions.unreserve()
		}
		if listen {
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			defer d.listens.add(id.Name, cancel)()
			r = r.WithContext(ctx)
		}
		next.ServeHTTP(w, r)
	})
}
