package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
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

// Len is how much has been written so far, to read a later part from.
func (l *lockedBuffer) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Len()
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
// `serve --http 127.0.0.1:0` plus args, with the test's tmux socket, env
// (e.g. TMUX_MCP_HTTP_TOKEN=...), and HOME and XDG_CONFIG_HOME in a
// temporary directory so nothing lands in the user's config. It returns
// once the server has logged its URL and /healthz answers 200, and stops
// the process (SIGINT, then SIGKILL) at cleanup.
func startHTTPD(t testing.TB, ts *tmuxtest.Server, args []string, env ...string) *httpd {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(httpdBinary(), append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(tmuxtest.CleanEnv(), "TMUX_MCP_SOCKET="+ts.Socket.Name, "TMUX_MCP_TMUX_BIN="+ts.Bin,
		"HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"))
	cmd.Env = append(cmd.Env, env...)
	h := &httpd{cmd: cmd, log: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = h.log, h.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(h.done) }()
	t.Cleanup(func() { h.stop(t) })
	deadline := time.Now().Add(15 * time.Second)
	for h.Endpoint == "" {
		select {
		case <-h.done:
			t.Fatalf("serve --http exited before serving (%v): %s", cmd.ProcessState, tail(h.log.String(), 2000))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve --http logged no URL within 15 s: %s", tail(h.log.String(), 2000))
		}
		h.Endpoint = servingURL(h.log.String())
		time.Sleep(10 * time.Millisecond)
	}
	h.Base = strings.TrimSuffix(h.Endpoint, "/mcp")
	resp, err := http.Get(h.Base + "/healthz")
	if err != nil {
		t.Fatalf("/healthz: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz: %s", resp.Status)
	}
	return h
}

// servingURL finds the URL in the server's "serving" log record (JSON
// lines on stderr), or returns "".
func servingURL(log string) string {
	for _, line := range strings.Split(log, "\n") {
		var rec struct{ Msg, URL string }
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "serving MCP over streamable HTTP" {
			return rec.URL
		}
	}
	return ""
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

// loadHTTPClient is an HTTP client of its own (its own connection pool, as
// a separate agent process has) that presents token through bearer (see
// http_test.go).
func loadHTTPClient(token string) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 16
	return &http.Client{Transport: bearer{token: token, base: tr}}
}

// dialHTTPD connects a Go SDK client to the server with token, asking for
// protocolVersion ("" for the SDK's newest).
func dialHTTPD(ctx context.Context, h *httpd, token, protocolVersion string, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	tr := &mcp.StreamableClientTransport{Endpoint: h.Endpoint, HTTPClient: loadHTTPClient(token), MaxRetries: -1}
	var so *mcp.ClientSessionOptions
	if protocolVersion != "" {
		so = &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion}
	}
	return mcp.NewClient(&mcp.Implementation{Name: "e2e-http", Version: "0"}, opts).Connect(ctx, tr, so)
}
