// Package httpserve serves tmux-mcp over streamable HTTP (serve --http):
// one daemon for many MCP clients, with bearer-token authentication on by
// default, per-client state, browser-facing safety (Origin allowlist,
// DNS-rebinding Host check, body and concurrency caps), request logs and a
// graceful shutdown. The MCP side is the same server as over stdio
// (internal/server); this package is only the HTTP stack around it.
//
// Both protocol generations share one endpoint, /mcp. The Go SDK's stateful
// handler negotiates up to 2025-11-25 (sessions, a GET stream, resumability)
// and rejects 2026-07-28 requests with -32022; its stateless handler serves
// 2026-07-28 (subscriptions/listen) but answers GET and DELETE with 405 and
// ignores Mcp-Session-Id. The router (route) sends a request to the
// stateless handler when it carries no Mcp-Session-Id and its
// MCP-Protocol-Version header is 2026-07-28 or later (2026-07-28 clients
// must send the header on every request, and the SDK's client does, even
// on server/discover), and everything else to the stateful one. See the
// README's HTTP section.
package httpserve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/net/netutil"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/eventstore"
	"github.com/tmux-mcp/tmux-mcp/internal/oauth"
	"github.com/tmux-mcp/tmux-mcp/internal/server"
)

// Endpoint is the path MCP is served at.
const Endpoint = "/mcp"

// Header names the router and the limits read.
const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerMethod          = "Mcp-Method"
)

// statelessVersion is the first protocol revision without sessions
// (SEP-2575/SEP-2567): only the SDK's stateless handler serves it.
const statelessVersion = "2026-07-28"

// DefaultMaxBodyBytes caps a request body: a tool call's arguments are a
// few KB; load_buffer content is the largest legitimate payload.
const DefaultMaxBodyBytes = 4 << 20

// eventStoreBytes bounds the memory kept to replay SSE events to clients
// that resume with Last-Event-ID (stateful sessions), bookkeeping included:
// the oldest events are dropped first, so a long session does not grow the
// daemon (the SDK's MemoryEventStore keeps an entry per call; see
// internal/eventstore).
const eventStoreBytes = 8 << 20

// Timeouts of the HTTP server. There is deliberately no WriteTimeout: a
// wait may last up to 120 s and an SSE stream for hours. Nor is there a
// ReadTimeout, which would also end the streams; the request body gets
// its own deadline instead (bodyReadTimeout, see readBody).
const (
	readHeaderTimeout = 10 * time.Second
	idleTimeout       = 2 * time.Minute
)

// bodyReadTimeout bounds reading one request body, the largest
// (DefaultMaxBodyBytes) included: a client trickling a body would
// otherwise hold its connection, a goroutine and the buffer for ever.
const bodyReadTimeout = 30 * time.Second

// maxHeaderBytes caps a request's header block (Go's default is 1 MB): a
// bearer token, even a JWT with many scopes, is a few KB.
const maxHeaderBytes = 64 << 10

// Shutdown budget after SIGTERM: calls in flight get answerBudget to
// answer (waits end at once with what they have), and the whole stop,
// streams closed and client state released, fits in stopBudget.
var (
	answerBudget = 2 * time.Second
	stopBudget   = 4500 * time.Millisecond
)

// Options configure a Daemon.
type Options struct {
	Server   *server.Server
	HTTP     config.HTTP    // limits, origins, idle timeout
	Checkers []TokenChecker // tried in order; at least one
	Logger   *slog.Logger   // request logs and errors; nil discards
	Version  string         // /healthz

	// OAuthMetadata, when set, is served unauthenticated at
	// /.well-known/oauth-protected-resource (RFC 9728), and 401 answers name
	// ResourceMetadataURL in WWW-Authenticate.
	OAuthMetadata       http.Handler
	ResourceMetadataURL string

	MaxBodyBytes int64 // 0: DefaultMaxBodyBytes

	// MaxConnections caps the connections open at once (see connlimit.go);
	// 0 derives it from HTTP.MaxSessions and the open-file limit.
	MaxConnections int
}

// Daemon is the HTTP face of one tmux-mcp server.
type Daemon struct {
	opts      Options
	log       *slog.Logger
	ms        *mcp.Server
	stateful  *mcp.StreamableHTTPHandler
	stateless *mcp.StreamableHTTPHandler
	sessions  *sessionTable
	listens   listenStreams     // open subscriptions/listen streams, for Revoke
	events    *eventstore.Store // what stateful sessions may replay
	limits    *inflightTable
	origins   originPolicy
	requests  atomic.Int64 // requests in flight that owe an answer (not streams)
	infos     tokenInfos
	memory    memoryGuard // large request bodies (memory.go)

	base       context.Context // parent of every request's context
	cancelBase context.CancelFunc

	bodyReadTimeout time.Duration // tests: 0 is bodyReadTimeout
	maxConns        int
}

// MaxConnections is how many connections the daemon keeps open at once;
// more wait in the kernel's backlog until one closes.
func (d *Daemon) MaxConnections() int { return d.maxConns }

// New builds the daemon; Listen-time details (the default allowed origins
// name the port) come with Serve.
func New(opts Options) (*Daemon, error) {
	if opts.Server == nil {
		return nil, errors.New("httpserve: no server")
	}
	if len(opts.Checkers) == 0 {
		return nil, errors.New("httpserve: no credentials: authentication cannot be turned off")
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.HTTP.MaxSessions <= 0 {
		opts.HTTP.MaxSessions = config.DefaultMaxSessions
	}
	if opts.HTTP.MaxInFlight <= 0 {
		opts.HTTP.MaxInFlight = config.DefaultMaxInFlight
	}
	if opts.HTTP.IdleTimeout <= 0 {
		opts.HTTP.IdleTimeout = config.DefaultIdleTimeout
	}
	d := &Daemon{opts: opts, log: opts.Logger, limits: newInflightTable(opts.HTTP.MaxInFlight)}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	d.base, d.cancelBase = context.WithCancel(context.Background())
	d.sessions = newSessionTable(opts.HTTP.MaxSessions, d.releaseSession)
	d.sessions.pingEvery = opts.HTTP.IdleTimeout / 3
	d.ms = opts.Server.MCP()
	d.ms.AddReceivingMiddleware(d.identify) // outermost: the gate and the tools see the client
	d.events = eventstore.New(eventStoreBytes)
	d.maxConns = opts.MaxConnections
	if d.maxConns <= 0 {
		d.maxConns = connCap(opts.HTTP.MaxSessions, openFileLimit())
	}
	sdkLog := slog.New(levelFilter{d.log.Handler(), slog.LevelWarn})
	get := func(*http.Request) *mcp.Server { return d.ms }
	d.stateful = mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
		EventStore:          d.events,
		SessionTimeout:      opts.HTTP.IdleTimeout,
		MaxRequestBodyBytes: opts.MaxBodyBytes,
		Logger:              sdkLog,
	})
	d.stateless = mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
		Stateless:                    true,
		PropagateRequestCancellation: true,
		MaxRequestBodyBytes:          opts.MaxBodyBytes,
		Logger:                       sdkLog,
	})
	d.origins = newOriginPolicy(opts.HTTP.AllowedOrigins)
	return d, nil
}

// Handler is the whole HTTP surface: /healthz, the OAuth metadata when
// configured, and /mcp behind Origin check, body cap, authentication and
// limits; every request is logged.
func (d *Daemon) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", d.healthz)
	if d.opts.OAuthMetadata != nil {
		// RFC 9728 §3.1: the well-known suffix followed by the resource's
		// path; clients that find nothing there try the bare suffix.
		mux.Handle(oauth.WellKnownPath, d.opts.OAuthMetadata)
		mux.Handle(oauth.WellKnownPath+Endpoint, d.opts.OAuthMetadata)
	}
	mux.Handle(Endpoint, d.guard(http.HandlerFunc(d.route)))
	return d.logRequests(d.jsonRejections(mux))
}

// guard is what stands before the SDK's handlers on /mcp: Origin check,
// authentication, body cap, the SDK's token binding and the limits.
func (d *Daemon) guard(next http.Handler) http.Handler {
	// The SDK's RequireBearerToken puts the identity where its handler reads
	// it (auth.TokenInfoFromContext): it binds each stateful session to the
	// token that created it (403 for another token) and gives every request
	// its TokenInfo. Our authenticate runs first: it answers 401 with a
	// WWW-Authenticate header in every case, which the SDK's only sends
	// when OAuth metadata or scopes are configured.
	bind := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		id, ok := identityFrom(ctx)
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return d.infos.get(id), nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	return d.front(bind(d.limit(d.gateSessions(next))))
}

// front is the first checks of every /mcp request, in their order: the
// Origin, then the bearer token, which needs only the headers, and only
// then the body. A client without a valid token never has its body read
// (nor a buffer sized from the Content-Length it claims).
func (d *Daemon) front(next http.Handler) http.Handler {
	return d.checkOrigin(d.authenticate(d.readBody(next)))
}

// route sends 2026-07-28 requests without a session to the stateless
// handler and everything else (initialize, requests of a session, the GET
// stream, DELETE) to the stateful one.
func (d *Daemon) route(w http.ResponseWriter, r *http.Request) {
	if useStateless(r) {
		d.stateless.ServeHTTP(w, r)
		return
	}
	d.stateful.ServeHTTP(w, r)
}

func useStateless(r *http.Request) bool {
	return r.Header.Get(headerSessionID) == "" && r.Header.Get(headerProtocolVersion) >= statelessVersion
}

func (d *Daemon) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprintf(w, "{\"status\":\"ok\",\"version\":%q}\n", d.opts.Version)
}

// Serve serves on ln (with TLS when tlsConfig is set) until ctx ends, then
// stops gracefully: no new connections, calls in flight are cancelled
// through Server.Shutdown (waits answer with what they have) and answered,
// sessions and streams are closed and their state released, all within
// stopBudget.
func (d *Daemon) Serve(ctx context.Context, ln net.Listener, tlsConfig *tls.Config) error {
	if d.origins.defaults {
		d.origins.addLoopback(ln.Addr(), tlsConfig != nil)
	}
	hs := &http.Server{
		Handler:           d.Handler(),
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return d.base },
		ErrorLog:          slog.NewLogLogger(d.log.Handler(), slog.LevelWarn),
	}
	ln = netutil.LimitListener(ln, d.maxConns) // see connlimit.go
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig) // handshakes happen on capped connections
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		d.cancelBase()
		return err
	case <-ctx.Done():
	}
	d.log.Info("signal received: stopping the HTTP server")
	stopAt := time.Now().Add(stopBudget)
	sctx, cancel := context.WithDeadline(context.Background(), stopAt)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- hs.Shutdown(sctx) }() // closes the listener now, then waits for idle connections
	d.opts.Server.Shutdown()
	answered := time.Now().Add(answerBudget)
	for d.requests.Load() > 0 && time.Now().Before(answered) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := d.requests.Load(); n > 0 {
		d.log.Warn("stopping with requests unanswered", "pending", n)
	}
	d.sessions.closeAll() // ends GET streams; each session's state is released
	d.cancelBase()        // ends whatever still runs (subscriptions/listen streams)
	select {
	case <-shut:
	case <-sctx.Done():
		_ = hs.Close()
	}
	d.sessions.waitReleased(time.Until(stopAt))
	return nil
}

// releaseSession frees what a stateful session's client held when the
// session ends (disconnect, DELETE, idle expiry, shutdown).
func (d *Daemon) releaseSession(owner server.Owner) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.opts.Server.ReleaseOwner(ctx, owner); err != nil {
		d.log.Warn("releasing a session's state", "error", err)
	}
}

// CheckBind enforces the rules for the listen address: a loopback address
// is always fine; any other needs TLS or insecureRemote (then warn is set).
// Authentication stays on either way.
func CheckBind(addr string, withTLS, insecureRemote bool) (warn string, err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%w: --http must be host:port (e.g. 127.0.0.1:8765): %w", config.ErrInvalid, err)
	}
	if isLoopbackHost(host) || withTLS {
		return "", nil
	}
	if !insecureRemote {
		return "", fmt.Errorf("%w: --http %s is not a loopback address: serve it with --tls-cert and --tls-key, or pass --insecure-remote to send tokens and terminal contents in clear", config.ErrInvalid, addr)
	}
	return "serving HTTP without TLS on a non-loopback address (--insecure-remote): bearer tokens and terminal contents cross the network in clear", nil
}

// CheckMetricsBind enforces the rule for the metrics address: it carries
// no token, so an address off loopback needs --metrics-insecure.
func CheckMetricsBind(addr string, insecure bool) (warn string, err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%w: --metrics must be host:port (e.g. 127.0.0.1:9464): %w", config.ErrInvalid, err)
	}
	if isLoopbackHost(host) {
		return "", nil
	}
	if !insecure {
		return "", fmt.Errorf("%w: --metrics %s is not a loopback address: /metrics needs no token, so anyone who reaches it reads the daemon's metrics; pass --metrics-insecure to serve it there anyway (or scrape through a tunnel or a proxy that authenticates)", config.ErrInvalid, addr)
	}
	return "serving /metrics without a token on a non-loopback address (--metrics-insecure)", nil
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// levelFilter passes only records at min or above: the SDK logs every
// session's connect and disconnect at Info.
type levelFilter struct {
	slog.Handler
	min slog.Level
}

func (f levelFilter) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= f.min && f.Handler.Enabled(ctx, l)
}

func (f levelFilter) WithAttrs(attrs []slog.Attr) slog.Handler {
	return levelFilter{f.Handler.WithAttrs(attrs), f.min}
}

func (f levelFilter) WithGroup(name string) slog.Handler {
	return levelFilter{f.Handler.WithGroup(name), f.min}
}
