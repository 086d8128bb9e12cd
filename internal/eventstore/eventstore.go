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
// Only the standalone GET stream of a session (stream id "") is kept
// without events, since it lives as long as its session and a client
// resumes it at any time.
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

	// queue holds every charge in the order it was made, oldest at head;
	// dropping from the front drops the oldest event of the whole store,
	// which is always the first retained event of its own stream.
	queue []charge
	head  int
	stale int // charges in queue[head:] whose session was closed
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
		s.stale += st.charges
	}
	delete(s.sessions, sessionID)
	// Charges of closed sessions wait in the queue behind older live ones;
	// once they are the majority, the queue is rebuilt without them, so it
	// never grows beyond twice what the budget retains.
	if live := len(s.queue) - s.head - s.stale; s.stale > 64 && s.stale > live {
		s.compact()
	}
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

// push adds a charge and drops the oldest ones while over budget, keeping
// the newest whatever its size.
func (s *Store) push(c charge) {
	s.queue = append(s.queue, c)
	c.st.charges++
	c.st.bytes += c.cost
	s.nBytes += c.cost
	for s.nBytes > s.maxBytes && len(s.queue)-s.head > 1 {
		s.dropOldest()
	}
}

// dropOldest removes the charge at the head of the queue: its event leaves
// its stream, and a stream left with no charge is forgotten, except a
// session's standalone stream.
func (s *Store) dropOldest() {
	c := s.queue[s.head]
	s.queue[s.head] = charge{}
	s.head++
	if s.head > len(s.queue)/2 && s.head > 64 {
		s.queue = append(s.queue[:0], s.queue[s.head:]...)
		s.head = 0
	}
	st := c.st
	if st.closed {
		s.stale--
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

// compact rebuilds the queue without the charges of closed sessions.
func (s *Store) compact() {
	q := make([]charge, 0, len(s.queue)-s.head-s.stale)
	for _, c := range s.queue[s.head:] {
		if !c.st.closed {
			q = append(q, c)
		}
	}
	s.queue, s.head, s.stale = q, 0, 0
}
