package stdio

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Connect makes the Framer the SDK's transport (an mcp.Transport): the SDK
// then gets each accepted message as check decoded it, where through
// mcp.IOTransport it would decode every line again (a json.Decoder scan
// of the line, an attempt to read it as a batch, and jsonrpc.DecodeMessage,
// each of the last two with a fresh 32 KB decoder buffer): about a third
// of the server's CPU per tools/call above a bare SDK server went there
// and to the garbage collections it caused (docs/per-call-cost.md). And
// the answers' ids are read from the messages the SDK writes, not parsed
// back out of their bytes.
//
// It behaves as the SDK's ioConn does: batches (where the Framer let one
// through) are answered with one array once every request in them is
// answered, and Read returns io.EOF once end of input is released
// (ReleaseEOF). Call Connect at most once, and use the Framer either as a
// Transport or as an io.Reader and io.Writer, not both.
func (f *Framer) Connect(context.Context) (mcp.Connection, error) {
	f.conn = true
	c := &conn{f: f, incoming: make(chan incoming), closed: make(chan struct{})}
	go c.readLoop()
	return c, nil
}

// delivery is what one accepted line gives the SDK: one message, or the
// requests of a batch (its notifications are delivered one by one, see
// splitBatch).
type delivery struct {
	msgs  []jsonrpc.Message
	batch bool
}

// splitBatchDecoded is splitBatch for decoded messages.
func splitBatchDecoded(msgs []message) []delivery {
	var out []delivery
	var rest []jsonrpc.Message
	for _, m := range msgs {
		if m.notification {
			out = append(out, delivery{msgs: []jsonrpc.Message{m.decoded}})
			continue
		}
		rest = append(rest, m.decoded)
	}
	if rest != nil {
		out = append(out, delivery{msgs: rest, batch: true})
	}
	return out
}

// next returns the next accepted line's messages, reading lines as it
// must; at end of input it waits for ReleaseEOF and returns how input
// ended.
func (f *Framer) next() (delivery, error) {
	for len(f.ready) == 0 {
		if f.readErr != nil {
			f.eofOnce.Do(func() { close(f.eof) })
			<-f.release
			return delivery{}, f.readErr
		}
		f.readOne()
	}
	d := f.ready[0]
	f.ready[0] = delivery{}
	f.ready = f.ready[1:]
	return d, nil
}

type incoming struct {
	d   delivery
	err error
}

// conn is the mcp.Connection of a Framer.
type conn struct {
	f        *Framer
	incoming chan incoming
	queue    []jsonrpc.Message // the rest of the last batch read

	batchMu sync.Mutex
	batches map[string]*batch // request key -> the batch it came in

	closeOnce sync.Once
	closed    chan struct{}
}

// batch collects the answers to one incoming batch's requests.
type batch struct {
	unresolved map[string]int // request key -> index in responses
	responses  []*jsonrpc.Response
}

// readLoop reads lines on its own goroutine, so that Close can end a Read
// waiting for input (stdin cannot be interrupted), as in the SDK's ioConn.
func (c *conn) readLoop() {
	for {
		d, err := c.f.next()
		select {
		case c.incoming <- incoming{d, err}:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

// Read implements mcp.Connection.
func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		next := c.queue[0]
		c.queue = c.queue[1:]
		return next, nil
	}
	var in incoming
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case in = <-c.incoming:
	case <-c.closed:
		return nil, io.EOF
	}
	if in.err != nil {
		return nil, in.err
	}
	if in.d.batch {
		b := &batch{unresolved: map[string]int{}}
		for _, m := range in.d.msgs {
			if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
				b.unresolved[idKey(req.ID)] = len(b.responses)
				b.responses = append(b.responses, nil)
			}
		}
		if len(b.responses) > 0 {
			c.batchMu.Lock()
			if c.batches == nil {
				c.batches = map[string]*batch{}
			}
			for k := range b.unresolved {
				c.batches[k] = b
			}
			c.batchMu.Unlock()
		}
	}
	c.queue = in.d.msgs[1:]
	return in.d.msgs[0], nil
}

// inBatch records resp in the batch its request came in, if any. It
// returns whether it did, and the batch's responses once resp was the
// last one missing.
func (c *conn) inBatch(key string, resp *jsonrpc.Response) ([]*jsonrpc.Response, bool) {
	c.batchMu.Lock()
	defer c.batchMu.Unlock()
	b, ok := c.batches[key]
	if !ok {
		return nil, false
	}
	b.responses[b.unresolved[key]] = resp
	delete(b.unresolved, key)
	delete(c.batches, key)
	if len(b.unresolved) == 0 {
		return b.responses, true
	}
	return nil, true
}

// Write implements mcp.Connection: one line per message (or per answered
// batch), under the Framer's write lock, the request it answers noted as
// answered first (a client may send its next line as soon as it reads
// this one).
func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f := c.f
	f.wmu.Lock()
	defer f.wmu.Unlock()
	resp, isResp := msg.(*jsonrpc.Response)
	if isResp {
		key := idKey(resp.ID)
		if all, ok := c.inBatch(key, resp); ok {
			if all == nil {
				return nil
			}
			raws := make([]json.RawMessage, len(all))
			keys := make([]string, len(all))
			for i, r := range all {
				raw, err := jsonrpc.EncodeMessage(r)
				if err != nil {
					return err
				}
				raws[i], keys[i] = raw, idKey(r.ID)
			}
			// As the SDK's ioConn writes a batch's answers.
			data, err := json.Marshal(raws)
			if err != nil {
				return err
			}
			for i, r := range all {
				f.noteAnswered(keys[i], r)
			}
			err = f.writeLine(append(data, '\n'))
			return err
		}
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	if isResp {
		f.noteAnswered(idKey(resp.ID), resp)
	}
	err = f.writeLine(append(data, '\n'))
	return err
}

// writeLine writes one encoded line (the caller holds wmu), with every
// stand-in for a result encoded ahead of time (Splice) replaced by that
// encoding.
func (f *Framer) writeLine(line []byte) error {
	if out, ok := f.unsplice(line); ok {
		line = out
	}
	_, err := f.out.Write(line)
	return err
}

// Close implements mcp.Connection. stdin and stdout stay open: they are
// the process's.
func (c *conn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// SessionID implements mcp.Connection: a stdio session has no id.
func (c *conn) SessionID() string { return "" }

// idKey is the canonical key of an id the SDK holds, whichever way it was
// written: parseID gives it for a request read, Write for its answer.
func idKey(id jsonrpc.ID) string {
	switch v := id.Raw().(type) {
	case string:
		return "s" + v
	case int64:
		return "n" + strconv.FormatInt(v, 10)
	}
	return ""
}

// noteAnswered is noteOutgoing for a response the SDK hands over as a
// message: the request it answers is no longer pending, and the answer to
// initialize tells the protocol version.
func (f *Framer) noteAnswered(key string, resp *jsonrpc.Response) {
	if key == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if key == f.initID {
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if len(resp.Result) > 0 {
			_ = json.Unmarshal(resp.Result, &r)
		}
		f.version = r.ProtocolVersion
		f.initID = ""
	}
	if f.pending[key] {
		delete(f.pending, key)
		f.signalLocked()
	}
}
