package httpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
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
	codeParseError    = -32700
	codeUnauthorized  = -32001
	codeForbidden     = -32003
	codeTooLarge      = -32004
	codeLimitExceeded = -32005
)

// writeError answers with an HTTP status and a JSON-RPC error without id,
// which the spec allows for transport-level rejections and which MCP
// clients (the Go SDK's among them) surface as the call's error.
func writeError(w http.ResponseWriter, status, code int, msg string) {
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error":   map[string]any{"code": code, "message": msg},
	})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// ---- request logs ----

// logInfo is filled in by inner layers for the log line of a request.
type logInfo struct {
	client string // the token's name, once authenticated
	rpc    string // the JSON-RPC method of a POST
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
		attrs := []any{"http_method", r.Method, "path", r.URL.Path, "status", sw.status,
			"duration_ms", float64(time.Since(start).Microseconds()) / 1000}
		if li.rpc != "" {
			attrs = append(attrs, "method", li.rpc)
		}
		if li.client != "" {
			attrs = append(attrs, "client", li.client)
		}
		if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
			attrs = append(attrs, "remote", host)
		}
		d.log.Info("http request", attrs...)
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
			writeError(w, http.StatusForbidden, codeForbidden,
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
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, d.opts.MaxBodyBytes))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				writeError(w, http.StatusRequestEntityTooLarge, codeTooLarge,
					fmt.Sprintf("Request body too large: the limit is %d bytes", mbe.Limit))
				return
			}
			writeError(w, http.StatusBadRequest, codeParseError, "Could not read the request body")
			return
		}
		if !json.Valid(body) {
			writeError(w, http.StatusBadRequest, codeParseError, "Parse error: the request body is not valid JSON")
			return
		}
		var head struct {
			Method string `json:"method"`
		}
		if body[firstNonSpace(body)] == '{' {
			_ = json.Unmarshal(body, &head)
		}
		logInfoFrom(r.Context()).rpc = head.Method
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
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

type identityKey struct{}

func identityFrom(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
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
		logInfoFrom(r.Context()).client = id.Name
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), identityKey{}, id)))
	})
}

func bearer(r *http.Request) (string, bool) {
	f := strings.Fields(r.Header.Get("Authorization"))
	if len(f) != 2 || !strings.EqualFold(f[0], "Bearer") {
		return "", false
	}
	return f[1], true
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
	writeError(w, status, code, msg)
}

// tokenInfo is an Identity as the SDK carries it to each request.
func tokenInfo(id Identity) *auth.TokenInfo {
	return &auth.TokenInfo{UserID: id.Name, Expiration: id.Expiry, Extra: map[string]any{tierKey: id.Tier}}
}

const tierKey = "tmux-mcp/tier"

// ---- limits ----

// inflightTable counts each client's requests in flight.
type inflightTable struct {
	max int
	mu  sync.Mutex
	n   map[string]int
}

func newInflightTable(max int) *inflightTable {
	return &inflightTable{max: max, n: map[string]int{}}
}

func (t *inflightTable) acquire(key string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n[key] >= t.max {
		return false
	}
	t.n[key]++
	return true
}

func (t *inflightTable) release(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n[key]--; t.n[key] <= 0 {
		delete(t.n, key)
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
		stream := r.Method != http.MethodPost || logInfoFrom(r.Context()).rpc == "subscriptions/listen"
		if !stream {
			key := id.Name + "\x00" + r.Header.Get(headerSessionID)
			if !d.limits.acquire(key) {
				w.Header().Set("Retry-After", "1")
				writeError(w, http.StatusTooManyRequests, codeLimitExceeded,
					fmt.Sprintf("Too many requests in flight for client %q (the limit is %d per client, --max-inflight): wait for an answer before sending more", id.Name, d.limits.max))
				return
			}
			defer d.limits.release(key)
			d.requests.Add(1)
			defer d.requests.Add(-1)
		}
		if r.Method == http.MethodPost && r.Header.Get(headerSessionID) == "" && !useStateless(r) {
			// A new stateful session (initialize).
			if !d.sessions.reserve() {
				w.Header().Set("Retry-After", "5")
				writeError(w, http.StatusTooManyRequests, codeLimitExceeded,
					fmt.Sprintf("Too many sessions: the server holds its limit of %d (--max-sessions); close idle sessions (HTTP DELETE) or try again later", d.sessions.max))
				return
			}
			defer d.sessions.unreserve()
		}
		next.ServeHTTP(w, r)
	})
}
