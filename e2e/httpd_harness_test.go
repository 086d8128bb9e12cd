package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// httpd is one `tmux-mcp serve --http` process started by a test, on a
// loopback port of its own, serving the test's isolated tmux server.
type httpd struct {
	Base     string // http://127.0.0.1:PORT
	Endpoint string // Base + "/mcp"
	cmd      *exec.Cmd
	log      *lockedBuffer
	done     chan struct{}
}

// lockedBuffer collects the server's stderr (request logs, audit records)
// so a failing test can show its tail.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// httpdBinary is the binary the HTTP tests start: the one TestMain built,
// or TMUX_MCP_E2E_HTTP_BIN to prove a release build the same way.
func httpdBinary() string {
	if b := os.Getenv("TMUX_MCP_E2E_HTTP_BIN"); b != "" {
		return b
	}
	return binary
}

// startHTTPD is the one place that knows how the HTTP server is started:
// `serve --http 127.0.0.1:PORT` plus args, with the test's tmux socket and
// env (e.g. TMUX_MCP_HTTP_TOKEN=...). It returns once /healthz answers 200,
// and stops the process (SIGTERM, then SIGKILL) at cleanup. A port taken
// between choosing and binding it is retried with another.
func startHTTPD(t testing.TB, ts *tmuxtest.Server, args []string, env ...string) *httpd {
	t.Helper()
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		h, err := tryStartHTTPD(ts, args, env)
		if err == nil {
			t.Cleanup(func() { h.stop(t) })
			return h
		}
		lastErr = err
	}
	t.Fatalf("serve --http did not come up: %v", lastErr)
	return nil
}

func tryStartHTTPD(ts *tmuxtest.Server, args []string, env []string) (*httpd, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	_ = l.Close()
	cmd := exec.Command(httpdBinary(), append([]string{"serve", "--http", addr}, args...)...)
	cmd.Env = append(tmuxtest.CleanEnv(), "TMUX_MCP_SOCKET="+ts.Socket.Name, "TMUX_MCP_TMUX_BIN="+ts.Bin)
	cmd.Env = append(cmd.Env, env...)
	h := &httpd{Base: "http://" + addr, Endpoint: "http://" + addr + "/mcp", cmd: cmd, log: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = h.log, h.log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = cmd.Wait(); close(h.done) }()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-h.done:
			return nil, fmt.Errorf("exited before serving (%v): %s", cmd.ProcessState, tail(h.log.String(), 2000))
		default:
		}
		resp, err := http.Get(h.Base + "/healthz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return h, nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	<-h.done
	return nil, fmt.Errorf("no /healthz within 15 s: %s", tail(h.log.String(), 2000))
}

// stop ends the server gracefully and fails the test if it needs SIGKILL.
func (h *httpd) stop(t testing.TB) {
	select {
	case <-h.done:
		return
	default:
	}
	_ = h.cmd.Process.Signal(os.Interrupt)
	select {
	case <-h.done:
	case <-time.After(10 * time.Second):
		_ = h.cmd.Process.Kill()
		<-h.done
		t.Errorf("serve --http did not exit within 10 s of SIGINT; log tail:\n%s", tail(h.log.String(), 2000))
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// newToken is a random bearer token as a user would generate one.
func newToken() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// writeTokensFile writes `TOKEN NAME` lines to a 0600 file in dir, the
// --tokens-file format of issue 11.
func writeTokensFile(t testing.TB, dir string, tokens, names []string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# tokens for the e2e HTTP tests\n")
	for i, tok := range tokens {
		fmt.Fprintf(&b, "%s %s\n", tok, names[i])
	}
	p := filepath.Join(dir, "tokens")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// bearer adds the Authorization header to every request, the way an MCP
// client configured with a header (Claude Code's --header, VS Code's
// headers) does.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// httpClient is an HTTP client of its own (its own connection pool, as a
// separate agent process has) that presents token.
func httpClient(token string) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 16
	return &http.Client{Transport: bearer{token: token, base: tr}}
}

// dialHTTPD connects a Go SDK client to the server with token, asking for
// protocolVersion ("" for the SDK's newest).
func dialHTTPD(ctx context.Context, h *httpd, token, protocolVersion string, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	tr := &mcp.StreamableClientTransport{Endpoint: h.Endpoint, HTTPClient: httpClient(token), MaxRetries: -1}
	var so *mcp.ClientSessionOptions
	if protocolVersion != "" {
		so = &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion}
	}
	return mcp.NewClient(&mcp.Implementation{Name: "e2e-http", Version: "0"}, opts).Connect(ctx, tr, so)
}
