package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// The load test of issue 11: many clients, each with its own token, its
// own MCP session and its own tmux session and pane, calling one
// `serve --http` process at once. It checks that every call succeeds and
// that no answer names another client's pane, and reports latency per tool
// and calls per second. The CI run is short (20 calls per client, 5 over
// the exec engine; mixed phases only); TMUX_MCP_LOAD=1 (or
// scripts/http-load.sh) runs the full 50 clients x 200 calls and adds the
// get_pane_info-only throughput phase.
const (
	loadClients     = 50
	loadSubscribers = 10 // clients that subscribe to their pane's content in the second phase
)

// loadCalls is the number of calls each client makes per phase.
func loadCalls() (int, bool) {
	if os.Getenv("TMUX_MCP_LOAD") != "" {
		if n, err := strconv.Atoi(os.Getenv("TMUX_MCP_LOAD_CALLS")); err == nil && n > 0 {
			return n, true
		}
		return 200, true
	}
	if os.Getenv("TMUX_MCP_ENGINE") == "exec" {
		// CI's second pass over the exec engine, where every call costs
		// tmux processes: the isolation checks need the 50 clients at
		// once, not volume (20 calls took 3.5 of that pass's 5 minutes).
		return 5, false
	}
	return 20, false
}

// loadClient is one simulated agent.
type loadClient struct {
	n       int
	name    string // tmux session name and token name
	token   string
	session string // tmux session id, e.g. $3
	pane    string // its only pane, e.g. %3
	cs      *mcp.ClientSession

	mu      sync.Mutex
	updates []string // URIs of notifications/resources/updated received
}

// contentURI is the resource URI of the client's pane content.
func (c *loadClient) contentURI() string {
	return "tmux://panes/" + url.PathEscape(c.pane) + "/content"
}

func (c *loadClient) seen() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.updates...)
}

// loadStats collects per-tool latencies and failures of one phase.
type loadStats struct {
	mu       sync.Mutex
	lat      map[string][]time.Duration
	failures []string
	leaks    []string
}

func (s *loadStats) add(tool string, d time.Duration) {
	s.mu.Lock()
	s.lat[tool] = append(s.lat[tool], d)
	s.mu.Unlock()
}

func (s *loadStats) fail(list *[]string, format string, args ...any) {
	s.mu.Lock()
	*list = append(*list, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

func pct(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := int(float64(len(ds))*p+0.5) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(ds) {
		i = len(ds) - 1
	}
	return ds[i]
}

// report logs the phase's figures: per tool count, p50, p99, max, and the
// phase's calls per second over its wall time.
func (s *loadStats) report(t *testing.T, phase string, wall time.Duration) {
	t.Helper()
	var b strings.Builder
	total := 0
	tools := make([]string, 0, len(s.lat))
	for tool := range s.lat {
		tools = append(tools, tool)
	}
	sort.Strings(tools)
	fmt.Fprintf(&b, "%s: %-14s %6s %9s %9s %9s\n", phase, "tool", "calls", "p50", "p99", "max")
	for _, tool := range tools {
		ds := s.lat[tool]
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		total += len(ds)
		fmt.Fprintf(&b, "%s: %-14s %6d %9s %9s %9s\n", phase, tool, len(ds),
			pct(ds, 0.50).Round(10*time.Microsecond), pct(ds, 0.99).Round(10*time.Microsecond), ds[len(ds)-1].Round(10*time.Microsecond))
	}
	fmt.Fprintf(&b, "%s: %d calls in %v = %.0f calls/s; %d errors, %d answers naming another client",
		phase, total, wall.Round(time.Millisecond), float64(total)/wall.Seconds(), len(s.failures), len(s.leaks))
	t.Log("\n" + b.String())
}

// serverSide logs the server's own view of the phase: the p50 and p99 of
// the durations its request log gives tools/call POSTs (from the request's
// arrival to its answer), read from the log written since offset from. The
// gap to the client's figures is what the load generator (the 50 clients
// in this test process, on the same two cores) and the kernel add.
func serverSide(t *testing.T, h *httpd, phase string, from int) {
	t.Helper()
	var ds []time.Duration
	logs := h.log.String()
	for _, line := range strings.Split(logs[min(from, len(logs)):], "\n") {
		if !strings.Contains(line, `"method":"tools/call"`) {
			continue
		}
		var rec struct {
			DurationMS float64 `json:"duration_ms"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil {
			ds = append(ds, time.Duration(rec.DurationMS*float64(time.Millisecond)))
		}
	}
	if len(ds) == 0 {
		t.Logf("%s: no tools/call lines in the server's request log", phase)
		return
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	t.Logf("%s: server side, %d tools/call requests: p50 %v, p99 %v, max %v", phase, len(ds),
		pct(ds, 0.50).Round(10*time.Microsecond), pct(ds, 0.99).Round(10*time.Microsecond), ds[len(ds)-1].Round(10*time.Microsecond))
}

var (
	paneIDField    = regexp.MustCompile(`"pane_id":\s*"(%[0-9]+)"`)
	sessionIDField = regexp.MustCompile(`"session_id":\s*"(\$[0-9]+)"`)
	markerText     = regexp.MustCompile(`mark-c([0-9]{2})-`)
)

// foreign returns what in a result names another client: a pane or session
// id other than the caller's, or another client's marker text.
func (c *loadClient) foreign(res *mcp.CallToolResult) []string {
	raw, _ := json.Marshal(res)
	var bad []string
	for _, m := range paneIDField.FindAllSubmatch(raw, -1) {
		if string(m[1]) != c.pane {
			bad = append(bad, "pane "+string(m[1]))
		}
	}
	for _, m := range sessionIDField.FindAllSubmatch(raw, -1) {
		if string(m[1]) != c.session {
			bad = append(bad, "session "+string(m[1]))
		}
	}
	// Text content carries JSON-escaped copies of the same fields; the
	// markers are plain text in captures and command output.
	for _, m := range markerText.FindAllSubmatch(raw, -1) {
		if n, _ := strconv.Atoi(string(m[1])); n != c.n {
			bad = append(bad, "marker of client "+string(m[1]))
		}
	}
	return bad
}

// mixedCall is call k of a client's mixed sequence: one run_command first
// (while the shell sits at its prompt), then get_pane_info (half the calls),
// list_panes and capture_pane (a fifth each) and send_keys (a tenth).
func (c *loadClient) mixedCall(k int) (string, map[string]any) {
	switch {
	case k == 0:
		return "run_command", map[string]any{"pane_id": c.pane, "command": fmt.Sprintf("echo mark-c%02d-run", c.n), "timeout": 30}
	case k%10 == 2 || k%10 == 6:
		return "list_panes", map[string]any{"session_id": c.session}
	case k%10 == 4 || k%10 == 8:
		return "capture_pane", map[string]any{"pane_id": c.pane}
	case k%10 == 9:
		return "send_keys", map[string]any{"pane_id": c.pane, "keys": fmt.Sprintf("echo mark-c%02d-%d", c.n, k)}
	default:
		return "get_pane_info", map[string]any{"pane_id": c.pane}
	}
}

// check verifies what a successful call says beyond "no foreign ids".
func (c *loadClient) check(tool string, res *mcp.CallToolResult) string {
	raw, _ := json.Marshal(res.StructuredContent)
	switch tool {
	case "get_pane_info":
		var info struct {
			PaneID string `json:"pane_id"`
		}
		if json.Unmarshal(raw, &info) != nil || info.PaneID != c.pane {
			return fmt.Sprintf("get_pane_info answered %s", raw)
		}
	case "list_panes":
		var rows struct {
			Result []struct {
				PaneID string `json:"pane_id"`
			} `json:"result"`
		}
		if json.Unmarshal(raw, &rows) != nil || len(rows.Result) != 1 || rows.Result[0].PaneID != c.pane {
			return fmt.Sprintf("list_panes answered %s", raw)
		}
	case "run_command":
		var out struct {
			ExitStatus *int     `json:"exit_status"`
			Output     []string `json:"output"`
		}
		want := fmt.Sprintf("mark-c%02d-run", c.n)
		if json.Unmarshal(raw, &out) != nil || out.ExitStatus == nil || *out.ExitStatus != 0 || len(out.Output) != 1 || out.Output[0] != want {
			return fmt.Sprintf("run_command answered %s", raw)
		}
	}
	return ""
}

// runPhase has every client make calls calls at once, the k-th chosen by
// pick, and returns the phase's stats and wall time.
func runPhase(clients []*loadClient, calls int, pick func(c *loadClient, k int) (string, map[string]any)) (*loadStats, time.Duration) {
	st := &loadStats{lat: map[string][]time.Duration{}}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for k := 0; k < calls; k++ {
				tool, args := pick(c, k)
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				t0 := time.Now()
				res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
				d := time.Since(t0)
				cancel()
				switch {
				case err != nil:
					st.fail(&st.failures, "client %d %s: %v", c.n, tool, err)
					continue
				case res.IsError:
					raw, _ := json.Marshal(res)
					st.fail(&st.failures, "client %d %s: tool error %s", c.n, tool, raw)
					continue
				}
				st.add(tool, d)
				if bad := c.foreign(res); len(bad) > 0 {
					st.fail(&st.leaks, "client %d (%s %s) %s answer names %v", c.n, c.session, c.pane, tool, bad)
				}
				if msg := c.check(tool, res); msg != "" {
					st.fail(&st.failures, "client %d: %s", c.n, msg)
				}
			}
		}()
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	return st, time.Since(t0)
}

// TestHTTPLoad runs the load against one server, once per protocol
// generation: 2025-11-25 clients hold an Mcp-Session-Id and get
// notifications on their GET stream, 2026-07-28 clients are stateless and
// get them on subscriptions/listen.
func TestHTTPLoad(t *testing.T) {
	calls, full := loadCalls()
	ts := tmuxtest.NewWith(t)
	dir := t.TempDir()
	tokens := make([]string, loadClients)
	names := make([]string, loadClients)
	for i := range tokens {
		tokens[i], names[i] = newToken(), fmt.Sprintf("c%02d", i)
	}
	// Each client owns one tmux session whose pane runs sh, so the shell
	// is one run_command knows and its prompt is plain.
	panes := make([][2]string, loadClients)
	for i, name := range names {
		out := ts.MustRun("new-session", "-d", "-s", name, "-x", "80", "-y", "24", "-P", "-F", "#{session_id} #{pane_id}", "sh")
		f := strings.Fields(out)
		panes[i] = [2]string{f[0], f[1]}
	}
	h := startHTTPD(t, ts, []string{"--tokens-file", writeTokensFile(t, dir, tokens, names)})
	t.Logf("server %s; %d clients x %d calls per phase (full=%v)", h.Endpoint, loadClients, calls, full)

	for _, proto := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(proto, func(t *testing.T) {
			clients := make([]*loadClient, loadClients)
			for i := range clients {
				clients[i] = &loadClient{n: i, name: names[i], token: tokens[i], session: panes[i][0], pane: panes[i][1]}
			}
			connectLoadClients(t, h, clients, proto)

			st, wall := runPhase(clients, calls, (*loadClient).mixedCall)
			st.report(t, proto+" mixed", wall)
			failPhase(t, h, st)
			for _, c := range clients {
				if u := c.seen(); len(u) > 0 {
					t.Errorf("client %d got resources/updated without subscribing: %v", c.n, u)
				}
			}

			// Phase 2: the first loadSubscribers clients watch their own
			// pane's content while everyone runs the same mix again.
			subs := clients[:loadSubscribers]
			for _, c := range subs {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				err := c.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: c.contentURI()})
				cancel()
				if err != nil {
					t.Fatalf("client %d subscribe %s: %v", c.n, c.contentURI(), err)
				}
			}
			st, wall = runPhase(clients, calls, (*loadClient).mixedCall)
			st.report(t, proto+" mixed, 10 subscribed", wall)
			failPhase(t, h, st)
			checkNotifications(t, clients, subs)

			// Phase 3: the goal figure, get_pane_info only (a figure, not
			// a check the mixed phases lack, so CI leaves it out).
			if !full {
				return
			}
			from := h.log.Len()
			st, wall = runPhase(clients, calls, func(c *loadClient, _ int) (string, map[string]any) {
				return "get_pane_info", map[string]any{"pane_id": c.pane}
			})
			st.report(t, proto+" get_pane_info only", wall)
			serverSide(t, h, proto+" get_pane_info only", from)
			failPhase(t, h, st)
		})
	}
}

// connectLoadClients connects every client at once, each with its own
// token and HTTP connection pool.
func connectLoadClients(t *testing.T, h *httpd, clients []*loadClient, proto string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(clients))
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs, err := dialHTTPD(ctx, h, c.token, proto, &mcp.ClientOptions{
				ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
					c.mu.Lock()
					c.updates = append(c.updates, r.Params.URI)
					c.mu.Unlock()
				},
			})
			if err != nil {
				errs[i] = err
				return
			}
			c.cs = cs
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("client %d connect: %v\nserver log tail:\n%s", i, err, tail(h.log.String(), 3000))
		}
	}
	for _, c := range clients {
		if got := c.cs.InitializeResult().ProtocolVersion; got != proto {
			t.Errorf("client %d negotiated %s, want %s", c.n, got, proto)
		}
		t.Cleanup(func() { _ = c.cs.Close() })
	}
}

// failPhase fails the test on any error or foreign answer, showing the
// first few and the server's log tail.
func failPhase(t *testing.T, h *httpd, st *loadStats) {
	t.Helper()
	if len(st.failures) == 0 && len(st.leaks) == 0 {
		return
	}
	first := func(l []string) []string { return l[:min(len(l), 5)] }
	t.Errorf("%d errors, first: %q\n%d answers naming another client, first: %q\nserver log tail:\n%s",
		len(st.failures), first(st.failures), len(st.leaks), first(st.leaks), tail(h.log.String(), 3000))
}

// checkNotifications waits for every subscriber to hear about its own pane
// (its send_keys changed it) and checks that nobody heard about a pane that
// is not its own subscription.
func checkNotifications(t *testing.T, clients, subs []*loadClient) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, c := range subs {
		for {
			u := c.seen()
			if len(u) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("subscriber %d heard nothing about %s within 10 s", c.n, c.contentURI())
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	time.Sleep(300 * time.Millisecond) // let stragglers arrive before judging
	total := 0
	for i, c := range clients {
		u := c.seen()
		total += len(u)
		for _, uri := range u {
			if i >= len(subs) || uri != c.contentURI() {
				t.Errorf("client %d (pane %s, subscribed=%v) got resources/updated for %s", c.n, c.pane, i < len(subs), uri)
				break
			}
		}
	}
	if !t.Failed() {
		t.Logf("%d resources/updated notifications, each to the subscriber of that pane only", total)
	}
}
