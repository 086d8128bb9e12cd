package httpserve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
)

// testDaemon is a Daemon with only what the middleware needs.
func testDaemon(t *testing.T, log *slog.Logger) *Daemon {
	t.Helper()
	st, err := ParseTokens(strings.NewReader("aaaaaaaaaaaaaaaaaaaa alice\nbbbbbbbbbbbbbbbbbbbb bob readonly\n"), config.Mutating)
	if err != nil {
		t.Fatal(err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	d := &Daemon{
		opts:     Options{Checkers: []TokenChecker{st}, MaxBodyBytes: 64},
		log:      log,
		limits:   newInflightTable(1),
		sessions: newSessionTable(1, nil),
		origins:  newOriginPolicy(nil),
	}
	d.origins.addLoopback(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8765}, false)
	return d
}

func TestMiddleware(t *testing.T) {
	var logs bytes.Buffer
	d := testDaemon(t, slog.New(slog.NewJSONHandler(&logs, nil)))
	var seen Identity
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen, _ = identityFrom(r.Context())
		w.WriteHeader(http.StatusTeapot)
	})
	h := d.logRequests(d.front(d.limit(next)))
	const list = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	tests := []struct {
		name     string
		body     string
		hdr      map[string]string
		status   int
		want     string // in the body
		wwwAuth  string // prefix of WWW-Authenticate
		identity string
	}{
		{"no token", list, nil, 401, "Authorization: Bearer", `Bearer realm="tmux-mcp"`, ""},
		{"wrong token", list, map[string]string{"Authorization": "Bearer cccccccccccccccccccc"}, 401, "not valid", `Bearer realm="tmux-mcp", error="invalid_token"`, ""},
		{"basic auth", list, map[string]string{"Authorization": "Basic eDp5"}, 401, "Bearer", "Bearer", ""},
		{"valid token", list, map[string]string{"Authorization": "Bearer aaaaaaaaaaaaaaaaaaaa"}, 418, "", "", "alice"},
		{"lower-case scheme", list, map[string]string{"Authorization": "bearer bbbbbbbbbbbbbbbbbbbb"}, 418, "", "", "bob"},
		{"foreign origin", list, map[string]string{"Authorization": "Bearer aaaaaaaaaaaaaaaaaaaa", "Origin": "https://evil.example"}, 403, "Origin not allowed", "", ""},
		{"null origin", list, map[string]string{"Authorization": "Bearer aaaaaaaaaaaaaaaaaaaa", "Origin": "null"}, 403, "Origin not allowed", "", ""},
		{"same port other host", list, map[string]string{"Authorization": "Bearer aaaaaaaaaaaaaaaaaaaa", "Origin": "http://evil.example:8765"}, 403, "Origin not allowed", "", ""},
		{"own origin", list, map[string]string{"Authorization": "Bearer aaaaaaaaaaaaaaaaaaaa", "Origin": "http://localhost:8765"}, 418, "", "", "alice"},
		{"body too large", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"` + strings.Repeat("y", 100) + `"}}`,
			map[string]string{"Authorization": "Bearer aaaaaaaaaaaaaaaaaaaa"}, 413, "limit is 64 bytes", "", ""},
		{"malformed", `{"jsonrpc":`, map[string]string{"Authorization": "Bearer aaaaaaaaaaaaaaaaaaaa"}, 400, "not valid JSON", "", ""},
		// The token is checked before the body is read.
		{"no token, body too large", `{"x":"` + strings.Repeat("y", 100) + `"}`, nil, 401, "Authorization: Bearer", `Bearer realm="tmux-mcp"`, ""},
		{"no token, malformed", `{"jsonrpc":`, nil, 401, "Authorization: Bearer", `Bearer realm="tmux-mcp"`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			seen = Identity{}
			req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(tc.body))
			for k, v := range tc.hdr {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) {
				t.Fatalf("%d %q, want %d with %q", rec.Code, rec.Body.String(), tc.status, tc.want)
			}
			if got := rec.Header().Get("WWW-Authenticate"); !strings.HasPrefix(got, tc.wwwAuth) || (tc.wwwAuth == "") != (got == "") {
				t.Errorf("WWW-Authenticate %q, want %q", got, tc.wwwAuth)
			}
			if seen.Name != tc.identity {
				t.Errorf("identity %q, want %q", seen.Name, tc.identity)
			}
			if rec.Code >= 400 && rec.Code != http.StatusTeapot {
				var msg struct {
					JSONRPC string `json:"jsonrpc"`
					Error   struct {
						Code    int    `json:"code"`
						Message string `json:"message"`
					} `json:"error"`
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &msg); err != nil || msg.JSONRPC != "2.0" || msg.Error.Code == 0 {
					t.Errorf("not a JSON-RPC error: %s", rec.Body.String())
				}
			}
		})
	}
	out := logs.String()
	if strings.Contains(out, "aaaaaaaaaaaaaaaaaaaa") || strings.Contains(out, "bbbbbbbbbbbbbbbbbbbb") || strings.Contains(out, "cccccccccccccccccccc") {
		t.Errorf("a token reached the log")
	}
	if !strings.Contains(out, `"method":"tools/list"`) || !strings.Contains(out, `"client":"alice"`) || !strings.Contains(out, `"status":401`) {
		t.Errorf("log lines lack method, client or status:\n%s", out)
	}
}

// TestLimitInFlight: a client's second concurrent request is refused with
// 429 while the first runs; another client and the client's own next
// request after the first ended are served.
func TestLimitInFlight(t *testing.T) {
	d := testDaemon(t, nil)
	release := make(chan struct{})
	entered := make(chan struct{}, 4)
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		if r.Header.Get("X-Block") != "" {
			<-release
		}
	})
	h := d.readBody(d.authenticate(d.limit(next)))
	do := func(token, session string, block bool) int {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set(headerSessionID, session)
		if block {
			req.Header.Set("X-Block", "1")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); do("aaaaaaaaaaaaaaaaaaaa", "s1", true) }()
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the first request did not start")
	}
	tests := []struct {
		name           string
		token, session string
		want           int
	}{
		{"same client", "aaaaaaaaaaaaaaaaaaaa", "s1", 429},
		{"same token, other session", "aaaaaaaaaaaaaaaaaaaa", "s2", 200},
		{"other token", "bbbbbbbbbbbbbbbbbbbb", "s1", 200},
	}
	for _, tc := range tests {
		if got := do(tc.token, tc.session, false); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
	close(release)
	wg.Wait()
	if got := do("aaaaaaaaaaaaaaaaaaaa", "s1", false); got != 200 {
		t.Errorf("after the first ended: %d", got)
	}
}

// TestLimitWaitsForAFinishingRequest: a client that sends its next request
// as soon as it read an answer, while the server still counts the previous
// request (its handler is finishing), is served once the slot frees within
// the grace; a slot that stays taken past the grace, or a request whose
// client gave up, is refused.
func TestLimitWaitsForAFinishingRequest(t *testing.T) {
	key := clientKey{"alice", ""}
	tests := []struct {
		name      string
		releaseIn time.Duration // -1: never
		cancel    bool
		want      bool
	}{
		{"freed within the grace", 50 * time.Millisecond, false, true},
		{"freed at once", 0, false, true},
		{"never freed", -1, false, false},
		{"client gone", -1, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			table := newInflightTable(1)
			table.grace = 300 * time.Millisecond
			if !table.acquire(context.Background(), key) {
				t.Fatal("the first acquire was refused")
			}
			if tc.releaseIn >= 0 {
				time.AfterFunc(tc.releaseIn, func() { table.release(key) })
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				cancel()
			}
			start := time.Now()
			got := table.acquire(ctx, key)
			took := time.Since(start)
			if got != tc.want {
				t.Fatalf("acquire = %v after %v, want %v", got, took, tc.want)
			}
			switch {
			case !tc.want && !tc.cancel && took < table.grace:
				t.Errorf("refused after %v, before the grace of %v", took, table.grace)
			case tc.cancel && took > table.grace/2:
				t.Errorf("a gone client waited %v", took)
			}
			if other := (clientKey{"bob", ""}); !table.acquire(context.Background(), other) {
				t.Error("another client was held by this one's limit")
			}
		})
	}
}

func TestSessionReserve(t *testing.T) {
	st := newSessionTable(2, nil)
	steps := []struct {
		do   func() bool
		want bool
	}{
		{st.reserve, true},
		{st.reserve, true},
		{st.reserve, false},
		{func() bool { st.unreserve(); return st.reserve() }, true},
		{st.reserve, false},
	}
	for i, s := range steps {
		if got := s.do(); got != s.want {
			t.Errorf("step %d: %v, want %v", i, got, s.want)
		}
	}
}

func TestUseStateless(t *testing.T) {
	tests := []struct {
		version, session string
		want             bool
	}{
		{"", "", false},              // initialize of a legacy client (no header yet)
		{"2024-11-05", "", false},    // oldest supported
		{"2025-11-25", "", false},    // legacy without a session: stateful (creates one)
		{"2025-11-25", "abc", false}, // a legacy session
		{"", "abc", false},           // GET/DELETE of a legacy session
		{"2026-07-27", "", false},    // before the stateless revision
		{"2026-07-28", "", true},     // the stateless revision
		{"2027-01-01", "", true},     // later revisions are stateless too
		{"2026-07-28", "abc", false}, // a session id always means the stateful handler
		{"1999-01-01", "", false},    // nonsense: the stateful handler answers 400
	}
	for _, tc := range tests {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		if tc.version != "" {
			r.Header.Set(headerProtocolVersion, tc.version)
		}
		if tc.session != "" {
			r.Header.Set(headerSessionID, tc.session)
		}
		if got := useStateless(r); got != tc.want {
			t.Errorf("version %q session %q: stateless %v, want %v", tc.version, tc.session, got, tc.want)
		}
	}
}

// TestSlowAndUnauthenticatedBodies sends raw requests over real connections:
// a client without a valid token is answered 401 from its headers alone,
// before any of the body it announced arrives; an authenticated client
// that trickles its body is cut off with 408 once the body deadline
// passes; a GET announcing a body is refused at once. None of them holds
// its connection (Go's server would otherwise wait for the unread body
// before answering). A request whose body arrives in time is served.
func TestSlowAndUnauthenticatedBodies(t *testing.T) {
	d := testDaemon(t, nil)
	// Long enough that an answer "at once" (under 1 s, even on a loaded
	// machine) cannot be one the body deadline produced.
	d.bodyReadTimeout = 1500 * time.Millisecond
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	hs := httptest.NewUnstartedServer(d.logRequests(d.front(d.limit(next))))
	hs.Config.ReadHeaderTimeout = 5 * time.Second
	hs.Start()
	t.Cleanup(hs.Close)
	d.origins.addLoopback(hs.Listener.Addr(), false)

	// send writes a request head announcing length body bytes and then
	// the given part of the body, and returns the status line of the
	// answer and how long it took to come.
	send := func(method, token string, length int, part string) (string, time.Duration) {
		t.Helper()
		c, err := net.Dial("tcp", hs.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		head := method + " /mcp HTTP/1.1\r\nHost: " + hs.Listener.Addr().String() + "\r\nContent-Type: application/json\r\n" +
			"Content-Length: " + strconv.Itoa(length) + "\r\n"
		if token != "" {
			head += "Authorization: Bearer " + token + "\r\n"
		}
		start := time.Now()
		if _, err := c.Write([]byte(head + "\r\n" + part)); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			t.Fatalf("no answer: %v", err)
		}
		return strings.TrimSpace(line), time.Since(start)
	}

	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	if line, took := send("POST", "", 60, ""); !strings.Contains(line, " 401 ") || took > time.Second {
		t.Errorf("no token, no body sent: %q after %v; want 401 at once", line, took)
	}
	if line, took := send("POST", "cccccccccccccccccccc", 60, body[:10]); !strings.Contains(line, " 401 ") || took > time.Second {
		t.Errorf("wrong token, part of the body sent: %q after %v; want 401 at once", line, took)
	}
	if line, took := send("POST", "aaaaaaaaaaaaaaaaaaaa", len(body)+10, body); !strings.Contains(line, " 408 ") || took < 1400*time.Millisecond || took > 4*time.Second {
		t.Errorf("valid token, body short of its length: %q after %v; want 408 after the 1.5 s body deadline", line, took)
	}
	if line, took := send("GET", "aaaaaaaaaaaaaaaaaaaa", 10, ""); !strings.Contains(line, " 400 ") || took > time.Second {
		t.Errorf("valid token, a GET announcing a body it never sends: %q after %v; want 400 at once", line, took)
	}
	if line, _ := send("POST", "aaaaaaaaaaaaaaaaaaaa", len(body), body); !strings.Contains(line, " 418 ") {
		t.Errorf("valid token, whole body: %q; want it served (418)", line)
	}
}

// TestListenStreamsCountAsSessions: a 2026-07-28 subscriptions/listen
// stream holds a session slot (--max-sessions) for as long as it is open,
// so a token cannot open streams without end; the slot is free again once
// the stream ends. (The test daemon allows one session.)
func TestListenStreamsCountAsSessions(t *testing.T) {
	d := testDaemon(t, nil)
	release := make(chan struct{})
	entered := make(chan struct{}, 8)
	var opened atomic.Bool
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		if logInfoFrom(r.Context()).rpc == "subscriptions/listen" && opened.CompareAndSwap(false, true) {
			<-release // the first stream stays open
		}
		w.WriteHeader(http.StatusOK)
	})
	h := d.logRequests(d.front(d.limit(next)))
	post := func(body string, hdr map[string]string) int {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer aaaaaaaaaaaaaaaaaaaa")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	const listen = `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen"}` // within the test's 64-byte cap
	v2026 := map[string]string{"Mcp-Protocol-Version": "2026-07-28"}
	first := make(chan int, 1)
	go func() { first <- post(listen, v2026) }()
	select {
	case <-entered:
	case got := <-first:
		t.Fatalf("the first listen stream was answered %d at once", got)
	}
	if got := post(listen, v2026); got != http.StatusTooManyRequests {
		t.Errorf("a second listen stream while the first holds the only slot: %d, want 429", got)
	}
	if got := post(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`, nil); got != http.StatusTooManyRequests {
		t.Errorf("a new session while a listen stream holds the only slot: %d, want 429", got)
	}
	if got := post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, v2026); got != http.StatusOK {
		t.Errorf("a stateless call beside the stream: %d, want 200 (calls hold no session slot)", got)
	}
	close(release)
	if got := <-first; got != http.StatusOK {
		t.Errorf("the first stream: %d", got)
	}
	if got := post(listen, v2026); got != http.StatusOK {
		t.Errorf("a listen stream once the first has ended: %d, want 200", got)
	}
}
