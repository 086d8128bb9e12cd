package httpserve

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestMemoryGuardGivesBackTwice: after the last large request the daemon
// returns freed memory twice (giveBackAfter, then giveBackAgainAfter), and
// a large request arriving meanwhile puts both off until it has ended.
func TestMemoryGuardGivesBackTwice(t *testing.T) {
	var freed atomic.Int32
	oldFree, oldAfter, oldAgain := freeOSMemory, giveBackAfter, giveBackAgainAfter
	freeOSMemory = func() { freed.Add(1) }
	giveBackAfter, giveBackAgainAfter = 50*time.Millisecond, time.Second
	t.Cleanup(func() { freeOSMemory, giveBackAfter, giveBackAgainAfter = oldFree, oldAfter, oldAgain })

	var g memoryGuard
	end := g.begin(2 << 20)
	time.Sleep(50 * time.Millisecond)
	if n := freed.Load(); n != 0 {
		t.Fatalf("gave back %d times while a large request was in flight", n)
	}
	end()
	time.Sleep(400 * time.Millisecond)
	if n := freed.Load(); n != 1 {
		t.Fatalf("%d give-backs 0.4 s after the last request, want 1", n)
	}
	time.Sleep(1400 * time.Millisecond)
	if n := freed.Load(); n != 2 {
		t.Fatalf("%d give-backs 1.8 s after the last request, want 2 (and no more)", n)
	}

	// A new request before the second give-back: none until it ends, then
	// two again.
	freed.Store(0)
	end = g.begin(2 << 20)
	end()
	time.Sleep(400 * time.Millisecond)
	end = g.begin(2 << 20)
	time.Sleep(1400 * time.Millisecond)
	if n := freed.Load(); n != 1 {
		t.Fatalf("%d give-backs with a request in flight after the first, want 1", n)
	}
	end()
	time.Sleep(1800 * time.Millisecond)
	if n := freed.Load(); n != 3 {
		t.Fatalf("%d give-backs in all, want 3", n)
	}
}
