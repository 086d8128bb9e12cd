package httpserve

import (
	"io"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// largeBody is the request body size from which the daemon watches its
// memory: a load_buffer or paste_text of a file. Tool calls are a few KB.
const largeBody = 1 << 20

// largeBodyGrowth is how much memory, in multiples of its body, a large
// request may add while it is served. The Go SDK keeps two copies of a
// request's parameters for the whole call (the JSON-RPC message and the
// tool's arguments) and the tool a third (its decoded string); everything
// else is garbage the collector must take back before it piles up.
const largeBodyGrowth = 3

// giveBackAfter is how long the daemon waits after its last large request
// before it returns the freed memory to the operating system.
var giveBackAfter = time.Second

// giveBackAgainAfter is when, after the first give-back, the daemon gives
// back once more: on a loaded machine the SDK may still hold the last
// request's message (the body's decoded parameters) when the first one
// runs, and what it lets go of later would otherwise stay resident, since
// the collector has no reason to return memory while idle (CI once saw
// 28.8 MB 30 s after eight 3.9 MiB requests, where 17 MB is usual).
var giveBackAgainAfter = 4 * time.Second

// memoryGuard keeps large requests from inflating the daemon. The HTTP
// daemon's soft memory limit (64 MiB, see cli) lets the heap grow far past
// what a few small calls need, so a 4 MiB body, whose decoding allocates
// ten times its size, pushed the resident set from 13 to 69 MB, and the
// collector, with no reason to run while idle, kept it there. While large
// requests are in flight the limit is lowered to what the daemon used
// before them plus largeBodyGrowth times their bodies, so the collector
// reclaims their garbage as it is made; once none has come for
// giveBackAfter, the freed memory goes back to the system.
type memoryGuard struct {
	mu       sync.Mutex
	inflight int64 // bytes of large bodies being served
	base     int64 // memory in use when the first of them arrived
	saved    int64 // the memory limit before it
	idle     *time.Timer
	again    bool // the next give-back is the second after the last request
}

// begin accounts for a large body of n bytes; end is called when its
// request has been answered.
func (g *memoryGuard) begin(n int64) (end func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.idle != nil {
		g.idle.Stop()
	}
	if g.inflight == 0 {
		// What the daemon holds now is mostly garbage (the collector runs
		// rarely at its GC percent): collect it first, so the large request
		// reuses that memory and the limit is set from what is live.
		runtime.GC()
		g.saved = debug.SetMemoryLimit(-1)
		g.base = memoryInUse()
	}
	g.inflight += n
	g.apply()
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.inflight -= n
		if g.inflight > 0 {
			g.apply()
			return
		}
		debug.SetMemoryLimit(g.saved)
		g.again = false
		if g.idle == nil {
			g.idle = time.AfterFunc(giveBackAfter, g.giveBack)
		} else {
			g.idle.Reset(giveBackAfter)
		}
	}
}

func (g *memoryGuard) apply() {
	debug.SetMemoryLimit(min(g.saved, g.base+largeBodyGrowth*g.inflight))
}

// giveBack returns freed memory to the system unless a large request has
// started meanwhile, and the first time after the last large request
// arranges to do it once more (giveBackAgainAfter).
func (g *memoryGuard) giveBack() {
	g.mu.Lock()
	busy := g.inflight > 0
	if !busy && !g.again {
		g.again = true
		g.idle.Reset(giveBackAgainAfter)
	}
	g.mu.Unlock()
	if !busy {
		freeOSMemory()
	}
}

// freeOSMemory is debug.FreeOSMemory (a variable for the test that counts
// the give-backs).
var freeOSMemory = debug.FreeOSMemory

// memoryInUse is the memory the Go runtime uses, free heap pages left out
// (what it would count against a memory limit if it held no free pages):
// right after a collection, the live heap and the runtime's own needs.
func memoryInUse() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}, {Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64() - s[2].Value.Uint64())
}

// bodyReader serves a request body read by readBody and lets go of it once
// read to its end: the SDK reads the body into a copy of its own and keeps
// the request for the whole call, so a large body would otherwise stay in
// memory twice.
type bodyReader struct{ b []byte }

func (r *bodyReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		r.b = nil
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	if len(r.b) == 0 {
		r.b = nil
	}
	return n, nil
}

func (r *bodyReader) Close() error { r.b = nil; return nil }
