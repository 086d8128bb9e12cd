package tmux

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The two sides of an attachGate never hold it at once, each side runs
// alongside itself, and a steady stream of one side does not starve the
// other.
func TestAttachGateSidesExclude(t *testing.T) {
	g := &attachGate{}
	var in [2]atomic.Int32
	var overlap, shared atomic.Bool
	stop := time.Now().Add(300 * time.Millisecond)
	var wg sync.WaitGroup
	var done [2]atomic.Int32
	for i := 0; i < 8; i++ {
		k := gateKind(i % 2)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				leave, err := g.enter(context.Background(), k)
				if err != nil {
					t.Error(err)
					return
				}
				if in[k].Add(1) > 1 {
					shared.Store(true)
				}
				if in[1-k].Load() > 0 {
					overlap.Store(true)
				}
				time.Sleep(time.Millisecond)
				in[k].Add(-1)
				leave()
				done[k].Add(1)
			}
		}()
	}
	wg.Wait()
	if overlap.Load() {
		t.Error("a start and a notifier held the gate at once")
	}
	if !shared.Load() {
		t.Error("holders of one side never ran alongside each other")
	}
	if done[gateStart].Load() < 10 || done[gateNotify].Load() < 10 {
		t.Errorf("one side starved: %d starts, %d notifiers", done[gateStart].Load(), done[gateNotify].Load())
	}
}

// A waiter whose context ends gives up its place without blocking others.
func TestAttachGateWaitEndsWithContext(t *testing.T) {
	g := &attachGate{}
	leave, _ := g.enterNotify(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := g.enterStart(ctx); err == nil {
		t.Fatal("a start entered while a notifier held the gate")
	}
	// The cancelled start must not hold back new notifiers.
	leave2, err := g.enterNotify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	leave2()
	leave()
	leave3, err := g.enterStart(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	leave3()
}

// Detaches asking for a round trip together share it, and each is covered
// by one that started after it asked.
func TestAttachGateSyncShared(t *testing.T) {
	g := &attachGate{}
	var runs atomic.Int32
	var started atomic.Int64 // unix nanos of the last round trip's start
	run := func() {
		runs.Add(1)
		started.Store(time.Now().UnixNano())
		time.Sleep(20 * time.Millisecond)
	}
	var wg sync.WaitGroup
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			asked := time.Now().UnixNano()
			g.syncAfter(run)
			if started.Load() < asked {
				t.Error("returned before a round trip that began after the request")
			}
		}()
	}
	wg.Wait()
	if n := runs.Load(); n > 5 {
		t.Errorf("%d round trips for 40 detaches at once", n)
	}
}

// Every state the gate's bookkeeping can reach, with up to three starts
// and three notifiers arriving, entering, giving up and leaving in any
// order, keeps the sides apart, and from every one of them the waiters
// can all get in without anyone new arriving or giving up: no state leaves
// a waiter held back for good. A turn passed while waiters admitted with
// the previous turn were still to come in once left both kinds admitted
// and each held back by the other; CI's run of TestAttachGateSidesExclude
// then hung for ten minutes.
func TestGateTurnsNeverDeadlock(t *testing.T) {
	const perKind = 3
	holders := func(s gateTurns, k gateKind) int {
		if s.count > 0 && s.active == k {
			return s.count
		}
		return 0
	}
	// moves are the states one step away; withNewcomers adds arrivals and
	// give-ups to entries and leavings.
	moves := func(s gateTurns, withNewcomers bool) []gateTurns {
		var next []gateTurns
		for _, k := range []gateKind{gateStart, gateNotify} {
			if s.waiting[k] > 0 && s.mayEnter(k) {
				n := s
				n.enter(k)
				next = append(next, n)
			}
			if holders(s, k) > 0 {
				n := s
				n.leave()
				next = append(next, n)
			}
			if !withNewcomers {
				continue
			}
			if s.waiting[k]+holders(s, k) < perKind {
				n := s
				n.arrive(k)
				next = append(next, n)
			}
			if s.waiting[k] > 0 {
				n := s
				n.giveUp(k)
				next = append(next, n)
			}
		}
		return next
	}
	reach := func(from gateTurns, withNewcomers bool) map[gateTurns]bool {
		seen := map[gateTurns]bool{from: true}
		queue := []gateTurns{from}
		for len(queue) > 0 {
			s := queue[0]
			queue = queue[1:]
			for _, n := range moves(s, withNewcomers) {
				if !seen[n] {
					seen[n] = true
					queue = append(queue, n)
				}
			}
		}
		return seen
	}
	all := reach(gateTurns{}, true)
	if len(all) < 50 {
		t.Fatalf("only %d states reached: the model is not exploring", len(all))
	}
	for s := range all {
		for k := range 2 {
			if s.admit[k] > s.waiting[k] || s.waiting[k] < 0 || s.admit[k] < 0 {
				t.Fatalf("%+v: admissions out of step with waiters", s)
			}
		}
		drained := false
		for n := range reach(s, false) {
			if n.waiting == [2]int{} {
				drained = true
				break
			}
		}
		if !drained {
			t.Fatalf("%+v: some waiters can never get in", s)
		}
	}
}
