package server

import (
	"slices"
	"sync"
	"time"
)

// deepStacks runs tool calls on a few long-lived goroutines whose stacks
// have already grown to what a call needs. The SDK handles each request on
// a new goroutine, which starts with a small stack: a get_pane_info call
// (SDK middleware, our gate, validation, the handler, the control-mode
// round trip) outgrew it twice per call, and copying the stack each time
// cost about 14 µs of CPU per call, a sixth of our own work above the
// floor server (docs/per-call-cost.md). Idle workers are reused last in,
// first out, so with few calls in flight the same warm stack serves them
// (the collector halves an idle stack that is mostly unused, so a worker
// used only now and then would grow again).
//
// Nothing about a call changes: it runs with the same context, its result
// comes back to the SDK's goroutine, and a panic that escapes it is raised
// again there (where gate recovers it). Past maxWorkers calls in flight, a
// call runs on the SDK's goroutine as before.
type deepStacks struct {
	mu   sync.Mutex
	idle []chan func()
	n    int
}

const maxWorkers = 8

// run runs f on an idle worker (or a new one, or, with maxWorkers busy,
// on the caller's goroutine) and returns when it has.
func (p *deepStacks) run(f func()) {
	p.mu.Lock()
	var w chan func()
	if k := len(p.idle); k > 0 {
		w = p.idle[k-1]
		p.idle = p.idle[:k-1]
	} else if p.n < maxWorkers {
		p.n++
		w = make(chan func())
		go p.work(w)
	}
	p.mu.Unlock()
	if w == nil {
		f()
		return
	}
	type outcome struct {
		panicked bool
		v        any
	}
	done := make(chan outcome, 1)
	w <- func() {
		// The worker is idle again before the caller learns the call
		// ended, so the caller's next call finds it (the same warm stack).
		panicked := true
		defer func() {
			if panicked {
				v := recover()
				p.release(w)
				done <- outcome{true, v}
			}
		}()
		f()
		panicked = false
		p.release(w)
		done <- outcome{}
	}
	if o := <-done; o.panicked {
		panic(o.v)
	}
}

// release offers worker w again.
func (p *deepStacks) release(w chan func()) {
	p.mu.Lock()
	p.idle = append(p.idle, w)
	p.mu.Unlock()
}

// workerIdle is how long a worker waits for another call before it ends:
// a server at rest holds no extra goroutines (the HTTP churn test counts
// them).
const workerIdle = time.Second

// work runs what it is given, then offers itself again, until it has been
// idle for workerIdle.
func (p *deepStacks) work(w chan func()) {
	t := time.NewTimer(workerIdle)
	defer t.Stop()
	for {
		select {
		case f := <-w:
			f()
			t.Reset(workerIdle)
		case <-t.C:
			p.mu.Lock()
			i := slices.Index(p.idle, w)
			if i >= 0 {
				p.idle = slices.Delete(p.idle, i, i+1)
				p.n--
			}
			p.mu.Unlock()
			if i >= 0 {
				return
			}
			// Taken for a call just now: its work is on the way.
			t.Reset(workerIdle)
		}
	}
}
