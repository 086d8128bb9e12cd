package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/errarg"
	"github.com/tmux-mcp/tmux-mcp/internal/record"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// Recordings (record_pane, list_recordings, tmux://recordings/{id}): the
// state this server process keeps of them, the hook through which the
// tools that type into a pane add their input, and the resource. The
// recording itself (the file, its timing and limits) is package record.

// recordingsMaxActive bounds the recordings running at once in one
// server: each holds a subscription and an open file.
const recordingsMaxActive = 32

// recordingsKept is how many recordings (running or stopped) the server
// remembers for list_recordings and the resource; the oldest stopped ones
// are forgotten first. Their files stay.
const recordingsKept = 256

// recordingStore holds the recordings of one server process.
type recordingStore struct {
	mu     sync.Mutex
	byID   map[string]*recording
	order  []*recording             // oldest first
	active map[paneKey][]*recording // running recordings by pane
}

// recording is one record_pane recording.
type recording struct {
	id string
	// owner is the CallerIdentity of the caller that started it (the one
	// identity of owner marks and the audit log), not the Owner of run_ids
	// and cursors, which includes the HTTP session: a recording runs on
	// after the session that started it, and the person who started it
	// reads it later from another.
	owner   string
	key     paneKey
	path    string
	started time.Time
	rec     *record.Recorder
	cancel  context.CancelFunc // ends the pump

	mu            sync.Mutex
	width, height int
}

// recordings is the server's store, made on first use.
func (s *Server) recordings() *recordingStore {
	s.recOnce.Do(func() {
		st := &recordingStore{byID: map[string]*recording{}, active: map[paneKey][]*recording{}}
		s.recStore.Store(st)
	})
	return s.recStore.Load()
}

// newRecordingID is a recording's id: random, so that one client cannot
// guess another's (each is also checked against its owner).
func newRecordingID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "rec-" + hex.EncodeToString(b[:])
}

// recordingURI is the resource of a recording.
func recordingURI(id string) string { return "tmux://recordings/" + id }

// add registers a started recording; it fails when too many run.
func (st *recordingStore) add(r *recording) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	n := 0
	for _, rs := range st.active {
		n += len(rs)
	}
	if n >= recordingsMaxActive {
		return expectedf("%d recordings are running in this server, the most it runs at once: stop one with record_pane(output_path=null)", n)
	}
	st.byID[r.id] = r
	st.order = append(st.order, r)
	st.active[r.key] = append(st.active[r.key], r)
	st.evictLocked()
	return nil
}

// evictLocked forgets the oldest stopped recordings beyond recordingsKept.
func (st *recordingStore) evictLocked() {
	for i := 0; len(st.order) > recordingsKept && i < len(st.order); {
		r := st.order[i]
		if st.running(r) {
			i++
			continue
		}
		delete(st.byID, r.id)
		st.order = append(st.order[:i], st.order[i+1:]...)
	}
}

// running reports whether r is among the running recordings; st.mu is held.
func (st *recordingStore) running(r *recording) bool {
	for _, x := range st.active[r.key] {
		if x == r {
			return true
		}
	}
	return false
}

// ended removes a stopped recording from the running ones.
func (st *recordingStore) ended(r *recording) {
	st.mu.Lock()
	defer st.mu.Unlock()
	rs := st.active[r.key]
	for i, x := range rs {
		if x == r {
			rs = append(rs[:i:i], rs[i+1:]...)
			break
		}
	}
	if len(rs) == 0 {
		delete(st.active, r.key)
	} else {
		st.active[r.key] = rs
	}
}

// runningOn returns the running recordings of a pane, those of owner only
// when owner is not "".
func (st *recordingStore) runningOn(k paneKey, owner string) []*recording {
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []*recording
	for _, r := range st.active[k] {
		if owner == "" || r.owner == owner {
			out = append(out, r)
		}
	}
	return out
}

// get returns owner's recording id, or nil (also for another's).
func (st *recordingStore) get(owner, id string) *recording {
	st.mu.Lock()
	defer st.mu.Unlock()
	r := st.byID[id]
	if r == nil || r.owner != owner {
		return nil
	}
	return r
}

// of returns owner's recordings, newest first.
func (st *recordingStore) of(owner string) []*recording {
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []*recording
	for _, r := range st.order {
		if r.owner == owner {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].started.After(out[j].started) })
	return out
}

// all returns every running recording.
func (st *recordingStore) all() []*recording {
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []*recording
	for _, rs := range st.active {
		out = append(out, rs...)
	}
	return out
}

// stop ends a recording with a reason: the file gets its last line and is
// closed before stop returns.
func (r *recording) stop(reason string) {
	_ = r.rec.Stop(time.Now(), reason)
	r.cancel()
}

// stopRecordings ends every running recording (the server is closing),
// each file complete.
func (s *Server) stopRecordings(reason string) {
	st := s.recStore.Load()
	if st == nil {
		return
	}
	for _, r := range st.all() {
		r.stop(reason)
		st.ended(r)
	}
}

// recordTyping adds what a tool is about to type into a pane to the
// pane's running recordings, as an input event, before it is typed: the
// output it causes comes after it. Secret input is never written: a marker
// says only that something was typed. The function returned is called
// with the typing's outcome; a failed typing gets a marker saying the
// input may not all have reached the pane.
func (c *Call) recordTyping(sock tmux.Socket, pane string, data []byte, secret bool) func(error) {
	st := c.recStore.Load()
	if st == nil || len(data) == 0 && !secret {
		return func(error) {}
	}
	rs := st.runningOn(paneKey{c.host, sock, pane}, "")
	if len(rs) == 0 {
		return func(error) {}
	}
	now := time.Now()
	for _, r := range rs {
		if secret {
			_ = r.rec.Marker(now, "secret input typed (not recorded)")
		} else {
			_ = r.rec.Input(now, data)
		}
	}
	return func(err error) {
		if err == nil {
			return
		}
		now := time.Now()
		for _, r := range rs {
			_ = r.rec.Marker(now, "the input above may not all have reached the pane (the typing failed)")
		}
	}
}

// recorded reports whether a pane has a running recording, for a tool that
// must do more work to say what it typed (paste_buffer reads the buffer).
func (c *Call) recorded(sock tmux.Socket, pane string) bool {
	st := c.recStore.Load()
	return st != nil && len(st.runningOn(paneKey{c.host, sock, pane}, "")) > 0
}

// typedBytes is what send_keys and send_and_wait type, as a recording's
// input: the keys as the program reads them, then Enter.
func typedBytes(keys string, enter, literal, suppress bool) []byte {
	if suppress {
		keys = " " + keys
	}
	// Text longer than one command is typed as literal chunks
	// (pwKeyCommands); a key name is never that long.
	b := record.Keys(keys, literal || len(keys) > pwKeysChunk)
	if enter {
		b = append(b, '\r')
	}
	return b
}

// pastedBytes is what a paste types: tmux's paste-buffer replaces each
// newline with a carriage return (as a terminal's Enter).
func pastedBytes(text string) []byte {
	return []byte(strings.ReplaceAll(text, "\n", "\r"))
}

// recordingTemplates is the resource of each recording.
var recordingTemplates = []*mcp.ResourceTemplate{
	{URITemplate: "tmux://recordings/{recording_id}", Name: "recording", Title: "Pane Recording", MIMEType: "application/x-asciicast",
		Description: "An asciicast v2 recording made by record_pane; only its maker can read it."},
}

// recordingReadMax bounds a recording read as a resource: a bigger file is
// read from its path.
const recordingReadMax = maxResultBytes

// readRecording serves tmux://recordings/{recording_id} to the identity
// that made the recording; to any other it does not exist.
func (s *Server) readRecording(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id, ok := strings.CutPrefix(uri, "tmux://recordings/")
	if !ok || id == "" || strings.ContainsAny(id, "/?#") {
		return nil, resourceNotFound("unknown tmux:// resource")
	}
	r := s.recordings().get(CallerIdentity(ctx), id)
	if r == nil {
		return nil, resourceNotFound("Recording not found: " + id + " (list_recordings lists yours)")
	}
	f, err := os.Open(r.path)
	if err != nil {
		return nil, resourceNotFound(fmt.Sprintf("Recording %s: its file %s cannot be read: %v", id, errarg.Bare(r.path), errors.Unwrap(err)))
	}
	defer f.Close()
	// Events are written whole, so the file read up to any point is a
	// valid recording (of a running one: so far).
	body, err := io.ReadAll(io.LimitReader(f, recordingReadMax+1))
	if err != nil {
		return nil, fmt.Errorf("reading recording %s: %w", id, err)
	}
	if len(body) > recordingReadMax {
		return nil, resourceNotFound(fmt.Sprintf("Recording %s is larger than a resource read returns (%d bytes): read the file %s", id, recordingReadMax, errarg.Bare(r.path)))
	}
	if i := bytes.LastIndexByte(body, '\n'); i >= 0 {
		body = body[:i+1] // a line being written right now is left out
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/x-asciicast", Text: string(body)}}}, nil
}
