package server

import (
	"sync"
	"testing"
	"time"
)

// deepStacks runs every call to its end, reuses idle workers, raises a
// call's panic on the caller's goroutine, and runs calls inline once
// maxWorkers are busy.
func TestDeepStacks(t *testing.T) {
	var p deepStacks
	for i := range 100 {
		got := -1
		p.run(func() { got = i })
		if got != i {
			t.Fatalf("call %d: got %d", i, got)
		}
	}
	if p.n != 1 {
		t.Errorf("sequential calls used %d workers, want 1", p.n)
	}

	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want boom", r)
			}
		}()
		p.run(func() { panic("boom") })
		t.Error("run returned after a panic")
	}()
	// The worker that panicked is not lost to the pool's count forever:
	// later calls still run.
	ran := false
	p.run(func() { ran = true })
	if !ran {
		t.Error("no call ran after a panic")
	}

	// maxWorkers+4 calls at once: all run, at most maxWorkers on workers.
	release := make(chan struct{})
	var started, done sync.WaitGroup
	for range maxWorkers + 4 {
		started.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			p.run(func() { started.Done(); <-release })
		}()
	}
	started.Wait()
	close(release)
	done.Wait()
	p.mu.Lock()
	n := p.n
	p.mu.Unlock()
	if n > maxWorkers {
		t.Errorf("%d workers, want at most %d", n, maxWorkers)
	}
	// Idle workers end.
	deadline := time.Now().Add(10 * workerIdle)
	for {
		p.mu.Lock()
		n = p.n
		p.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d workers still there after %v idle", n, 10*workerIdle)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
