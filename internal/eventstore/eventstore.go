// Package eventstore keeps the SSE events a streamable HTTP session may ask
// to replay (Last-Event-ID), within a fixed memory budget that holds however
// long a session lives.
//
// The Go SDK's own mcp.MemoryEventStore (v1.8.0) bounds the bytes of event
// data but not its bookkeeping: every POST opens a stream, and the stream's
// map entry stays until its session ends, data or no data (about 160 bytes
// per call; a session making 400,000 calls holds 65 MB). Its purge, once
// the byte budget is reached, walks every stream of every session and drops
// the first event of each, so one append can cost a pass over hundreds of
// thousands of entries and drops nearly everything retained at once. See
// docs/sdk-event-store.md for the upstream report.
//
// Store drops the oldest events first, one at a time, at a constant cost
// per event, and forgets a stream when the last of its events is dropped.
// The events of POST streams go before those of the standalone GET streams
// (stream id ""): a POST stream carries the answer to one request and is
// resumed only when its connection broke before the answer got through,
// while a GET stream carries the session's notifications and is resumed
// whenever a client reconnects, so a burst of calls from one client does
// not cost another client the notifications it missed while away. Only a
// session's standalone stream is kept without events, since it lives as
// long as its session and a client resumes it at any time.
package eventstore

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// eventOverhead is what one retained event or open stream is charged beyond
// its data: the bookkeeping (a queue entry, a slice header, a share of the
// stream's map entry). Charging it bounds the memory of empty events (the
// SDK's priming events are empty) and of streams opened and never written.
const eventOverhead = 64

// ErrUnknownStream is returned by After for a stream the store does not
// hold: never opened, its session closed, or every event it had dropped and
// forgotten. The SDK answers such a resumption as it answers
// mcp.ErrEventsPurged: the client cannot resume that stream.
var ErrUnknownStream = errors.New("unknown stream")

// Store is an mcp.EventStore bounded in memory: data plus eventOverhead per
// event and per open stream never exceeds the budget given to New for
// longer than one append.
type Store struct {
	mu       sync.Mutex
	maxBytes int
	nBytes   int
	sessions map[string]map[string]*stream

	// Every charge, in the order it was made, in the queue of its
	// stream's kind: dropping from the front of a queue drops its oldest
	// event, which is always the first retained event of its own stream.
	posts, standalone queue
}

// queue is a FIFO of charges.
type queue struct {
	items []charge
	head  int
	stale int // charges in items[head:] whose session was closed
}

func (q *queue) len() int { return len(q.items) - q.head }

func (q *queue) push(c charge) { q.items = append(q.items, c) }

// pop removes the oldest charge; the queue's storage is reused once more
// than half of it is behind the head.
func (q *queue) pop() charge {
	c := q.items[q.head]
	q.items[q.head] = charge{}
	q.head++
	if q.head > len(q.items)/2 && q.head > 64 {
		q.items = append(q.items[:0], q.items[q.head:]...)
		q.head = 0
	}
	return c
}

// compact drops the charges of closed sessions once they are the majority,
// so charges of closed sessions waiting behind older live ones never make
// the queue more than twice what the budget retains.
func (q *queue) compact() {
	if q.stale <= 64 || q.stale <= q.len()-q.stale {
		return
	}
	items := make([]charge, 0, q.len()-q.stale)
	for _, c := range q.items[q.head:] {
		if !c.st.closed {
			items = append(items, c)
		}
	}
	q.items, q.head, q.stale = items, 0, 0
}

// stream is the retained tail of one SSE stream.
type stream struct {
	session, id string
	first       int      // stream index of events[0]
	events      [][]byte // retained events, in stream order
	charges     int      // charges of this stream still in the queue
	bytes       int      // their total
	closed      bool     // its session was closed
}

// charge is one entry of the queue: an event of st (event true) or the
// opening of st (event false).
type charge struct {
	st    *stream
	cost  int
	event bool
}

var _ mcp.EventStore = (*Store)(nil)

// New returns a Store that retains at most maxBytes (at least one event is
// always kept, however large).
func New(maxBytes int) *Store {
	return &Store{maxBytes: maxBytes, sessions: map[string]map[string]*stream{}}
}

// Open records a new stream. Opening a stream the store holds already
// keeps its events.
func (s *Store) Open(_ context.Context, sessionID, streamID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lookup(sessionID, streamID) != nil {
		return nil
	}
	st := &stream{session: sessionID, id: streamID}
	streams := s.sessions[sessionID]
	if streams == nil {
		streams = map[string]*stream{}
		s.sessions[sessionID] = streams
	}
	streams[streamID] = st
	s.push(charge{st: st, cost: eventOverhead})
	return nil
}

// Append retains data as the stream's next event. A stream the store does
// not hold (never opened, or forgotten after its events were dropped) is
// not resumable any more, so its events are not kept: they would cost
// memory and could never be replayed.
func (s *Store) Append(_ context.Context, sessionID, streamID string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.lookup(sessionID, streamID)
	if st == nil {
		return nil
	}
	st.events = append(st.events, data)
	s.push(charge{st: st, cost: len(data) + eventOverhead, event: true})
	return nil
}

// After yields the events of a stream after index, or one error when any
// of them was dropped (mcp.ErrEventsPurged) or the stream is not held
// (ErrUnknownStream): never part of what the client missed.
func (s *Store) After(_ context.Context, sessionID, streamID string, index int) iter.Seq2[[]byte, error] {
	s.mu.Lock()
	var events [][]byte
	var err error
	switch st := s.lookup(sessionID, streamID); {
	case st == nil:
		err = fmt.Errorf("eventstore: stream %q of session %q: %w", streamID, sessionID, ErrUnknownStream)
	case index+1 < st.first:
		err = fmt.Errorf("eventstore: stream %q of session %q after index %d: %w", streamID, sessionID, index, mcp.ErrEventsPurged)
	case index+1-st.first < len(st.events):
		// A copy: the slots are cleared as events are dropped.
		events = slices.Clone(st.events[index+1-st.first:])
	}
	s.mu.Unlock()
	return func(yield func([]byte, error) bool) {
		if err != nil {
			yield(nil, err)
			return
		}
		for _, e := range events {
			if !yield(e, nil) {
				return
			}
		}
	}
}

// SessionClosed forgets a session and everything it retained.
func (s *Store) SessionClosed(_ context.Context, sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.sessions[sessionID] {
		st.closed = true
		st.events = nil
		s.nBytes -= st.bytes
		s.queueOf(st).stale += st.charges
	}
	delete(s.sessions, sessionID)
	s.posts.compact()
	s.standalone.compact()
	return nil
}

// Stats reports what the store holds, for tests and diagnostics.
func (s *Store) Stats() (streams, events, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.sessions {
		streams += len(m)
		for _, st := range m {
			events += len(st.events)
		}
	}
	return streams, events, s.nBytes
}

func (s *Store) lookup(sessionID, streamID string) *stream {
	return s.sessions[sessionID][streamID]
}

// queueOf is the queue of st's charges.
func (s *Store) queueOf(st *stream) *queue {
	if st.id == "" {
		return &s.standalone
	}
	return &s.posts
}

// push adds a charge and drops the oldest ones while over budget, those of
// POST streams first, keeping the newest whatever its size.
func (s *Store) push(c charge) {
	q := s.queueOf(c.st)
	q.push(c)
	c.st.charges++
	c.st.bytes += c.cost
	s.nBytes += c.cost
	for s.nBytes > s.maxBytes {
		switch {
		case s.posts.len() > 1 || s.posts.len() == 1 && q != &s.posts:
			s.drop(&s.posts)
		case s.standalone.len() > 1 || s.standalone.len() == 1 && q != &s.standalone:
			s.drop(&s.standalone)
		default:
			return // only the newest is left
		}
	}
}

// drop removes the oldest charge of q: its event leaves its stream, and a
// stream left with no charge is forgotten, except a session's standalone
// stream.
func (s *Store) drop(q *queue) {
	c := q.pop()
	st := c.st
	if st.closed {
		q.stale--
		return
	}
	st.charges--
	st.bytes -= c.cost
	s.nBytes -= c.cost
	if c.event {
		st.events[0] = nil
		st.events = st.events[1:]
		st.first++
	}
	if st.charges == 0 && st.id != "" {
		streams := s.sessions[st.session]
		delete(streams, st.id)
		if len(streams) == 0 {
			delete(s.sessions, st.session)
		}
	}
}
