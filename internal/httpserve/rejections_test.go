package httpserve

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
)

// rawRequest is one HTTP request to the daemon, built by hand.
type rawRequest struct {
	method, path, body string
	hdr                map[string]string
	host               string
}

const (
	rejectToken = "reject-token-aaaaaaaaaaaaaa"
	otherToken  = "other-token-bbbbbbbbbbbbbbb"
)

func (rq rawRequest) do(t *testing.T, base string) (*http.Response, []byte) {
	t.Helper()
	if rq.method == "" {
		rq.method = http.MethodPost
	}
	if rq.path == "" {
		rq.path = Endpoint
	}
	req, err := http.NewRequest(rq.method, base+rq.path, strings.NewReader(rq.body))
	if err != nil {
		t.Fatal(err)
	}
	if rq.host != "" {
		req.Host = rq.host
	}
	defaults := map[string]string{
		"Authorization": "Bearer " + rejectToken,
		"Content-Type":  "application/json",
		"Accept":        "application/json, text/event-stream",
	}
	for k, v := range defaults {
		req.Header.Set(k, v)
	}
	for k, v := range rq.hdr {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// goInternals are what a message written for a person never shows: Go
// type names, fmt's bad verbs, the SDK's own wording.
var goInternals = regexp.MustCompile(`map\[|interface \{\}|\*[a-z]+\.[A-Z]|%!|JSON RPC|malformed payload|jsonrpc2|<nil>`)

// TestRejectionsSpeakJSONRPC (issue 21 item 4) sends every kind of request
// the daemon refuses, its own refusals and the SDK's, and checks that each
// answer keeps the HTTP status the MCP spec asks for and is a JSON-RPC error
// without id, {"jsonrpc":"2.0","id":null,"error":{code,message}}, with a
// standard code and a message written for a person: no Go internals. On
// the parent commit 17 of these were text/plain (the SDK's http.Error),
// a null body said "malformed payload: empty batch", an object id "invalid
// ID type map[string]interface {}", and tools/call without a session got
// HTTP 200 with error code 0.
func TestRejectionsSpeakJSONRPC(t *testing.T) {
	st, err := ParseTokens(strings.NewReader(rejectToken+" reject\n"+otherToken+" other\n"), config.Mutating)
	if err != nil {
		t.Fatal(err)
	}
	_, hs, _ := churnDaemon(t, time.Minute, st)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	resp, body := rawRequest{body: init}.do(t, hs.URL)
	sid := resp.Header.Get(headerSessionID)
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	session := map[string]string{headerSessionID: sid, headerProtocolVersion: "2025-11-25"}
	rawRequest{body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr: session}.do(t, hs.URL)
	with := func(kv ...string) map[string]string {
		m := map[string]string{headerSessionID: sid, headerProtocolVersion: "2025-11-25"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	cases := []struct {
		name   string
		req    rawRequest
		status int
		code   int
		want   string // in the message
		header string // "Name: value prefix" the answer must carry
	}{
		{"no token", rawRequest{body: list, hdr: map[string]string{"Authorization": ""}}, 401, -32001, "Authorization: Bearer", "Www-Authenticate: Bearer"},
		{"bad token", rawRequest{body: list, hdr: map[string]string{"Authorization": "Bearer nope-nope-nope-nope-nope"}}, 401, -32001, "not valid", "Www-Authenticate: Bearer"},
		{"foreign Origin", rawRequest{body: list, hdr: with("Origin", "https://evil.example")}, 403, -32003, "Origin not allowed", ""},
		{"rebinding Host", rawRequest{body: list, hdr: session, host: "evil.example:80"}, 403, -32003, `Host header "evil.example:80"`, ""},
		{"oversize body", rawRequest{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", DefaultMaxBodyBytes) + `"}}`, hdr: session}, 413, -32004, "too large", ""},
		{"not JSON", rawRequest{body: `{"jsonrpc":`, hdr: session}, 400, -32700, "not valid JSON", ""},
		{"null body", rawRequest{body: `null`, hdr: session}, 400, -32600, "must be a JSON-RPC message", ""},
		{"a number", rawRequest{body: `42`, hdr: session}, 400, -32600, "must be a JSON-RPC message", ""},
		{"empty batch", rawRequest{body: ` [ ] `, hdr: session}, 400, -32600, "empty JSON-RPC batch", ""},
		{"object id", rawRequest{body: `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, hdr: session}, 400, -32600, `"id" must be a string or a number`, ""},
		{"array id", rawRequest{body: `{"jsonrpc":"2.0","id":[1],"method":"tools/list"}`, hdr: session}, 400, -32600, `"id" must be`, ""},
		{"boolean id", rawRequest{body: `{"jsonrpc":"2.0","id":true,"method":"tools/list"}`, hdr: session}, 400, -32600, `"id" must be`, ""},
		{"no jsonrpc", rawRequest{body: `{"id":3,"method":"tools/list"}`, hdr: session}, 400, -32600, `"jsonrpc":"2.0"`, ""},
		{"batch element not a message", rawRequest{body: `[1, 2]`, hdr: with(headerProtocolVersion, "2025-03-26")}, 400, -32600, "not a JSON-RPC message", ""},
		{"batch from 2025-06-18", rawRequest{body: "[" + list + "," + list + "]", hdr: session}, 400, -32600, "batching is not supported", ""},
		{"415 Content-Type", rawRequest{body: list, hdr: with("Content-Type", "text/plain")}, 415, -32600, "Content-Type: application/json", ""},
		{"400 Accept", rawRequest{body: list, hdr: with("Accept", "application/json")}, 400, -32600, "Accept header", ""},
		{"GET without event-stream", rawRequest{method: "GET", hdr: with("Accept", "application/json")}, 400, -32600, "text/event-stream", ""},
		{"GET without session", rawRequest{method: "GET", hdr: map[string]string{"Accept": "text/event-stream"}}, 400, -32600, "Mcp-Session-Id", ""},
		{"DELETE without session", rawRequest{method: "DELETE"}, 400, -32600, "Mcp-Session-Id", ""},
		{"GET with a body", rawRequest{method: "GET", body: list, hdr: with("Accept", "text/event-stream")}, 400, -32600, "takes no body", ""},
		{"405 PUT", rawRequest{method: "PUT", hdr: session}, 405, -32600, "Method not allowed", "Allow: GET, POST, DELETE"},
		{"405 stateless GET", rawRequest{method: "GET", hdr: map[string]string{headerProtocolVersion: "2026-07-28", "Accept": "text/event-stream"}}, 405, -32600, "only POST", "Allow: POST"},
		{"unknown session", rawRequest{body: list, hdr: with(headerSessionID, "NOSUCHSESSION")}, 404, -32600, "Session not found", ""},
		{"another token's session", rawRequest{body: list, hdr: with("Authorization", "Bearer "+otherToken)}, 403, -32003, "another token", ""},
		{"tools/call without a session", rawRequest{body: `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"list_sessions","arguments":{}}}`}, 400, -32600, "no Mcp-Session-Id", ""},
		{"ping without a session", rawRequest{body: `{"jsonrpc":"2.0","id":5,"method":"ping"}`}, 400, -32600, "initialize", ""},
		{"unsupported protocol version", rawRequest{body: list, hdr: with(headerProtocolVersion, "1999-01-01")}, 400, -32600, "2025-11-25", ""},
		{"Last-Event-ID on a POST", rawRequest{body: list, hdr: with("Last-Event-ID", "x_1")}, 400, -32600, "Last-Event-ID", ""},
		{"malformed Last-Event-ID", rawRequest{method: "GET", hdr: with("Accept", "text/event-stream", "Last-Event-ID", "nonsense")}, 400, -32600, "Last-Event-ID", ""},
		{"notification with an id", rawRequest{body: `{"jsonrpc":"2.0","id":6,"method":"notifications/initialized"}`, hdr: session}, 400, -32600, "takes no id", ""},
		{"request without an id", rawRequest{body: `{"jsonrpc":"2.0","method":"tools/list"}`, hdr: session}, 400, -32600, "needs an id", ""},
		{"call without params", rawRequest{body: `{"jsonrpc":"2.0","id":7,"method":"tools/call"}`, hdr: session}, 400, -32602, `"params"`, ""},
		{"another path", rawRequest{path: "/mcp/x", body: list, hdr: session}, 404, -32600, "served at /mcp", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := tc.req.do(t, hs.URL)
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d: %.300s", resp.StatusCode, tc.status, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json: %.300s", ct, body)
			}
			var got struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			var keys map[string]json.RawMessage
			if err := json.Unmarshal(body, &got); err != nil || json.Unmarshal(body, &keys) != nil || len(keys) != 3 ||
				got.JSONRPC != "2.0" || string(got.ID) != "null" || got.Error == nil {
				t.Fatalf("not a JSON-RPC error without id: %.300s", body)
			}
			if got.Error.Code != tc.code {
				t.Errorf("code %d, want %d: %s", got.Error.Code, tc.code, got.Error.Message)
			}
			if !strings.Contains(got.Error.Message, tc.want) {
				t.Errorf("message %q lacks %q", got.Error.Message, tc.want)
			}
			if goInternals.MatchString(got.Error.Message) {
				t.Errorf("message shows Go or SDK internals: %q", got.Error.Message)
			}
			if tc.header != "" {
				k, v, _ := strings.Cut(tc.header, ": ")
				if !strings.HasPrefix(resp.Header.Get(k), v) {
					t.Errorf("%s: %q, want %q", k, resp.Header.Get(k), v)
				}
			}
		})
	}
	// The session served the requests around the rejections all along.
	if resp, body := (rawRequest{body: list, hdr: session}).do(t, hs.URL); resp.StatusCode != 200 || !strings.Contains(string(body), "list_panes") {
		t.Errorf("the session after the rejections: %d %.300s", resp.StatusCode, body)
	}
}

// TestUnknownMethodAnswersLikeStdio (issue 21 item 3): an unknown method
// over HTTP gets JSON-RPC -32601 with the request's id, as over stdio
// (HTTP 200: it is an answer, not a rejection of the session); the
// 2026-07-28 handler answers the same error with its own status (404);
// an unknown notification is accepted and ignored (202), as stdio ignores
// it. On the parent commit: 400 text/plain `JSON RPC not handled:
// "no/such" unsupported`.
func TestUnknownMethodAnswersLikeStdio(t *testing.T) {
	_, hs, _ := churnDaemon(t, time.Minute, mustTokens(t, rejectToken+" reject\n"))
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	resp, body := rawRequest{body: init}.do(t, hs.URL)
	sid := resp.Header.Get(headerSessionID)
	if sid == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	session := map[string]string{headerSessionID: sid, headerProtocolVersion: "2025-11-25"}
	rawRequest{body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr: session}.do(t, hs.URL)
	stateless := map[string]string{headerProtocolVersion: "2026-07-28"}
	meta := `,"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`
	for _, tc := range []struct {
		name   string
		body   string
		hdr    map[string]string
		status int
		want   string // the whole body, or "" for none
	}{
		{"number id", `{"jsonrpc":"2.0","id":41,"method":"no/such"}`, session, 200,
			`{"error":{"code":-32601,"message":"Method not found: \"no/such\""},"id":41,"jsonrpc":"2.0"}`},
		{"string id", `{"jsonrpc":"2.0","id":"abc","method":"tools/nothing","params":{}}`, session, 200,
			`{"error":{"code":-32601,"message":"Method not found: \"tools/nothing\""},"id":"abc","jsonrpc":"2.0"}`},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/no-such"}`, session, 202, ""},
		{"2026-07-28", `{"jsonrpc":"2.0","id":42,"method":"no/such"` + meta + `}`, stateless, 404, `"code":-32601`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := rawRequest{body: tc.body, hdr: tc.hdr}.do(t, hs.URL)
			got := strings.TrimSpace(string(body))
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tc.status, got)
			}
			switch {
			case tc.want == "" && got != "":
				t.Errorf("body %q, want none", got)
			case strings.HasPrefix(tc.want, "{") && got != tc.want:
				t.Errorf("body %s\nwant %s", got, tc.want)
			case !strings.Contains(got, tc.want):
				t.Errorf("body %s lacks %s", got, tc.want)
			}
			if tc.want != "" && resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("Content-Type %q", resp.Header.Get("Content-Type"))
			}
		})
	}
}

func mustTokens(t *testing.T, lines string) *StaticTokens {
	t.Helper()
	st, err := ParseTokens(strings.NewReader(lines), config.Mutating)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
