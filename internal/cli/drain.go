package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// drainingStdio lets the server finish what it was asked before it sees
// end of input. The SDK closes the connection as soon as stdin reports EOF,
// which would drop the answers to requests that a client wrote just before
// closing its end (a common pattern in scripts). The reader counts JSON-RPC
// requests going in, the writer counts responses going out, and EOF is
// delivered only once every request has been answered (or maxWait passed).
type drainingStdio struct {
	in      *bufio.Reader
	rest    []byte // the part of the current line not yet returned
	out     io.Writer
	maxWait time.Duration

	mu      sync.Mutex
	cond    *sync.Cond
	pending map[string]bool // ids of requests read but not yet answered
	partial []byte          // output not yet ending in a newline
}

func newDrainingStdio(in io.Reader, out io.Writer, maxWait time.Duration) *drainingStdio {
	d := &drainingStdio{in: bufio.NewReaderSize(in, 64<<10), out: out, maxWait: maxWait, pending: map[string]bool{}}
	d.cond = sync.NewCond(&d.mu)
	return d
}

type rpcEnvelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

// Read returns input a line at a time so that every request is counted
// before the SDK can act on it.
func (d *drainingStdio) Read(p []byte) (int, error) {
	if len(d.rest) == 0 {
		line, err := d.in.ReadBytes('\n')
		if len(line) == 0 {
			if err == io.EOF {
				d.waitDrained()
			}
			return 0, err
		}
		d.note(line, true)
		d.rest = line
	}
	n := copy(p, d.rest)
	d.rest = d.rest[n:]
	return n, nil
}

// Write passes output through and counts the responses in it.
func (d *drainingStdio) Write(p []byte) (int, error) {
	n, err := d.out.Write(p)
	d.mu.Lock()
	d.partial = append(d.partial, p[:n]...)
	for {
		i := bytes.IndexByte(d.partial, '\n')
		if i < 0 {
			break
		}
		line := d.partial[:i]
		d.partial = d.partial[i+1:]
		d.noteLocked(line, false)
	}
	d.mu.Unlock()
	return n, err
}

func (d *drainingStdio) Close() error { return nil }

func (d *drainingStdio) note(line []byte, incoming bool) {
	d.mu.Lock()
	d.noteLocked(line, incoming)
	d.mu.Unlock()
}

func (d *drainingStdio) noteLocked(line []byte, incoming bool) {
	line = bytes.TrimSpace(line)
	var msgs []rpcEnvelope
	if len(line) > 0 && line[0] == '[' {
		_ = json.Unmarshal(line, &msgs)
	} else {
		var m rpcEnvelope
		if json.Unmarshal(line, &m) == nil {
			msgs = []rpcEnvelope{m}
		}
	}
	for _, m := range msgs {
		if incoming && m.Method == "notifications/cancelled" && len(m.Params.RequestID) > 0 {
			// A cancelled request may never be answered.
			delete(d.pending, string(m.Params.RequestID))
			continue
		}
		if len(m.ID) == 0 || string(m.ID) == "null" {
			continue
		}
		id := string(m.ID)
		switch {
		case incoming && m.Method != "":
			d.pending[id] = true
		case !incoming && m.Method == "":
			delete(d.pending, id)
		}
	}
	d.cond.Broadcast()
}

func (d *drainingStdio) waitDrained() {
	deadline := time.Now().Add(d.maxWait)
	timer := time.AfterFunc(d.maxWait, func() { d.mu.Lock(); d.cond.Broadcast(); d.mu.Unlock() })
	defer timer.Stop()
	d.mu.Lock()
	defer d.mu.Unlock()
	for len(d.pending) > 0 && time.Now().Before(deadline) {
		d.cond.Wait()
	}
}
