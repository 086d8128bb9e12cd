package foreground

import (
	"sync"
	"time"
)

// A Tracker remembers the last report per terminal, so that StateSeconds
// can say how long a state has lasted where the OS keeps no record of it:
// a running group (the scheduler notes when a thread last ran, not when it
// last woke) or a platform without the scheduler's record. It holds one
// small entry per terminal and forgets those not seen for an hour.
type Tracker struct {
	mu   sync.Mutex
	seen map[string]trackEntry
	gc   time.Time
}

type trackEntry struct {
	pgrp  int
	state State
	since time.Time // first seen in this state
	last  time.Time // last seen
}

const trackerForget = time.Hour

// Observe records r for the terminal named key and returns r with
// StateSeconds made consistent with what was seen before: a state that
// lasts across reports lasts at least since it was first seen.
func (t *Tracker) Observe(key string, r Report) Report {
	if r.State == Unknown {
		return r
	}
	now := r.At
	if now.IsZero() {
		now = time.Now()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.seen == nil {
		t.seen = map[string]trackEntry{}
	}
	if now.Sub(t.gc) > trackerForget {
		for k, e := range t.seen {
			if now.Sub(e.last) > trackerForget {
				delete(t.seen, k)
			}
		}
		t.gc = now
	}
	e, ok := t.seen[key]
	osKnown := r.StateSeconds > 0
	osSince := now.Add(-time.Duration(r.StateSeconds * float64(time.Second)))
	same := ok && e.pgrp == r.Pgrp && e.state == r.State
	var since time.Time
	switch {
	case r.State == Running && same:
		// Running without a break since first seen; the OS figure (since
		// start, or the CPU time used) may say longer.
		since = earliest(e.since, osSince)
	case r.State == Running && ok:
		// Seen doing something else at e.last: running since then at most.
		since = latest(e.last, osSince)
	case osKnown:
		// A blocked state: the scheduler's record of when the group last
		// ran is the truth.
		since = osSince
	case same:
		since = e.since
	default:
		since = now
	}
	e = trackEntry{pgrp: r.Pgrp, state: r.State, since: since}
	e.last = now
	t.seen[key] = e
	r.StateSeconds = roundSeconds(max(0, now.Sub(e.since).Seconds()))
	return r
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
