// Package stdio frames MCP's newline-delimited JSON-RPC between the
// process's stdin/stdout and the SDK's IOTransport.
//
// The SDK reads stdin with one json.Decoder and stops for good on the first
// frame it cannot decode: one stray line from a client would end the server.
// A Framer reads whole lines itself (each ends at '\n', or at end of input),
// checks each one as the SDK would decode it, and hands the SDK only lines
// that are one valid JSON-RPC message (or, where the protocol version in use
// allows it, a valid batch). Every other line is answered with a JSON-RPC
// error, encoded by the SDK's encoder, and serving goes on.
//
// It also holds end of input back from the SDK until the serving code
// releases it: the SDK writes nothing once it has seen EOF, so requests read
// just before EOF could not be answered otherwise.
package stdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// DefaultMaxLine bounds one input line. send_keys takes up to 1 MiB of text,
// which JSON escaping can grow several times; anything near the SDK's own
// 16 MiB frame limit is no request a client means to send.
const DefaultMaxLine = 8 << 20

// batchVersions are the protocol versions the SDK negotiates that have
// JSON-RPC batching. 2025-06-18 removed it, and 2026-07-28 has no
// initialize handshake, so a client that never negotiated an older version
// gets no batches either.
var batchVersions = map[string]bool{"2024-11-05": true, "2025-03-26": true}

// maxExactID is the largest integer id the SDK carries unchanged: it
// decodes ids as float64, which holds every integer up to 2^53 exactly.
const maxExactID = 1 << 53

// A Framer is the stdin/stdout pair given to mcp.IOTransport (as both its
// Reader and its Writer). Its Write is the one path to stdout: the SDK's
// messages and the Framer's own error replies are written whole, one line
// per write, under one lock, so they never interleave.
type Framer struct {
	// MaxLine bounds an input line in bytes; 0 means DefaultMaxLine. A
	// longer line is discarded up to its newline (never held in memory) and
	// answered with a parse error.
	MaxLine int
	// Log receives a note for each line refused; nil discards them.
	Log *slog.Logger

	in   *bufio.Reader
	out  io.Writer
	rest []byte // the accepted line not yet passed to the SDK
	// conn: the Framer is the SDK's Connection (Connect), so accepted
	// lines go to ready as the messages check decoded, not to rest.
	conn    bool
	ready   []delivery
	readErr error // how input ended, once it has

	wmu     sync.Mutex // one writer at a time on out, whole lines only
	partial []byte     // output not yet ending in a newline (guarded by wmu)

	mu      sync.Mutex
	pending map[string]bool // ids of requests passed to the SDK and not yet answered
	changed chan struct{}   // closed and replaced when pending shrinks
	initID  string          // id of the initialize request in flight, if any
	version string          // protocol version negotiated by initialize

	smu        sync.Mutex
	marker     []byte            // a stand-in's start (see Splice); nil until the first
	spliced    map[uint64][]byte // encodings held for stand-ins not yet written
	nextSplice uint64

	eof         chan struct{} // closed when input has ended
	eofOnce     sync.Once
	release     chan struct{} // closed to let end of input reach the SDK
	releaseOnce sync.Once
}

// New returns a Framer reading requests from in and writing to out.
func New(in io.Reader, out io.Writer) *Framer {
	return &Framer{
		in: bufio.NewReaderSize(in, 64<<10), out: out,
		pending: map[string]bool{}, changed: make(chan struct{}),
		eof: make(chan struct{}), release: make(chan struct{}),
	}
}

// InputClosed is closed once the client has closed its end of stdin (or
// reading it failed). The SDK does not see the end until ReleaseEOF.
func (f *Framer) InputClosed() <-chan struct{} { return f.eof }

// ReleaseEOF lets the end of input through to the SDK, which then ends the
// session. Call it once every request read has been answered (WaitAnswered).
func (f *Framer) ReleaseEOF() { f.releaseOnce.Do(func() { close(f.release) }) }

// Pending returns how many requests the SDK has received but not answered.
func (f *Framer) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.pending)
}

// WaitAnswered blocks until every request passed to the SDK has been
// answered (or cancelled by the client) and the answers are written out,
// or ctx ends. It reports whether everything was answered.
func (f *Framer) WaitAnswered(ctx context.Context) bool {
	for {
		f.mu.Lock()
		n, ch := len(f.pending), f.changed
		f.mu.Unlock()
		if n == 0 {
			return f.writesDone(ctx)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return f.Pending() == 0
		}
	}
}

// writesDone waits for the Write in progress, if any, to finish. Write
// notes a response as answered before its bytes reach stdout (a client may
// send its next line the moment it reads them), so "nothing pending" alone
// does not mean the last answer is out: exiting then loses it. A stdout
// that never drains is bounded by ctx.
func (f *Framer) writesDone(ctx context.Context) bool {
	done := make(chan struct{})
	go func() {
		f.wmu.Lock()
		//lint:ignore SA2001 an empty critical section is the point: a barrier behind the writer
		f.wmu.Unlock()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// Close is a no-op: stdin and stdout belong to the process.
func (f *Framer) Close() error { return nil }

// Read gives the SDK one accepted line at a time.
func (f *Framer) Read(p []byte) (int, error) {
	for len(f.rest) == 0 {
		if f.readErr != nil {
			f.eofOnce.Do(func() { close(f.eof) })
			<-f.release
			return 0, f.readErr
		}
		f.readOne()
	}
	n := copy(p, f.rest)
	f.rest = f.rest[n:]
	return n, nil
}

// readOne reads one line and accepts or refuses it; at the end of input
// it records how input ended.
func (f *Framer) readOne() {
	line, tooLong, err := f.readLine()
	switch {
	case tooLong:
		f.refuse(jsonrpc.ID{}, jsonrpc.CodeParseError, fmt.Sprintf("Parse error: a message line is longer than %d bytes; the line was discarded", f.maxLine()))
	case len(line) > 0:
		f.accept(line)
	}
	if err != nil {
		f.readErr = err
	}
}

func (f *Framer) maxLine() int {
	if f.MaxLine > 0 {
		return f.MaxLine
	}
	return DefaultMaxLine
}

// readLine returns the next line without its newline. A line longer than
// the limit is read to its end and dropped: tooLong reports it.
func (f *Framer) readLine() (line []byte, tooLong bool, err error) {
	limit := f.maxLine()
	for {
		chunk, err := f.in.ReadSlice('\n')
		chunk = bytes.TrimSuffix(chunk, []byte("\n"))
		if !tooLong {
			if len(line)+len(chunk) > limit {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, tooLong, err
	}
}

// rpcError is a refusal: the JSON-RPC error code, its message, and the id
// of the request it answers (the zero ID when that id is unknown).
type rpcError struct {
	id   jsonrpc.ID
	code int64
	msg  string
}

// accept checks one line and either queues it for the SDK or answers it.
func (f *Framer) accept(line []byte) {
	line = bytes.Trim(line, " \t\r")
	if len(line) == 0 {
		return // blank lines carry nothing
	}
	// An object is checked by check's own decode (one scan fewer per line:
	// every request is an object); anything else is checked here.
	if line[0] != '{' && !json.Valid(line) {
		f.refuse(jsonrpc.ID{}, jsonrpc.CodeParseError, parseErrorMsg)
		return
	}
	var msgs []message
	switch line[0] {
	case '{':
		m, rerr := check(line)
		if rerr != nil {
			if rerr.code != 0 {
				f.refuse(rerr.id, rerr.code, rerr.msg)
			} else if f.Log != nil {
				f.Log.Warn("dropped a malformed JSON-RPC response from the client")
			}
			return
		}
		if m.isRequest && f.inFlight(m.key) {
			// The SDK would drop it without an answer; answering with its id
			// would look like the answer to the first request.
			f.refuse(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Invalid Request: the id of a request still in flight was used again")
			return
		}
		msgs = []message{m}
	case '[':
		var members []json.RawMessage
		var rerr *rpcError
		if msgs, members, rerr = f.checkBatch(line); rerr != nil {
			f.refuse(rerr.id, rerr.code, rerr.msg)
			return
		}
		f.track(msgs)
		if f.conn {
			f.ready = append(f.ready, splitBatchDecoded(msgs)...)
		} else {
			f.rest = splitBatch(msgs, members)
		}
		return
	default:
		f.refuse(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Invalid Request: a JSON-RPC message is a JSON object")
		return
	}
	f.track(msgs)
	if f.conn {
		f.ready = append(f.ready, delivery{msgs: []jsonrpc.Message{msgs[0].decoded}})
		return
	}
	f.rest = append(line, '\n')
}

const parseErrorMsg = "Parse error: the line is not exactly one JSON value (one JSON-RPC message per line)"

// message is what the Framer needs to know of an accepted message.
type message struct {
	key          string // canonical id ("" for a notification)
	method       string
	isRequest    bool
	notification bool
	cancelled    string // for notifications/cancelled: the canonical id it cancels
	decoded      jsonrpc.Message
}

// check validates one JSON-RPC message (a JSON object) the way the SDK will
// decode it, and more strictly where the SDK would alter it. A nil error
// with code 0 means: drop silently (an invalid response is never answered).
func check(raw []byte) (message, *rpcError) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		// raw starts with '{', so only a line that is not exactly one JSON
		// value fails here.
		return message{}, &rpcError{code: jsonrpc.CodeParseError, msg: parseErrorMsg}
	}
	methodRaw, hasMethod := fields["method"]
	_, hasResult := fields["result"]
	_, hasError := fields["error"]
	idRaw, hasID := fields["id"]
	var id jsonrpc.ID
	var key string
	if hasID {
		var ok bool
		if id, key, ok = parseID(idRaw); !ok {
			if !hasMethod && (hasResult || hasError) {
				return message{}, &rpcError{} // a malformed response: nothing to answer
			}
			return message{}, &rpcError{code: jsonrpc.CodeInvalidRequest,
				msg: fmt.Sprintf("Invalid Request: id must be a string or an integer of at most 2^53 in magnitude, not %.40s", idRaw)}
		}
	}
	refuse := func(format string, args ...any) *rpcError {
		return &rpcError{id: id, code: jsonrpc.CodeInvalidRequest, msg: "Invalid Request: " + fmt.Sprintf(format, args...)}
	}
	if v := fields["jsonrpc"]; string(v) != `"2.0"` {
		return message{}, refuse(`"jsonrpc" must be "2.0"`)
	}
	var method string
	if hasMethod {
		if err := json.Unmarshal(methodRaw, &method); err != nil {
			return message{}, refuse("method must be a string")
		}
	}
	if p, ok := fields["params"]; hasMethod && ok && p[0] != '{' && p[0] != '[' && string(p) != "null" {
		return message{}, refuse("params must be an object")
	}
	if !hasMethod && !hasResult && !hasError {
		return message{}, refuse("a request needs a method")
	}
	decoded, ok := plainRequest(raw, fields, id, method)
	var err error
	if !ok {
		decoded, err = jsonrpc.DecodeMessage(raw)
	}
	if err != nil {
		if !hasMethod {
			return message{}, &rpcError{} // a malformed response: nothing to answer
		}
		return message{}, refuse("%v", err)
	}
	m := message{key: key, method: method, isRequest: hasMethod && hasID, notification: hasMethod && !hasID, decoded: decoded}
	if method == "notifications/cancelled" {
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(fields["params"], &p) == nil && len(p.RequestID) > 0 {
			_, m.cancelled, _ = parseID(p.RequestID)
		}
	}
	return m, nil
}

// plainRequest builds the message jsonrpc.DecodeMessage would decode from
// raw, for the common case it can tell without decoding raw again: a
// request or notification with no members but jsonrpc, id, method and
// params, whose method and string id are plain ASCII without escapes (so
// both JSON decoders read them alike), nested no deeper than the SDK's
// decoder accepts. DecodeMessage runs the SDK's decoder twice, each time
// with a fresh 32 KB buffer; this is what it returns
// (TestPlainRequestIsDecodeMessage). For anything else ok is false and the
// caller decodes with DecodeMessage, refusals and all.
func plainRequest(raw []byte, fields map[string]json.RawMessage, id jsonrpc.ID, method string) (msg jsonrpc.Message, ok bool) {
	methodRaw, hasMethod := fields["method"]
	if !hasMethod || !plainASCII(methodRaw) {
		return nil, false
	}
	for k := range fields {
		switch k {
		case "jsonrpc", "method", "params":
		case "id":
			if fields["id"][0] == '"' && !plainASCII(fields["id"]) {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	if tooDeep(raw, sdkMaxDepth) {
		return nil, false
	}
	return &jsonrpc.Request{ID: id, Method: method, Params: fields["params"]}, true
}

// plainASCII: printable ASCII and no backslash, so the value is the same
// under any JSON decoder.
func plainASCII(raw []byte) bool {
	for _, c := range raw {
		if c < 0x20 || c >= 0x7f || c == '\\' {
			return false
		}
	}
	return true
}

// sdkMaxDepth is the nesting the SDK's JSON decoder refuses beyond
// (go-sdk internal/json, defaultMaxDepth).
const sdkMaxDepth = 1000

// tooDeep reports JSON nested deeper than max, counted as the SDK counts.
func tooDeep(data []byte, max int) bool {
	depth := 0
	inString, escaped := false, false
	for _, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > max {
				return true
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return false
}

// parseID accepts the ids the SDK carries unchanged: strings, and integers
// written as integers within ±2^53. It returns the SDK's ID and its key
// (idKey), which matches however the SDK re-encodes it.
func parseID(raw json.RawMessage) (jsonrpc.ID, string, bool) {
	if len(raw) == 0 {
		return jsonrpc.ID{}, "", false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return jsonrpc.ID{}, "", false
		}
		id, err := jsonrpc.MakeID(s)
		return id, idKey(id), err == nil
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n > maxExactID || n < -maxExactID {
		return jsonrpc.ID{}, "", false
	}
	id, err := jsonrpc.MakeID(float64(n))
	return id, idKey(id), err == nil
}

// splitBatch passes a batch's notifications to the SDK one line each and
// the rest as one batch. The SDK's ioConn waits for an answer to every
// member of a batch, notifications included, so a batch holding both would
// never be answered; JSON-RPC lets a server handle members in any order.
func splitBatch(msgs []message, members []json.RawMessage) []byte {
	var out, rest []byte
	for i, m := range msgs {
		if m.notification {
			out = append(append(out, members[i]...), '\n')
			continue
		}
		if rest == nil {
			rest = []byte{'['}
		} else {
			rest = append(rest, ',')
		}
		rest = append(rest, members[i]...)
	}
	if rest != nil {
		out = append(append(out, rest...), ']', '\n')
	}
	return out
}

// checkBatch validates a JSON array: refused whole unless the protocol
// version in use has batching and every member is valid.
func (f *Framer) checkBatch(raw []byte) ([]message, []json.RawMessage, *rpcError) {
	refuse := func(format string, args ...any) *rpcError {
		return &rpcError{code: jsonrpc.CodeInvalidRequest, msg: "Invalid Request: " + fmt.Sprintf(format, args...)}
	}
	f.mu.Lock()
	version := f.version
	f.mu.Unlock()
	if !batchVersions[version] {
		if version == "" {
			return nil, nil, refuse("JSON-RPC batches are not accepted: no protocol version with batching (2024-11-05, 2025-03-26) was negotiated; send one message per line")
		}
		return nil, nil, refuse("protocol version %s has no JSON-RPC batching; send one message per line", version)
	}
	var members []json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return nil, nil, refuse("%v", err)
	}
	if len(members) == 0 {
		return nil, nil, refuse("empty batch")
	}
	msgs := make([]message, 0, len(members))
	seen := map[string]bool{}
	for i, mr := range members {
		if len(mr) == 0 || mr[0] != '{' {
			return nil, nil, refuse("batch member %d is not a JSON object; nothing in the batch was run", i)
		}
		m, rerr := check(mr)
		if rerr != nil {
			msg := "malformed response"
			if rerr.code != 0 {
				msg = rerr.msg
			}
			return nil, nil, refuse("batch member %d: %s; nothing in the batch was run", i, msg)
		}
		if m.method == "initialize" {
			return nil, nil, refuse("initialize must not be part of a batch")
		}
		if m.isRequest {
			if seen[m.key] || f.inFlight(m.key) {
				return nil, nil, refuse("batch member %d reuses an id in flight; nothing in the batch was run", i)
			}
			seen[m.key] = true
		}
		msgs = append(msgs, m)
	}
	return msgs, members, nil
}

func (f *Framer) inFlight(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pending[key]
}

// track records requests passed to the SDK, and forgets those the client
// cancelled (a cancelled request may never be answered).
func (f *Framer) track(msgs []message) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range msgs {
		switch {
		case m.cancelled != "":
			if f.pending[m.cancelled] {
				delete(f.pending, m.cancelled)
				f.signalLocked()
			}
		case m.isRequest:
			f.pending[m.key] = true
			if m.method == "initialize" {
				f.initID = m.key
			}
		}
	}
}

func (f *Framer) signalLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// refuse answers a line that never reaches the SDK, encoded by the SDK.
func (f *Framer) refuse(id jsonrpc.ID, code int64, msg string) {
	if f.Log != nil {
		f.Log.Warn("refused a malformed JSON-RPC line", "code", code, "error", msg)
	}
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: code, Message: msg}})
	if err == nil && !id.IsValid() {
		data, err = withNullID(data)
	}
	if err != nil {
		if f.Log != nil {
			f.Log.Error("encoding an error reply", "error", err)
		}
		return
	}
	f.wmu.Lock()
	defer f.wmu.Unlock()
	_, _ = f.out.Write(append(data, '\n'))
}

// withNullID adds "id": null to an error response the SDK encoded: JSON-RPC
// 2.0 requires it when the request's id could not be read, and the SDK's
// encoder omits a zero id.
func withNullID(data []byte) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	m["id"] = json.RawMessage("null")
	return json.Marshal(m)
}

// Write passes the SDK's output through and notes the responses in it.
// The SDK's ioConn writes each message with its newline in one call, so
// the Framer's own replies, written under the same lock, fall between
// whole lines.
func (f *Framer) Write(p []byte) (int, error) {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	// Noted first: a client may send its next line (say, a batch after
	// initialize) as soon as it reads this one.
	data := p
	if len(f.partial) > 0 {
		data = append(f.partial, p...)
	}
	for line := range bytes.Lines(data) {
		if line[len(line)-1] != '\n' {
			f.partial = append([]byte(nil), line...) // the rest comes in the next Write
			return f.out.Write(p)
		}
		f.noteOutgoing(line)
	}
	f.partial = nil
	// The SDK writes each message whole, so a stand-in (see Splice) is
	// never cut across two writes.
	if out, ok := f.unsplice(p); ok {
		if _, err := f.out.Write(out); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return f.out.Write(p)
}

// noteOutgoing marks the request a response answers as answered, and
// learns the protocol version from the answer to initialize.
func (f *Framer) noteOutgoing(line []byte) {
	keys := responseKeys(line)
	if len(keys) == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range keys {
		if k == f.initID && f.initID != "" {
			var r struct {
				Result struct {
					ProtocolVersion string `json:"protocolVersion"`
				} `json:"result"`
			}
			if json.Unmarshal(line, &r) == nil {
				f.version = r.Result.ProtocolVersion
			}
			f.initID = ""
		}
		if f.pending[k] {
			delete(f.pending, k)
			f.signalLocked()
		}
	}
}

// responseKeys returns the canonical ids of the responses in one output
// line (a message or a batch). It reads only as far as it must: the SDK
// writes the id before the result, so a large result is not scanned.
func responseKeys(line []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(line))
	tok, err := dec.Token()
	if err != nil {
		return nil
	}
	if tok == json.Delim('[') {
		var keys []string
		for dec.More() {
			var raw json.RawMessage
			if dec.Decode(&raw) != nil {
				break
			}
			keys = append(keys, responseKeys(raw)...)
		}
		return keys
	}
	if tok != json.Delim('{') {
		return nil
	}
	var key string
	isResponse := false
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil
		}
		switch kt {
		case "method":
			return nil // a request or notification of ours
		case "id":
			var raw json.RawMessage
			if dec.Decode(&raw) != nil {
				return nil
			}
			_, key, _ = parseID(raw)
			if isResponse && key != "" {
				return []string{key}
			}
			continue
		case "result", "error":
			isResponse = true
			if key != "" {
				return []string{key}
			}
		}
		if skipValue(dec) != nil {
			return nil
		}
	}
	return nil
}

func skipValue(dec *json.Decoder) error {
	var raw json.RawMessage
	return dec.Decode(&raw)
}
