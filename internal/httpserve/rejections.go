package httpserve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Every rejection of the daemon is a JSON-RPC error without id, as the
// README promises and as MCP clients show best: the daemon's own (written
// by writeError) and the SDK's. The SDK's streamable handler rejects with
// http.Error, a line of plain text, some of it Go's (a `null` body is
// "malformed payload: empty batch", an object id "invalid ID type
// map[string]interface {}"), and an unknown method gets a 400 where stdio
// answers JSON-RPC -32601 with the request's id. The SDK is not patched:
// checkMessage refuses malformed messages before they reach it, and
// jsonRejections turns whatever plain-text rejection still comes out of it
// into a JSON-RPC error written for a person, keeping its HTTP status.

// checkMessage checks the shape of a POST body (already known to be valid
// JSON) that the SDK would refuse with a Go error, and returns the
// rejection's message, or "" when the body may go on. head is the body's
// top-level object, when it is one.
func checkMessage(body []byte, head *messageHead) string {
	switch body[firstNonSpace(body)] {
	case '{':
	case '[':
		if bytes.Equal(bytes.TrimSpace(body[firstNonSpace(body)+1:]), []byte("]")) {
			return "Invalid request: the body is an empty JSON-RPC batch"
		}
		return ""
	default:
		return "Invalid request: the body must be a JSON-RPC message, a JSON object such as {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}"
	}
	if head.JSONRPC != "2.0" {
		return `Invalid request: a JSON-RPC message must have "jsonrpc":"2.0"`
	}
	if len(head.ID) > 0 {
		switch head.ID[0] {
		case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		default:
			return `Invalid request: "id" must be a string or a number`
		}
	}
	return ""
}

// messageHead is what the daemon reads of a POST body's top-level object:
// the method for the log, the limits and the routing of rejections, the id
// to answer an unknown method with.
type messageHead struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  string          `json:"method"`
	ID      json.RawMessage `json:"id"`
}

// jsonRejections turns a plain-text rejection (http.Error: status 400 or
// more, Content-Type text/plain) written by the handlers it wraps into a
// JSON-RPC error with the same status; an unknown method becomes the
// JSON-RPC answer stdio gives. Anything else passes through untouched,
// SSE streams included.
func (d *Daemon) jsonRejections(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &rejectionWriter{ResponseWriter: w}
		next.ServeHTTP(rw, r)
		if !rw.held {
			return
		}
		li := logInfoFrom(r.Context())
		status, code, msg := translate(rw.status, strings.TrimSpace(rw.text.String()), w.Header().Get("Allow"), li)
		w.Header().Del("X-Content-Type-Options")
		switch {
		case status == http.StatusAccepted: // a notification of an unknown method: ignored, as over stdio
			w.Header().Del("Content-Type")
			w.WriteHeader(status)
		case code == codeMethodNotFound && len(li.id) > 0:
			writeAnswer(w, status, li.id, code, msg)
		default:
			writeError(w, status, code, msg)
		}
	})
}

// rejectionWriter holds back a plain-text error response for
// jsonRejections.
type rejectionWriter struct {
	http.ResponseWriter
	held   bool // a plain-text error is being held back
	wrote  bool // a response went out as it was
	status int
	text   bytes.Buffer
}

// maxRejectionText bounds what is kept of a held-back error's text.
const maxRejectionText = 4 << 10

func (rw *rejectionWriter) WriteHeader(code int) {
	if !rw.wrote && !rw.held && code >= 400 && strings.HasPrefix(rw.Header().Get("Content-Type"), "text/plain") {
		rw.held, rw.status = true, code
		return
	}
	rw.wrote = true
	rw.ResponseWriter.WriteHeader(code)
}

func (rw *rejectionWriter) Write(b []byte) (int, error) {
	if rw.held {
		rw.text.Write(b[:min(len(b), max(0, maxRejectionText-rw.text.Len()))])
		return len(b), nil
	}
	rw.wrote = true
	return rw.ResponseWriter.Write(b)
}

func (rw *rejectionWriter) Flush() {
	if rw.held {
		return
	}
	if f, ok := rw.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (rw *rejectionWriter) Unwrap() http.ResponseWriter { return rw.ResponseWriter }

// writeAnswer is writeError for a request that has an id: a JSON-RPC
// response to it.
func writeAnswer(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"error":   map[string]any{"code": code, "message": msg},
	})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

const (
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
)

// sdkRejection is one plain-text rejection of the Go SDK (v1.8.0,
// mcp/streamable.go) recognized by its text, and the JSON-RPC error it
// becomes: status 0 keeps the SDK's, and msg may use the pattern's
// submatches ($1).
type sdkRejection struct {
	re     *regexp.Regexp
	status int
	code   int
	msg    string
}

// sdkRejections are compiled on first use (a rejection over HTTP): at
// package init they cost every start-up, stdio included, 0.45 ms and 255
// KB of heap (GODEBUG=inittrace=1).
var sdkRejections = sync.OnceValue(func() []sdkRejection {
	return []sdkRejection{
		{regexp.MustCompile(`^JSON RPC not handled: (".*") unsupported$`), 0, codeMethodNotFound, "Method not found: $1"},
		{regexp.MustCompile(`^invalid request: unexpected id for (".*")$`), 0, codeInvalidRequest, "Invalid request: $1 is a notification and takes no id"},
		{regexp.MustCompile(`^invalid request: missing id for (".*")$`), 0, codeInvalidRequest, "Invalid request: $1 is a request and needs an id"},
		{regexp.MustCompile(`^invalid request: missing required "params"$`), 0, codeInvalidParams, `Invalid params: this method needs "params"`},
		{regexp.MustCompile(`^Forbidden: invalid Host header (".*")$`), 0, codeForbidden,
			"Forbidden: the Host header $1 does not name a loopback address, and this server listens on one (a guard against DNS rebinding); use 127.0.0.1, [::1] or localhost"},
		{regexp.MustCompile(`^Bad Request: Unsupported protocol version \(supported versions: (.*)\)$`), 0, codeInvalidRequest,
			"Bad request: the MCP-Protocol-Version header names a version this server does not speak (it speaks $1)"},
		{regexp.MustCompile(`^Content-Type must be 'application/json'$`), 0, codeInvalidRequest,
			"Unsupported media type: send the JSON-RPC message with Content-Type: application/json"},
		{regexp.MustCompile(`^Accept must contain both 'application/json' and 'text/event-stream'$`), 0, codeInvalidRequest,
			"Bad request: the Accept header must list both application/json and text/event-stream"},
		{regexp.MustCompile(`^Accept must contain 'text/event-stream' for GET requests$`), 0, codeInvalidRequest,
			"Bad request: a GET opens the session's event stream; its Accept header must list text/event-stream"},
		{regexp.MustCompile(`^Bad Request: (GET|DELETE) requires an Mcp-Session-Id header$`), 0, codeInvalidRequest,
			"Bad request: a $1 needs the Mcp-Session-Id header of the session it is for"},
		{regexp.MustCompile(`^session not found$`), 0, codeInvalidRequest,
			"Session not found: no session has that Mcp-Session-Id (it ended: deleted, idle past --session-idle-timeout, or the server restarted); start a new session with initialize"},
		{regexp.MustCompile(`^session is closing$`), 0, codeInvalidRequest,
			"Session not found: the session is ending; start a new session with initialize"},
		{regexp.MustCompile(`^session user mismatch$`), 0, codeForbidden,
			"Forbidden: this session was opened with another token"},
		{regexp.MustCompile(`^JSON-RPC batching is not supported in (\S+) and later \(request version: (\S+)\)$`), 0, codeInvalidRequest,
			"Bad request: JSON-RPC batching is not supported from protocol $1 on (this request's is $2); send one message per request"},
		{regexp.MustCompile(`^malformed payload: `), 0, codeInvalidRequest,
			"Invalid request: the body is not a JSON-RPC message, or a batch of them"},
		{regexp.MustCompile(`^can't send Last-Event-ID for POST request$`), 0, codeInvalidRequest,
			"Bad request: Last-Event-ID resumes a GET stream; a POST cannot carry it"},
		{regexp.MustCompile(`^malformed Last-Event-ID `), 0, codeInvalidRequest,
			"Bad request: the Last-Event-ID header is not an event id this server gave"},
		{regexp.MustCompile(`^failed to replay events$`), 0, codeInvalidRequest,
			"Bad request: the events after that Last-Event-ID are no longer kept; open the stream again without Last-Event-ID"},
		{regexp.MustCompile(`^stream ID conflicts with ongoing stream$`), 0, codeInvalidRequest,
			"Conflict: that stream is already open in another request"},
		{regexp.MustCompile(`^request body exceeds (\d+) bytes$`), 0, codeTooLarge, "Request body too large: the limit is $1 bytes"},
		{regexp.MustCompile(`^POST requires a non-empty body$`), 0, codeParseError, "Parse error: the request body is empty"},
	}
})

// translate maps a plain-text rejection to the status, code and message
// of its JSON-RPC error. An unknown method answers as stdio does: HTTP 200
// with -32601 for a request (202 for a notification, which stdio ignores);
// the 2026-07-28 handler already answers it in JSON-RPC, with 404.
func translate(status int, text, allow string, li *logInfo) (int, int, string) {
	for _, k := range sdkRejections() {
		m := k.re.FindStringSubmatchIndex(text)
		if m == nil {
			continue
		}
		msg := string(k.re.ExpandString(nil, k.msg, text, m))
		if k.code == codeMethodNotFound {
			if len(li.id) == 0 || string(li.id) == "null" {
				return http.StatusAccepted, 0, ""
			}
			return http.StatusOK, k.code, msg
		}
		if k.status != 0 {
			status = k.status
		}
		return status, k.code, msg
	}
	switch status {
	case http.StatusMethodNotAllowed:
		if allow == "POST" {
			return status, codeInvalidRequest, "Method not allowed: without a session (protocol 2026-07-28) this endpoint takes only POST"
		}
		return status, codeInvalidRequest, "Method not allowed: this endpoint takes POST (a message), GET (a session's event stream) and DELETE (ending a session)"
	case http.StatusNotFound:
		return status, codeInvalidRequest, "Not found: MCP is served at " + Endpoint
	}
	code := codeInvalidRequest
	if status >= 500 {
		code = codeInternal
	}
	return status, code, fmt.Sprintf("%s: the request was refused (HTTP %s)", http.StatusText(status), strconv.Itoa(status))
}
