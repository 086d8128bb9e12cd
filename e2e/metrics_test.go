package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/metrics"
	"github.com/tmux-mcp/tmux-mcp/internal/metrics/scrape"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// Metrics (issue 24 item 6): serve --http with --metrics on a loopback
// port of its own, driven by the Go SDK's client over real HTTP, and
// /metrics scraped over HTTP and read by a strict parser of the text
// format (internal/metrics/scrape): every counter must have moved by
// exactly what the test did, and no label value may come from a call's
// arguments, a token, a session or a host.

// metricsURL finds the address of /metrics in the daemon's "serving
// metrics" log record, or returns "".
func metricsURL(log string) string {
	for _, line := range strings.Split(log, "\n") {
		var rec struct{ Msg, URL string }
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "serving metrics" {
			return rec.URL
		}
	}
	return ""
}

// scrapeOnce GETs url and parses it strictly; the raw body comes back too.
func scrapeOnce(t *testing.T, url string) (*scrape.Exposition, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scraping %s: %v", url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading /metrics: %v", err)
	}
	body := string(raw)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("/metrics answered %s, Content-Type %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	e, err := scrape.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics is not valid exposition text: %v\n%s", err, body)
	}
	return e, body
}

// value is the value of a series, failing the test when it is absent.
func value(t *testing.T, e *scrape.Exposition, name string, labels map[string]string) float64 {
	t.Helper()
	v, ok := e.Value(name, labels)
	if !ok {
		t.Fatalf("no series %s%v", name, labels)
	}
	return v
}

// waitValue scrapes until name{labels} is want (a session's end is
// counted when the server has released it, just after the DELETE).
func waitValue(t *testing.T, url, name string, labels map[string]string, want float64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		e, body := scrapeOnce(t, url)
		if v, ok := e.Value(name, labels); ok && v == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s%v never became %v:\n%s", name, labels, want, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestHTTPMetrics scrapes a daemon before and after a known set of calls.
func TestHTTPMetrics(t *testing.T) {
	ts := tmuxtest.New(t)
	ts.MustRun("new-session", "-d", "-s", "work", "-x", "80", "-y", "24")
	victimSession(t, ts, "victim")
	out, err := ts.Run("list-panes", "-t", "work", "-F", "#{pane_id}")
	if err != nil {
		t.Fatal(err)
	}
	pane := strings.TrimSpace(out)

	// Distinctive strings the metrics must never repeat: an argument, an
	// unknown tool's name, token and host names.
	const (
		argCanary  = "%canaryArg7731"
		toolCanary = "canary_tool_9931"
		hostIdle   = "canaryhostidle"
		hostDown   = "canaryhostdown"
	)
	dir := t.TempDir()
	admin, reader, drop := newToken(), newToken(), newToken()
	tokens := filepath.Join(dir, "tokens")
	writeTokens := func(lines ...string) {
		t.Helper()
		if err := os.WriteFile(tokens, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeTokens(admin+" canaryadmin", reader+" canaryreader readonly", drop+" canarydrop")
	// Two hosts that are never reached: the ssh command is false(1), so
	// the one a call names is down, and the other was never tried.
	h := startHTTPD(t, ts, []string{"--safety", "destructive", "--tokens-file", tokens, "--metrics", "127.0.0.1:0",
		"--hosts", hostIdle + "=nowhere.invalid," + hostDown + "=nowhere.invalid", "--ssh-command", "false"})
	url := metricsURL(h.log.String())
	if url == "" || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("no loopback metrics URL logged: %q\n%s", url, tail(h.log.String(), 2000))
	}

	// Before any call: every tool a client can list is counted at 0.
	e0, _ := scrapeOnce(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	decliner := newConfirmAnswerer("decline")
	cs, err := dialHTTPD(ctx, h, admin, legacyVersion, decliner.options())
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, tool := range lt.Tools {
		tools = append(tools, tool.Name)
		ok := map[string]string{"tool": tool.Name, "outcome": "ok"}
		if v := value(t, e0, metrics.NameCalls, ok); v != 0 {
			t.Errorf("%s: %v calls before any", tool.Name, v)
		}
		if v := value(t, e0, metrics.NameLatency+"_count", map[string]string{"tool": tool.Name}); v != 0 {
			t.Errorf("%s: latency count %v before any call", tool.Name, v)
		}
	}
	if len(tools) < 50 {
		t.Fatalf("only %d tools listed", len(tools))
	}
	if v := value(t, e0, metrics.NameSessions, nil); v != 0 {
		t.Errorf("sessions before any client: %v", v)
	}

	call := func(cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	for range 3 {
		if res := call(cs, "get_pane_info", map[string]any{"pane_id": pane}); res.IsError {
			t.Fatalf("get_pane_info: %s", resultText(res))
		}
	}
	if res := call(cs, "get_pane_info", map[string]any{"pane_id": argCanary}); !res.IsError {
		t.Fatalf("get_pane_info of a bad id answered: %s", resultText(res))
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: toolCanary, Arguments: map[string]any{}}); err == nil {
		t.Fatal("a tool that does not exist answered")
	}
	// The person declines: not run, refused, one confirmation declined.
	if res := call(cs, "kill_session", map[string]any{"session_name": "victim"}); errorType(res) != "ConfirmationDeclined" || !sessionAlive(ts, "victim") {
		t.Fatalf("kill_session, declined: %s %s", errorType(res), resultText(res))
	}
	if res := call(cs, "list_sessions", map[string]any{"host": hostDown}); !res.IsError {
		t.Fatalf("list_sessions on an unreachable host answered: %s", resultText(res))
	}
	// A read-only token calling send_keys: refused at the gate.
	rs, err := dialHTTPD(ctx, h, reader, legacyVersion, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res := call(rs, "send_keys", map[string]any{"pane_id": pane, "keys": "canarykeys"}); !res.IsError {
		t.Fatalf("a read-only token sent keys: %s", resultText(res))
	}

	e, body := scrapeOnce(t, url)
	calls := func(tool, outcome string) float64 {
		return value(t, e, metrics.NameCalls, map[string]string{"tool": tool, "outcome": outcome})
	}
	checks := []struct {
		what      string
		got, want float64
	}{
		{"get_pane_info ok", calls("get_pane_info", "ok"), 3},
		{"get_pane_info tool_error", calls("get_pane_info", "tool_error"), 1},
		{"get_pane_info latency count", value(t, e, metrics.NameLatency+"_count", map[string]string{"tool": "get_pane_info"}), 4},
		{"kill_session refused", calls("kill_session", "refused"), 1},
		{"list_sessions tool_error (host unreachable)", calls("list_sessions", "tool_error"), 1},
		{"send_keys refused", calls("send_keys", "refused"), 1},
		{"send_keys ok", calls("send_keys", "ok"), 0},
		{"unknown tool", value(t, e, metrics.NameUnknownTool, nil), 1},
		{"in flight", value(t, e, metrics.NameInFlight, nil), 0},
		{"sessions", value(t, e, metrics.NameSessions, nil), 2},
		{"sessions total", value(t, e, metrics.NameSessionsTotal, nil), 2},
		{"confirmations declined", value(t, e, metrics.NameConfirmations, map[string]string{"outcome": "decline"}), 1},
		{"confirmations accepted", value(t, e, metrics.NameConfirmations, map[string]string{"outcome": "accept"}), 0},
		{"ssh hosts up", value(t, e, metrics.NameHostsUp, nil), 0},
		{"ssh hosts down", value(t, e, metrics.NameHostsDown, nil), 1},
		{"ssh hosts idle", value(t, e, metrics.NameHostsIdle, nil), 1},
		{"tokens revoked", value(t, e, metrics.NameTokensRevoked, nil), 0},
		{"reconnects", value(t, e, metrics.NameReconnects, nil), 0},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	// The exec engine (CI's second pass sets TMUX_MCP_ENGINE=exec, which the
	// daemon inherits) runs a tmux process per command and holds no
	// control client: the gauge must say so.
	execEngine := os.Getenv("TMUX_MCP_ENGINE") == "exec"
	if v := value(t, e, metrics.NameControlConns, nil); execEngine && v != 0 {
		t.Errorf("tmux control connections = %v under the exec engine, want 0", v)
	} else if !execEngine && v < 1 {
		t.Errorf("tmux control connections = %v, want at least the engine's", v)
	}
	if v := e.Sum(metrics.NameLatency+"_bucket", map[string]string{"tool": "get_pane_info", "le": "+Inf"}); v != 4 {
		t.Errorf("get_pane_info +Inf bucket %v", v)
	}
	// Every call counted once: a tool's calls over all outcomes are its
	// latency count, and the calls made are all there are.
	total := 0.0
	for _, tool := range tools {
		n := e.Sum(metrics.NameCalls, map[string]string{"tool": tool})
		if c := value(t, e, metrics.NameLatency+"_count", map[string]string{"tool": tool}); c != n {
			t.Errorf("%s: %v calls but latency count %v", tool, n, c)
		}
		total += n
	}
	if total != 7 {
		t.Errorf("%v calls counted in all, want the 7 made", total)
	}

	// Labels: tool (a listed tool), outcome (the fixed sets), le; nothing
	// the clients sent or named appears anywhere.
	outcomes := []string{"ok", "tool_error", "refused", "cancelled", "timeout", "input_required", "accept", "decline", "cancel", "unsupported", "error"}
	for _, lv := range e.LabelValues() {
		name, v, _ := strings.Cut(lv, "=")
		switch {
		case name == "tool" && slices.Contains(tools, v), name == "outcome" && slices.Contains(outcomes, v), name == "le":
		default:
			t.Errorf("label %s", lv)
		}
	}
	for _, canary := range []string{argCanary, strings.TrimPrefix(argCanary, "%"), toolCanary, hostIdle, hostDown, "canaryadmin", "canaryreader", "canarykeys", "victim", "work", admin, pane} {
		if strings.Contains(body, canary) {
			t.Errorf("/metrics contains %q", canary)
		}
	}

	// A 2026-07-28 client is asked by an input request: the first call
	// answers with the question, the SDK calls again with the accepted
	// answer, and the session is killed.
	victimSession(t, ts, "victim2")
	acceptor := newConfirmAnswerer("accept")
	ss, err := dialHTTPD(ctx, h, admin, statelessVersion, acceptor.options())
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	if res := call(ss, "kill_session", map[string]any{"session_name": "victim2"}); res.IsError || sessionAlive(ts, "victim2") {
		t.Fatalf("kill_session, accepted over 2026-07-28: %s", resultText(res))
	}
	e, _ = scrapeOnce(t, url)
	for _, c := range []struct {
		what      string
		got, want float64
	}{
		{"kill_session input_required", calls("kill_session", "input_required"), 1},
		{"kill_session ok", calls("kill_session", "ok"), 1},
		{"confirmations accepted", value(t, e, metrics.NameConfirmations, map[string]string{"outcome": "accept"}), 1},
		{"sessions (2026-07-28 has none)", value(t, e, metrics.NameSessions, nil), 2},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}

	// A DELETE ends a session: counted down once the server released it.
	if err := rs.Close(); err != nil {
		t.Fatal(err)
	}
	waitValue(t, url, metrics.NameSessions, nil, 1)

	// A tokens-file reload that removes a token counts one revocation.
	writeTokens(admin+" canaryadmin", reader+" canaryreader readonly")
	sighup(t, h, `"msg":"tokens file reloaded"`)
	waitValue(t, url, metrics.NameTokensRevoked, nil, 1)

	// The tmux server restarts under the daemon: its control client ends
	// with it, and the next call connects again. The exec engine has no
	// connection to lose.
	if execEngine {
		if err := cs.Close(); err != nil {
			t.Fatal(err)
		}
		waitValue(t, url, metrics.NameSessions, nil, 0)
		return
	}
	ts.MustRun("kill-server")
	waitValue(t, url, metrics.NameControlConns, nil, 0)
	ts.MustRun("new-session", "-d", "-s", "again", "-x", "80", "-y", "24")
	if res := call(cs, "list_sessions", map[string]any{}); res.IsError {
		t.Fatalf("list_sessions after the restart: %s", resultText(res))
	}
	e, _ = scrapeOnce(t, url)
	if v := value(t, e, metrics.NameReconnects, nil); v != 1 {
		t.Errorf("reconnects after a tmux restart: %v, want 1", v)
	}
	if v := value(t, e, metrics.NameControlConns, nil); v < 1 {
		t.Errorf("control connections after the reconnect: %v", v)
	}

	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	waitValue(t, url, metrics.NameSessions, nil, 0)
	e, _ = scrapeOnce(t, url)
	if v := value(t, e, metrics.NameSessionsTotal, nil); v != 2 {
		t.Errorf("sessions total at the end: %v", v)
	}
}

// TestMetricsBinding: /metrics carries no token, so an address off
// loopback is refused unless --metrics-insecure is given; a stdio server
// refuses --metrics; and metrics off means no listener and no log line.
func TestMetricsBinding(t *testing.T) {
	ts := tmuxtest.New(t)
	token := newToken()
	run := func(env []string, args ...string) (string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, httpdBinary(), args...)
		cmd.Env = append(append(tmuxtest.CleanEnv(), "TMUX_MCP_SOCKET="+ts.Socket.Name, "TMUX_MCP_TMUX_BIN="+ts.Bin,
			"HOME="+t.TempDir(), "TMUX_MCP_HTTP_TOKEN="+token), env...)
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
	for _, c := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"flag", nil, []string{"serve", "--http", "127.0.0.1:0", "--metrics", "0.0.0.0:0"}, "pass --metrics-insecure"},
		{"variable", []string{"TMUX_MCP_METRICS=0.0.0.0:0"}, []string{"serve", "--http", "127.0.0.1:0"}, "pass --metrics-insecure"},
		{"no port", nil, []string{"serve", "--http", "127.0.0.1:0", "--metrics", "127.0.0.1"}, "--metrics must be host:port"},
		{"stdio", nil, []string{"serve", "--metrics", "127.0.0.1:0"}, "metrics are served by the HTTP daemon only (serve --http)"},
		{"stdio variable", []string{"TMUX_MCP_METRICS=127.0.0.1:0"}, nil, "TMUX_MCP_METRICS is set, but metrics are served by the HTTP daemon only"},
	} {
		out, code := run(c.env, c.args...)
		if code != 2 || !strings.Contains(out, c.want) {
			t.Errorf("%s: exit %d, want 2 and %q:\n%s", c.name, code, c.want, out)
		}
	}

	h := startHTTPD(t, ts, []string{"--metrics", "0.0.0.0:0", "--metrics-insecure"}, "TMUX_MCP_HTTP_TOKEN="+token)
	if !strings.Contains(h.log.String(), `"level":"WARN","msg":"serving /metrics without a token on a non-loopback address`) {
		t.Errorf("no warning:\n%s", h.log.String())
	}
	u := metricsURL(h.log.String())
	loop := "http://127.0.0.1:" + u[strings.LastIndex(u, ":")+1:] // the wildcard address, reached on loopback
	e, _ := scrapeOnce(t, loop)
	if _, ok := e.Value(metrics.NameInFlight, nil); !ok {
		t.Errorf("no %s", metrics.NameInFlight)
	}
	resp, err := http.Post(loop, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics: %s", resp.Status)
	}

	off := startHTTPD(t, ts, nil, "TMUX_MCP_HTTP_TOKEN="+token)
	if metricsURL(off.log.String()) != "" {
		t.Errorf("metrics served without --metrics:\n%s", off.log.String())
	}
}
