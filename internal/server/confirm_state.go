package server

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"
)

// On 2026-07-28 a confirmation takes two independent requests: the call,
// answered with the question (an input request) and a request state, and
// the same call again carrying the person's answer and that state. The
// client holds the state and could forge or replay it, so the state is
// only a random handle to what this process remembers: who was asked, for
// which tool and exactly which arguments, until when. A state is spent by
// its first use, whatever the answer.

// confirmStatePrefix marks our request states (and their version).
const confirmStatePrefix = "tmux-mcp-confirm-1."

// Bounds of the store: questions asked and not yet answered, and spent
// states remembered so that a replay is told from a forgery in the audit
// log. Past either bound the oldest entry goes; a state that is gone is
// refused like a forged one, so the bounds cost a late answer, never safety.
const (
	maxOpenConfirms  = 256
	maxSpentConfirms = 1024
	// spentRetention is how long a spent state is remembered.
	spentRetention = 10 * time.Minute
)

// pendingConfirm is one question asked and not yet answered.
type pendingConfirm struct {
	id      string   // confirm_id in the audit log
	owner   Owner    // who was asked (OwnerFrom of the call)
	tool    string   // the tool called
	args    [32]byte // argsDigest of its arguments
	asked   time.Time
	expires time.Time // an answer after this is a cancelled question
}

// confirmStore holds the open questions by the hash of their state: the
// state itself is a bearer secret and is not kept.
type confirmStore struct {
	mu    sync.Mutex
	open  map[[32]byte]*pendingConfirm
	spent map[[32]byte]time.Time
}

func newConfirmStore() *confirmStore {
	return &confirmStore{open: map[[32]byte]*pendingConfirm{}, spent: map[[32]byte]time.Time{}}
}

func (s *Server) confirms() *confirmStore {
	s.confirmOnce.Do(func() { s.confirmSt = newConfirmStore() })
	return s.confirmSt
}

// takeResult is what a state presented with an answer turned out to be.
type takeResult int

const (
	takeOK      takeResult = iota
	takeUnknown            // never issued to this owner, or forgotten: a forgery as far as we can tell
	takeSpent              // issued and already used: a replay
)

// put records p and returns the request state that names it.
func (st *confirmStore) put(p *pendingConfirm) string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	state := confirmStatePrefix + base64.RawURLEncoding.EncodeToString(b[:])
	st.mu.Lock()
	defer st.mu.Unlock()
	st.sweep(p.asked)
	if len(st.open) >= maxOpenConfirms {
		var oldest [32]byte
		var at time.Time
		for k, e := range st.open {
			if at.IsZero() || e.asked.Before(at) {
				oldest, at = k, e.asked
			}
		}
		delete(st.open, oldest)
	}
	st.open[sha256.Sum256([]byte(state))] = p
	return state
}

// take spends state for owner: it returns the question it names and
// forgets it. A state of another owner is unknown to this one (and stays
// valid for its own).
func (st *confirmStore) take(state string, owner Owner, now time.Time) (*pendingConfirm, takeResult) {
	k := sha256.Sum256([]byte(state))
	st.mu.Lock()
	defer st.mu.Unlock()
	st.sweep(now)
	if p := st.open[k]; p != nil && p.owner == owner {
		delete(st.open, k)
		if len(st.spent) >= maxSpentConfirms {
			var oldest [32]byte
			var at time.Time
			for k, t := range st.spent {
				if at.IsZero() || t.Before(at) {
					oldest, at = k, t
				}
			}
			delete(st.spent, oldest)
		}
		st.spent[k] = now
		return p, takeOK
	}
	if _, ok := st.spent[k]; ok {
		return nil, takeSpent
	}
	return nil, takeUnknown
}

// sweep forgets questions long past their deadline and spent states past
// their retention. A question just past its deadline is kept a while, so
// that its late answer is reported as what it is (cancelled for lack of
// an answer in time), not as a forgery.
func (st *confirmStore) sweep(now time.Time) {
	for k, p := range st.open {
		if now.Sub(p.expires) > spentRetention {
			delete(st.open, k)
		}
	}
	for k, t := range st.spent {
		if now.Sub(t) > spentRetention {
			delete(st.spent, k)
		}
	}
}

// argsDigest binds an answer to one exact call: the tool and its
// validated arguments, encoded canonically (object keys sorted).
func argsDigest(tool string, args map[string]any) [32]byte {
	b, _ := json.Marshal(args)
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write(b)
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

// newConfirmID names a confirmation in the audit log.
func newConfirmID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
