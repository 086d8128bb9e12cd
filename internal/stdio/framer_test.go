package stdio

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// syncBuffer is an io.Writer safe for the Framer's concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Split(strings.TrimSuffix(s.b.String(), "\n"), "\n")
}

// readAll reads what the SDK would see until EOF, releasing EOF at once.
func readAll(t *testing.T, f *Framer) string {
	t.Helper()
	f.ReleaseEOF()
	got, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}

// What reaches the SDK, and what is answered instead.
func TestFramerLines(t *testing.T) {
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	cases := []struct {
		name    string
		in      string
		passed  string // what the SDK reads
		replies []string
	}{
		{"valid", ping + "\n", ping + "\n", nil},
		{"no final newline", ping, ping + "\n", nil},
		{"CRLF and spaces", "  " + ping + " \r\n", ping + "\n", nil},
		{"blank lines", "\n\r\n \t\n" + ping + "\n", ping + "\n", nil},
		{"garbage then valid", "xx\n" + ping + "\n", ping + "\n",
			[]string{`{"error":{"code":-32700,"message":"Parse error: the line is not exactly one JSON value (one JSON-RPC message per line)"},"id":null,"jsonrpc":"2.0"}`}},
		{"id kept in the error", `{"jsonrpc":"2.0","id":"a b","method":3}` + "\n", "",
			[]string{`{"jsonrpc":"2.0","id":"a b","error":{"code":-32600,"message":"Invalid Request: method must be a string"}}`}},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n", `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n", nil},
		{"id in flight used again", `{"jsonrpc":"2.0","id":5,"method":"a"}` + "\n" + `{"jsonrpc":"2.0","id":5,"method":"b"}` + "\n",
			`{"jsonrpc":"2.0","id":5,"method":"a"}` + "\n",
			[]string{`{"error":{"code":-32600,"message":"Invalid Request: the id of a request still in flight was used again"},"id":null,"jsonrpc":"2.0"}`}},
		{"null params", `{"jsonrpc":"2.0","id":2,"method":"ping","params":null}`, `{"jsonrpc":"2.0","id":2,"method":"ping","params":null}` + "\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out syncBuffer
			f := New(strings.NewReader(c.in), &out)
			if got := readAll(t, f); got != c.passed {
				t.Errorf("SDK read %q, want %q", got, c.passed)
			}
			got := out.lines()
			if len(c.replies) == 0 {
				if got[0] != "" {
					t.Errorf("replies %q, want none", got)
				}
				return
			}
			if strings.Join(got, "\n") != strings.Join(c.replies, "\n") {
				t.Errorf("replies\n%q\nwant\n%q", got, c.replies)
			}
		})
	}
}

// A line over the limit is answered and skipped without being held: the
// next line still gets through.
func TestFramerLongLine(t *testing.T) {
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	var out syncBuffer
	f := New(strings.NewReader(strings.Repeat("x", 1<<20)+"\n"+ping+"\n"), &out)
	f.MaxLine = 1000
	if got := readAll(t, f); got != ping+"\n" {
		t.Errorf("SDK read %.100q", got)
	}
	if got := out.lines(); len(got) != 1 || !strings.Contains(got[0], `"code":-32700`) || !strings.Contains(got[0], "longer than 1000 bytes") {
		t.Errorf("replies %q", got)
	}
}

func TestParseID(t *testing.T) {
	cases := []struct {
		raw string
		key string // "" when refused
	}{
		{`1`, "n1"}, {`-1`, "n-1"}, {`0`, "n0"}, {`9007199254740992`, "n9007199254740992"},
		{`9007199254740993`, ""}, {`-9007199254740993`, ""}, {`1.0`, ""}, {`1.5`, ""}, {`1e2`, ""},
		{`9223372036854775808`, ""}, {`null`, ""}, {`true`, ""}, {`{}`, ""}, {`[]`, ""},
		{`"x"`, "sx"}, {`"\u0041"`, "sA"}, {`""`, "s"},
	}
	for _, c := range cases {
		_, key, ok := parseID(json.RawMessage(c.raw))
		if ok != (c.key != "") || key != c.key {
			t.Errorf("parseID(%s) = %q, %v; want %q", c.raw, key, ok, c.key)
		}
	}
}

// responseKeys finds the ids of responses, as the SDK writes them, and
// ignores requests and notifications going out.
func TestResponseKeys(t *testing.T) {
	cases := []struct {
		line string
		want string
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, "n1"},
		{`{"jsonrpc":"2.0","id":"\u0041","error":{"code":1,"message":"x"}}`, "sA"},
		{`{"jsonrpc":"2.0","result":{"x":[1,2]},"id":3}`, "n3"},
		{`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":"b","result":{}}]`, "n1,sb"},
		{`{"jsonrpc":"2.0","id":4,"method":"roots/list"}`, ""},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"x":{"id":1,"result":2}}}`, ""},
	}
	for _, c := range cases {
		if got := strings.Join(responseKeys([]byte(c.line)), ","); got != c.want {
			t.Errorf("responseKeys(%s) = %q, want %q", c.line, got, c.want)
		}
	}
}

// Batches pass only once a version with batching was negotiated, with
// their notifications split out.
func TestFramerBatch(t *testing.T) {
	batch := `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`
	for _, c := range []struct {
		version, passed string
	}{
		{"", ""},
		{"2025-06-18", ""},
		{"2026-07-28", ""},
		{"2025-03-26", `{"jsonrpc":"2.0","method":"notifications/x"}` + "\n" + `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]` + "\n"},
		{"2024-11-05", `{"jsonrpc":"2.0","method":"notifications/x"}` + "\n" + `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]` + "\n"},
	} {
		var out syncBuffer
		init := `{"jsonrpc":"2.0","id":"i","method":"initialize","params":{}}`
		pr, pw := io.Pipe()
		f := New(pr, &out)
		go func() {
			_, _ = io.WriteString(pw, init+"\n")
			// The SDK answers initialize before reading on.
			for f.Pending() != 0 || !strings.Contains(strings.Join(out.lines(), ""), `"i"`) {
				time.Sleep(time.Millisecond)
			}
			_, _ = io.WriteString(pw, batch+"\n")
			_ = pw.Close()
		}()
		buf := make([]byte, 1<<16)
		n, _ := f.Read(buf)
		if string(buf[:n]) != init+"\n" {
			t.Fatalf("read %q", buf[:n])
		}
		if c.version != "" {
			_, _ = f.Write([]byte(`{"jsonrpc":"2.0","id":"i","result":{"protocolVersion":"` + c.version + `"}}` + "\n"))
		} else {
			_, _ = f.Write([]byte(`{"jsonrpc":"2.0","id":"i","error":{"code":1,"message":"no"}}` + "\n"))
		}
		if got := readAll(t, f); got != c.passed {
			t.Errorf("%q: SDK read %q, want %q", c.version, got, c.passed)
		}
		refused := strings.Contains(strings.Join(out.lines(), ""), `"code":-32600`)
		if refused != (c.passed == "") {
			t.Errorf("%q: replies %q", c.version, out.lines())
		}
	}
}

// End of input reaches the SDK only when released; WaitAnswered reports
// when every request read was answered or cancelled by the client (what
// the old drainingStdio guaranteed by holding EOF back).
func TestFramerHoldsEOF(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n" +
		`{"jsonrpc":"2.0","id":"a","method":"tools/call"}` + "\n" +
		`{"jsonrpc":"2.0","id":"b","method":"tools/call"}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}` + "\n"
	var out syncBuffer
	f := New(strings.NewReader(in), &out)
	read := make(chan string)
	go func() { b, _ := io.ReadAll(f); read <- string(b) }()
	<-f.InputClosed()
	if n := f.Pending(); n != 2 {
		t.Fatalf("pending %d, want 2 (1 and b; a was cancelled)", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	if f.WaitAnswered(ctx) {
		t.Error("answered with two requests open")
	}
	cancel()
	// Written in two pieces: responses are counted per line.
	_, _ = f.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + `{"jsonrpc":"2.0",`))
	_, _ = f.Write([]byte(`"id":"b","result":{}}` + "\n"))
	ctx, cancel = context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if !f.WaitAnswered(ctx) {
		t.Errorf("still pending: %d", f.Pending())
	}
	select {
	case got := <-read:
		t.Fatalf("EOF reached the SDK before release: %q", got)
	case <-time.After(20 * time.Millisecond):
	}
	f.ReleaseEOF()
	if got := <-read; got != in {
		t.Errorf("SDK read %q", got)
	}
}

// gatedWriter is a stdout whose Write blocks until open is closed: a slow
// pipe, or a writing goroutine the scheduler has not run yet.
type gatedWriter struct {
	open    chan struct{}
	started chan struct{}
	syncBuffer
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	close(g.started)
	<-g.open
	return g.syncBuffer.Write(p)
}

// TestWaitAnsweredWaitsForTheBytes: a request counts as answered only once
// its answer is on stdout. WaitAnswered returning while the line was still
// being written let serve release end of input and the process exit with
// the answer lost (seen once in CI: "stdout closed before the answer").
func TestWaitAnsweredWaitsForTheBytes(t *testing.T) {
	out := &gatedWriter{open: make(chan struct{}), started: make(chan struct{})}
	f := New(strings.NewReader(`{"jsonrpc":"2.0","id":"wait","method":"tools/call"}`+"\n"), out)
	go func() { _, _ = io.ReadAll(f) }()
	<-f.InputClosed()
	go func() { _, _ = f.Write([]byte(`{"jsonrpc":"2.0","id":"wait","result":{}}` + "\n")) }()
	<-out.started
	answered := make(chan bool)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		answered <- f.WaitAnswered(ctx)
	}()
	select {
	case <-answered:
		t.Fatal("WaitAnswered returned while the answer was still being written")
	case <-time.After(100 * time.Millisecond):
	}
	close(out.open)
	if !<-answered {
		t.Fatal("not answered after the write")
	}
	if got := out.lines(); len(got) != 1 || !strings.Contains(got[0], `"wait"`) {
		t.Errorf("stdout: %q", got)
	}
	f.ReleaseEOF()
}

// readConn reads what the SDK gets through Connect until EOF, releasing
// EOF at once: each message encoded as the SDK would, one per line.
func readConn(t *testing.T, f *Framer) string {
	t.Helper()
	f.ReleaseEOF()
	c, err := f.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for {
		m, err := c.Read(context.Background())
		if err == io.EOF {
			return b.String()
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := jsonrpc.EncodeMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(data, '\n'))
	}
}

// Through Connect the SDK gets the same messages as through the
// io.Reader (decoded once, by the Framer), and the same lines are refused.
func TestConnLines(t *testing.T) {
	for _, in := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`  {"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"a","arguments":{"k":"v"}}} ` + "\r\n",
		"xx\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a b","method":3}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"1.0","id":1,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":2,"result":{}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
	} {
		var viaReader, viaConn syncBuffer
		fr := New(strings.NewReader(in), &viaReader)
		var want strings.Builder
		for line := range strings.Lines(readAll(t, fr)) {
			m, err := jsonrpc.DecodeMessage([]byte(strings.TrimSuffix(line, "\n")))
			if err != nil {
				t.Fatal(err)
			}
			data, _ := jsonrpc.EncodeMessage(m)
			want.Write(append(data, '\n'))
		}
		got := readConn(t, New(strings.NewReader(in), &viaConn))
		if got != want.String() {
			t.Errorf("%q: the SDK got %q through Connect, %q through the reader", in, got, want.String())
		}
		if r, c := viaReader.lines(), viaConn.lines(); strings.Join(r, "\n") != strings.Join(c, "\n") {
			t.Errorf("%q: replies %q through Connect, %q through the reader", in, c, r)
		}
	}
}

// A batch (where the protocol version has them) is answered with one
// array once all its requests are, its notifications delivered alone;
// pending requests and the protocol version are learnt from the messages
// the SDK writes.
func TestConnBatch(t *testing.T) {
	var out syncBuffer
	pr, pw := io.Pipe()
	f := New(pr, &out)
	c, err := f.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	go func() {
		_, _ = io.WriteString(pw, `{"jsonrpc":"2.0","id":"i","method":"initialize","params":{}}`+"\n")
	}()
	m, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if req, ok := m.(*jsonrpc.Request); !ok || req.Method != "initialize" || f.Pending() != 1 {
		t.Fatalf("read %#v, pending %d", m, f.Pending())
	}
	initID := m.(*jsonrpc.Request).ID
	if err := c.Write(ctx, &jsonrpc.Response{ID: initID, Result: json.RawMessage(`{"protocolVersion":"2025-03-26"}`)}); err != nil {
		t.Fatal(err)
	}
	if f.Pending() != 0 {
		t.Fatalf("initialize still pending")
	}
	go func() {
		_, _ = io.WriteString(pw, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":"two","method":"ping"}]`+"\n")
		_ = pw.Close()
	}()
	var ids []jsonrpc.ID
	var methods []string
	for range 3 {
		m, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		req := m.(*jsonrpc.Request)
		methods = append(methods, req.Method)
		if req.IsCall() {
			ids = append(ids, req.ID)
		}
	}
	if strings.Join(methods, " ") != "notifications/x ping ping" || f.Pending() != 2 {
		t.Fatalf("read %q, pending %d", methods, f.Pending())
	}
	// Answered in reverse order: one array, in the batch's order, once
	// both are answered.
	_ = c.Write(ctx, &jsonrpc.Response{ID: ids[1], Result: json.RawMessage(`{}`)})
	if n := len(out.lines()); n != 1 || f.Pending() != 2 {
		t.Fatalf("wrote %q before the batch was complete", out.lines())
	}
	_ = c.Write(ctx, &jsonrpc.Response{ID: ids[0], Result: json.RawMessage(`{}`)})
	got := out.lines()
	want := `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":"two","result":{}}]`
	if len(got) != 2 || got[1] != want || f.Pending() != 0 {
		t.Fatalf("wrote %q (want %s last), pending %d", got, want, f.Pending())
	}
	f.ReleaseEOF()
	if _, err := c.Read(ctx); err != io.EOF {
		t.Fatalf("after the input ended: %v", err)
	}
}

// What check hands the SDK is what jsonrpc.DecodeMessage decodes, whether
// it took plainRequest's way or DecodeMessage's, and plainRequest takes
// the requests it should.
func TestPlainRequestIsDecodeMessage(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, c := range []struct {
		line  string
		plain bool
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_pane_info","arguments":{"pane_id":"%0"}}}`, true},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, true},
		{`{"method":"ping","id":"a-b c","jsonrpc":"2.0"}`, true},
		{` { "jsonrpc" : "2.0" , "id" : -9007199254740992 , "method" : "ping" , "params" : [ 1 , "é" ] } `, true},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\u00e9\n\\\"","y":[true,null,1e400]}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":` + deep(998) + `}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":` + deep(1000) + `}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"p\u0069ng"}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"pïng"}`, false},
		{`{"jsonrpc":"2.0","id":"\u0041","method":"ping"}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","extra":1}`, false},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, false},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}`, false},
	} {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal([]byte(c.line), &fields); err != nil {
			t.Fatal(err)
		}
		var id jsonrpc.ID
		if raw, ok := fields["id"]; ok {
			id, _, _ = parseID(raw)
		}
		var method string
		_ = json.Unmarshal(fields["method"], &method)
		if _, ok := plainRequest([]byte(c.line), fields, id, method); ok != c.plain {
			t.Errorf("%.80s: plain %v, want %v", c.line, ok, c.plain)
		}
		m, rerr := check([]byte(c.line))
		want, err := jsonrpc.DecodeMessage([]byte(c.line))
		if (rerr != nil) != (err != nil) {
			t.Errorf("%.80s: check %v, DecodeMessage %v", c.line, rerr, err)
			continue
		}
		if err == nil && !reflect.DeepEqual(m.decoded, want) {
			t.Errorf("%.80s:\ncheck gives  %#v\nDecodeMessage %#v", c.line, m.decoded, want)
		}
	}
}

func FuzzPlainRequest(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{}}}`)
	f.Add(`{"jsonrpc":"2.0","method":"n","params":[]}`)
	f.Fuzz(func(t *testing.T, line string) {
		m, rerr := check([]byte(line))
		if rerr != nil {
			return
		}
		want, err := jsonrpc.DecodeMessage([]byte(line))
		if err != nil {
			t.Fatalf("check accepted what DecodeMessage refuses: %v", err)
		}
		if !reflect.DeepEqual(m.decoded, want) {
			t.Fatalf("check gives %#v, DecodeMessage %#v", m.decoded, want)
		}
	})
}
