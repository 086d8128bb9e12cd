package cli

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/httpserve"
	"github.com/tmux-mcp/tmux-mcp/internal/metrics"
	"github.com/tmux-mcp/tmux-mcp/internal/server"
)

// serveHTTP runs the streamable HTTP daemon (serve --http ADDR) until a
// signal: exit status 2 for a configuration that must not be served (a
// non-loopback address without TLS or --insecure-remote, an exposed tokens
// file), 1 when serving fails.
func serveHTTP(ctx context.Context, srv *server.Server, cfg config.Config, logger *slog.Logger) int {
	h := cfg.HTTP
	if (h.TLSCert == "") != (h.TLSKey == "") {
		logger.Error("--tls-cert and --tls-key go together")
		return 2
	}
	warn, err := httpserve.CheckBind(h.Addr, h.TLSCert != "", h.InsecureRemote)
	if err != nil {
		logger.Error(err.Error())
		return 2
	}
	if warn != "" {
		logger.Warn(warn)
	}
	if h.Metrics != "" {
		warn, err := httpserve.CheckMetricsBind(h.Metrics, h.MetricsInsecure)
		if err != nil {
			logger.Error(err.Error())
			return 2
		}
		if warn != "" {
			logger.Warn(warn)
		}
	}
	var tlsConfig *tls.Config
	scheme := "http"
	if h.TLSCert != "" {
		pair, err := tls.LoadX509KeyPair(h.TLSCert, h.TLSKey)
		if err != nil {
			logger.Error("loading the TLS certificate", "error", err)
			return 2
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
		scheme = "https"
	}
	ln, err := net.Listen("tcp", h.Addr)
	if err != nil {
		logger.Error("listening", "error", err)
		return 1
	}
	url := scheme + "://" + ln.Addr().String() + httpserve.Endpoint
	cr, err := httpserve.LoadCredentials(ctx, cfg, url, logger)
	if err != nil {
		_ = ln.Close()
		logErrors(logger, err)
		return 2
	}
	d, err := httpserve.New(httpserve.Options{
		Server: srv, HTTP: h, Checkers: cr.Checkers, Logger: logger, Version: Version(),
		OAuthMetadata: cr.OAuthMetadata, ResourceMetadataURL: cr.ResourceMetadataURL,
	})
	if err != nil {
		_ = ln.Close()
		logger.Error(err.Error())
		return 2
	}
	if h.Metrics != "" {
		stop, err := serveMetrics(ctx, h.Metrics, srv, logger)
		if err != nil {
			_ = ln.Close()
			logger.Error("listening for metrics", "error", err)
			return 1
		}
		defer stop()
	}
	logger.Info("serving MCP over streamable HTTP", "url", url, "safety", cfg.Safety.String(),
		"idle_timeout", h.IdleTimeout.String(), "max_sessions", h.MaxSessions, "max_inflight", h.MaxInFlight,
		"max_connections", d.MaxConnections())
	if cr.TokensFile != nil {
		stop := reloadOnHangup(ctx, cr.TokensFile, d, logger)
		defer stop()
	}
	remove, err := noteDaemon(url)
	if err != nil {
		logger.Warn("doctor will not find this daemon: its address file was not written", "error", err)
	}
	defer remove()
	if err := d.Serve(ctx, ln, tlsConfig); err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Error("HTTP server stopped", "error", err)
		return 1
	}
	return 0
}

// serveMetrics turns metrics on, counting every tool of the registry, and
// serves them at addr on GET /metrics in the Prometheus text format, on a
// listener of its own: the address is the access control (no token), so
// it is kept apart from /mcp. The returned func stops it.
func serveMetrics(ctx context.Context, addr string, srv *server.Server, logger *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	reg := metrics.New(srv.ToolNames())
	metrics.Enable(reg)
	metrics.HostStates(srv.HostStates)
	mux := http.NewServeMux()
	mux.Handle("/metrics", reg)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 16 << 10,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	go func() { _ = hs.Serve(ln) }()
	logger.Info("serving metrics", "url", "http://"+ln.Addr().String()+"/metrics")
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}, nil
}

// reloadOnHangup reads the tokens file again on every SIGHUP, so a token
// is revoked or rotated without a restart: the new tokens take effect for
// the next request, and what the clients of a removed or replaced token
// hold open (sessions, listen streams) is ended. A file that no longer
// passes the checks (permissions, syntax) is not loaded: the tokens in use
// stay, and the error is logged. The returned func stops listening.
func reloadOnHangup(ctx context.Context, tf *httpserve.TokensFile, d *httpserve.Daemon, logger *slog.Logger) (stop func()) {
	return onSignal(ctx.Done(), syscall.SIGHUP, func() {
		changed, err := tf.Reload()
		if err != nil {
			logErrors(logger, fmt.Errorf("SIGHUP: the tokens file was not reloaded, the tokens in use stay: %w", err))
			return
		}
		ended := d.Revoke(changed)
		logger.Info("tokens file reloaded", "file", tf.Path(), "tokens", tf.Len(),
			"revoked", len(changed), "sessions_and_streams_ended", ended)
	})
}

// doctorHTTP reports the HTTP daemon's credentials and whether one answers
// at the configured address.
func doctorHTTP(ctx context.Context, cfg config.Config, say func(label, format string, args ...any)) {
	h := cfg.HTTP
	switch {
	case h.TokensFile != "":
		say("http tokens", "tokens file %s", h.TokensFile)
	case h.Token != "":
		say("http tokens", "one token from %s", config.HTTPTokenEnv)
	default:
		path, err := httpserve.DefaultTokenPath()
		switch {
		case err != nil:
			say("http tokens", "no user config directory for a generated token: set %s or --tokens-file", config.HTTPTokenEnv)
		case fileExists(path):
			say("http tokens", "generated token in %s", path)
		default:
			say("http tokens", "serve --http will generate a token into %s", path)
		}
	}
	if h.Addr == "" {
		if !doctorDaemons(ctx, say) {
			say("http server", "not configured (serve --http ADDR, or TMUX_MCP_HTTP), and no daemon of this user runs")
		}
		return
	}
	say("http server", "%s", probeHealth(ctx, h))
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// probeHealth asks /healthz at the configured address.
func probeHealth(ctx context.Context, h config.HTTP) string {
	scheme := "http"
	client := &http.Client{Timeout: 2 * time.Second}
	if h.TLSCert != "" {
		scheme = "https"
		// The certificate may be self-signed: only liveness is checked here.
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec
	}
	url := scheme + "://" + h.Addr + "/healthz"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Sprintf("bad address %s: %v", h.Addr, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Sprintf("none answers at %s (start it with tmux-mcp serve --http %s)", url, h.Addr)
	}
	defer resp.Body.Close()
	var body struct {
		Status, Version string
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&body) != nil || body.Status != "ok" {
		return fmt.Sprintf("%s answers %s, not a tmux-mcp health check", url, resp.Status)
	}
	return fmt.Sprintf("running at %s%s (version %s)", scheme+"://"+h.Addr, httpserve.Endpoint, body.Version)
}
