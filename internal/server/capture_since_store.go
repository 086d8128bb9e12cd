package server

import (
	"container/list"
	"crypto/rand"
	"encoding/base64"
	"hash/maphash"
	"strings"
	"sync"
	"time"
)

// A capture_since cursor is a short handle ("capture-since-v3:%3:<id>") to
// state kept here, not the state itself: the state holds a window of rows to
// align against, which as text cost a client ~2.3 KB of tokens twice per
// call. The id is 128 random bits, so it cannot be guessed; the pane id in
// the text lets an unknown cursor (evicted, or from another process) still
// be answered on its pane, like a first call with lines_missed.
const cursorPrefix = "capture-since-v3:"

// cursorStoreCap bounds the store: each entry holds at most
// sinceRowsAbove+sinceRowsBelow+1 row hashes (about 3 KB), so the store
// stays under ~12 MB however many cursors a client makes. The least
// recently used entry goes first.
const cursorStoreCap = 4096

// sinceRowsAbove is how many rows above the cursor row a cursor keeps to
// align against later; sinceRowsBelow bounds the rows kept below it (the
// rest of the screen, to tell rows rewritten from rows left alone).
const (
	sinceRowsAbove = 128
	sinceRowsBelow = 256
)

// sinceState is what a cursor remembers of its pane when it was issued.
type sinceState struct {
	Socket, Server, Pane, PanePID string // identity: socket path, server pid/start, pane, its process
	HS, Limit, Width, Height      int    // history_size, history_limit, pane size
	Anchor                        int    // absolute row of the cursor: history_size + cursor_y
	Alt                           bool   // the alternate screen was on
	Activity, Clock               int64  // window_activity and tmux's clock (seconds) at the read
	Top                           int    // absolute row of Rows[0]
	Rows                          []uint64
	Issued                        time.Time
}

type cursorKey struct {
	owner Owner
	id    string
}

type cursorEntry struct {
	key   cursorKey
	state *sinceState
}

// cursorStore keeps the state of issued cursors, per owner, least recently
// used first out. Entries are never changed once stored.
type cursorStore struct {
	seed maphash.Seed // row hashes are keyed per process: no crafted collisions

	mu  sync.Mutex
	cap int
	lru *list.List // of *cursorEntry, most recent at the front
	m   map[cursorKey]*list.Element
}

func newCursorStore(capacity int) *cursorStore {
	return &cursorStore{seed: maphash.MakeSeed(), cap: capacity, lru: list.New(), m: map[cursorKey]*list.Element{}}
}

func (s *Server) cursors() *cursorStore {
	s.sinceOnce.Do(func() { s.since = newCursorStore(cursorStoreCap) })
	return s.since
}

// hashRow hashes a row as capture-pane prints it, trailing spaces ignored.
func (cs *cursorStore) hashRow(row string) uint64 {
	return maphash.String(cs.seed, strings.TrimRight(row, " "))
}

func (cs *cursorStore) hashRows(rows []string) []uint64 {
	out := make([]uint64, len(rows))
	for i, r := range rows {
		out[i] = cs.hashRow(r)
	}
	return out
}

// put stores st for owner and returns the cursor text naming it.
func (cs *cursorStore) put(owner Owner, st *sinceState) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := base64.RawURLEncoding.EncodeToString(b[:])
	k := cursorKey{owner, id}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.m[k] = cs.lru.PushFront(&cursorEntry{key: k, state: st})
	for cs.lru.Len() > cs.cap {
		last := cs.lru.Back()
		cs.lru.Remove(last)
		delete(cs.m, last.Value.(*cursorEntry).key)
	}
	return cursorPrefix + st.Pane + ":" + id
}

// get returns the state behind a cursor id for owner, or nil when this
// process does not know it for that owner (never issued, evicted, or
// another client's).
func (cs *cursorStore) get(owner Owner, id string) *sinceState {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	el := cs.m[cursorKey{owner, id}]
	if el == nil {
		return nil
	}
	cs.lru.MoveToFront(el)
	return el.Value.(*cursorEntry).state
}

func (cs *cursorStore) len() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.lru.Len()
}

// parseCursor splits cursor text into its pane and id; ok is false when the
// text is not a cursor of this form at all.
func parseCursor(text string) (pane, id string, ok bool) {
	rest, ok := strings.CutPrefix(text, cursorPrefix)
	if !ok {
		return "", "", false
	}
	pane, id, ok = strings.Cut(rest, ":")
	if !ok || len(pane) < 2 || pane[0] != '%' || len(id) != 22 {
		return "", "", false
	}
	for _, c := range pane[1:] {
		if c < '0' || c > '9' {
			return "", "", false
		}
	}
	if _, err := base64.RawURLEncoding.DecodeString(id); err != nil {
		return "", "", false
	}
	return pane, id, true
}

// release forgets every cursor of owner.
func (cs *cursorStore) release(owner Owner) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for el := cs.lru.Front(); el != nil; {
		next := el.Next()
		if e := el.Value.(*cursorEntry); e.key.owner == owner {
			cs.lru.Remove(el)
			delete(cs.m, e.key)
		}
		el = next
	}
}
