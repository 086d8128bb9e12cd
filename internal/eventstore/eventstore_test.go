package eventstore

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var ctx = context.Background()

// after collects what After yields: the events, or the error.
func after(s mcp.EventStore, session, stream string, index int) ([]string, error) {
	var got []string
	for d, err := range s.After(ctx, session, stream, index) {
		if err != nil {
			return nil, err
		}
		got = append(got, string(d))
	}
	return got, nil
}

// TestSameAsSDKWithinBudget: while nothing is dropped, Store answers every
// After exactly as the SDK's MemoryEventStore does, including the empty
// priming events and indexes past the end.
func TestSameAsSDKWithinBudget(t *testing.T) {
	ours, sdk := New(1<<20), mcp.NewMemoryEventStore(nil)
	for _, s := range []mcp.EventStore{ours, sdk} {
		for _, sess := range []string{"a", "b"} {
			for _, st := range []string{"", "p1", "p2"} {
				if err := s.Open(ctx, sess, st); err != nil {
					t.Fatal(err)
				}
				_ = s.Append(ctx, sess, st, nil) // a priming event
				for i := range 3 {
					_ = s.Append(ctx, sess, st, fmt.Appendf(nil, "%s/%s/%d", sess, st, i))
				}
			}
		}
	}
	for _, sess := range []string{"a", "b"} {
		for _, st := range []string{"", "p1", "p2"} {
			for index := -1; index <= 5; index++ {
				want, werr := after(sdk, sess, st, index)
				got, gerr := after(ours, sess, st, index)
				if (werr != nil) != (gerr != nil) || !slices.Equal(got, want) {
					t.Errorf("After(%s, %q, %d) = %q, %v; the SDK's store gives %q, %v", sess, st, index, got, gerr, want, werr)
				}
			}
		}
	}
	if _, err := after(ours, "a", "nosuch", -1); !errors.Is(err, ErrUnknownStream) {
		t.Errorf("unknown stream: %v, want ErrUnknownStream", err)
	}
	if _, err := after(ours, "nosuch", "", -1); !errors.Is(err, ErrUnknownStream) {
		t.Errorf("unknown session: %v, want ErrUnknownStream", err)
	}
}

// TestDropsOldestFirst: over budget, the store drops the oldest charges one
// at a time, those of POST streams before those of the standalone stream;
// a resumption from before a dropped event fails with ErrEventsPurged, one
// after it still replays; a POST stream left with nothing is forgotten, the
// standalone stream is not; the newest event is kept whatever its size.
func TestDropsOldestFirst(t *testing.T) {
	ev := func(s string) []byte { return []byte(s + string(make([]byte, 100-len(s)))) } // 100 bytes
	cost := 100 + eventOverhead
	s := New(2*eventOverhead + 4*cost) // two openings and four events
	_ = s.Open(ctx, "a", "")
	_ = s.Open(ctx, "a", "post")
	_ = s.Append(ctx, "a", "", ev("g0"))
	_ = s.Append(ctx, "a", "post", ev("p0"))
	_ = s.Append(ctx, "a", "", ev("g1"))
	_ = s.Append(ctx, "a", "post", ev("p1"))
	if streams, events, _ := s.Stats(); streams != 2 || events != 4 {
		t.Fatalf("within budget: %d streams, %d events; want 2, 4", streams, events)
	}
	// g2 pushes out the POST stream's opening and p0, though the
	// standalone stream's opening and g0 are older.
	_ = s.Append(ctx, "a", "", ev("g2"))
	if got, err := after(s, "a", "", -1); err != nil || len(got) != 3 {
		t.Errorf("the standalone stream after a POST stream paid: %d events (%v), want g0 g1 g2", len(got), err)
	}
	if _, err := after(s, "a", "post", -1); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Errorf("resuming the POST stream before the dropped p0: %v, want ErrEventsPurged", err)
	}
	// g3 pushes out p1, the POST stream's last charge: it is forgotten.
	_ = s.Append(ctx, "a", "", ev("g3"))
	if _, err := after(s, "a", "post", 1); !errors.Is(err, ErrUnknownStream) {
		t.Errorf("the emptied POST stream: %v, want ErrUnknownStream (forgotten)", err)
	}
	if err := s.Append(ctx, "a", "post", ev("p2")); err != nil {
		t.Fatal(err)
	}
	// With no POST charge left, g4 pushes out the standalone stream's
	// opening and g0.
	_ = s.Append(ctx, "a", "", ev("g4"))
	if _, err := after(s, "a", "", -1); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Errorf("resuming before the dropped g0: %v, want ErrEventsPurged", err)
	}
	got, err := after(s, "a", "", 0)
	if err != nil || len(got) != 4 || got[0][:2] != "g1" || got[3][:2] != "g4" {
		t.Errorf("resuming after g0: %d events (%v), want g1 g2 g3 g4", len(got), err)
	}
	if streams, events, bytes := s.Stats(); streams != 1 || events != 4 || bytes != 4*cost {
		t.Errorf("after: %d streams, %d events, %d bytes; want 1, 4, %d (an append to a forgotten stream is not kept)", streams, events, bytes, 4*cost)
	}
	// An event larger than the whole budget is kept alone.
	big := make([]byte, 10*cost)
	_ = s.Append(ctx, "a", "", big)
	if _, events, bytes := s.Stats(); events != 1 || bytes != len(big)+eventOverhead {
		t.Errorf("one oversized event: %d events, %d bytes; want 1, %d", events, bytes, len(big)+eventOverhead)
	}
}

// TestCallsDoNotEvictNotifications: a client making call after call (a
// POST stream each) does not push out what another session's GET stream
// holds for its client to resume, as long as those notifications fit.
func TestCallsDoNotEvictNotifications(t *testing.T) {
	s := New(64 << 10)
	_ = s.Open(ctx, "quiet", "")
	for i := range 5 {
		_ = s.Append(ctx, "quiet", "", fmt.Appendf(nil, "resources/updated %d", i))
	}
	_ = s.Open(ctx, "busy", "")
	for i := range 10_000 {
		id := strconv.Itoa(i)
		_ = s.Open(ctx, "busy", id)
		_ = s.Append(ctx, "busy", id, nil)
		_ = s.Append(ctx, "busy", id, make([]byte, 1200))
	}
	got, err := after(s, "quiet", "", -1)
	if err != nil || len(got) != 5 {
		t.Fatalf("the quiet session's notifications after 10,000 calls of another: %d (%v), want all 5", len(got), err)
	}
	if _, _, b := s.Stats(); b > 64<<10 {
		t.Errorf("%d bytes retained over a 64 KB budget", b)
	}
}

// TestSessionClosed: a closed session's events are released at once and
// its streams are unknown; its queue entries are compacted away even while
// an older live event sits at the front of the queue.
func TestSessionClosed(t *testing.T) {
	s := New(1 << 20)
	_ = s.Open(ctx, "old", "")
	_ = s.Append(ctx, "old", "", []byte("oldest, stays"))
	for i := range 1000 {
		sess := fmt.Sprint("s", i)
		_ = s.Open(ctx, sess, "")
		_ = s.Append(ctx, sess, "", []byte("x"))
		if err := s.SessionClosed(ctx, sess); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := after(s, "s1", "", -1); !errors.Is(err, ErrUnknownStream) {
		t.Errorf("closed session: %v, want ErrUnknownStream", err)
	}
	streams, events, bytes := s.Stats()
	if streams != 1 || events != 1 || bytes != eventOverhead+len("oldest, stays")+eventOverhead {
		t.Errorf("after 1000 closed sessions: %d streams, %d events, %d bytes; want what the live one holds", streams, events, bytes)
	}
	s.mu.Lock()
	q := s.posts.len() + s.standalone.len()
	s.mu.Unlock()
	if q > 2*2+64+2 {
		t.Errorf("the queue holds %d entries for 2 live charges: closed sessions' entries are not compacted", q)
	}
}

// TestModel drives Store and a plain model of it (every event kept, with
// the byte count of what Store retains) with random operations and checks
// every resumption: Store replays exactly the model's events after the
// index, or says they are gone; it never replays a wrong event, and never
// holds more than the budget.
func TestModel(t *testing.T) {
	type key struct{ sess, stream string }
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 1))
		budget := 200 + r.IntN(5000)
		s := New(budget)
		all := map[key][]string{} // every event ever appended, by stream
		sessions := []string{"a", "b", "c"}
		var streams []key
		for _, sess := range sessions {
			_ = s.Open(ctx, sess, "")
			streams = append(streams, key{sess, ""})
		}
		for op := range 3000 {
			switch n := r.IntN(100); {
			case n < 10:
				k := key{sessions[r.IntN(len(sessions))], fmt.Sprint("p", op)}
				_ = s.Open(ctx, k.sess, k.stream)
				streams = append(streams, k)
			case n < 12:
				sess := sessions[r.IntN(len(sessions))]
				_ = s.SessionClosed(ctx, sess)
				for k := range all {
					if k.sess == sess {
						delete(all, k)
					}
				}
				streams = slices.DeleteFunc(streams, func(k key) bool { return k.sess == sess })
				sess += "'"
				sessions = append(sessions, sess)
				_ = s.Open(ctx, sess, "")
				streams = append(streams, key{sess, ""})
			case n < 80:
				if len(streams) == 0 {
					continue
				}
				k := streams[r.IntN(len(streams))]
				d := fmt.Sprintf("%s/%s/%d/%s", k.sess, k.stream, len(all[k]), make([]byte, r.IntN(300)))
				_ = s.Append(ctx, k.sess, k.stream, []byte(d))
				all[k] = append(all[k], d)
			default:
				if len(streams) == 0 {
					continue
				}
				k := streams[r.IntN(len(streams))]
				index := r.IntN(len(all[k])+2) - 1
				got, err := after(s, k.sess, k.stream, index)
				switch {
				case errors.Is(err, mcp.ErrEventsPurged), errors.Is(err, ErrUnknownStream):
				case err != nil:
					t.Fatalf("seed %d: After(%v, %d): %v", seed, k, index, err)
				default:
					want := all[k][min(index+1, len(all[k])):]
					if !slices.Equal(got, want) {
						t.Fatalf("seed %d: After(%v, %d) replayed %d events, want the %d after it", seed, k, index, len(got), len(want))
					}
				}
			}
			s.mu.Lock()
			b, live := s.nBytes, s.posts.len()-s.posts.stale+s.standalone.len()-s.standalone.stale
			s.mu.Unlock()
			if b > budget && live > 1 {
				t.Fatalf("seed %d op %d: %d bytes in %d charges retained, budget %d", seed, op, b, live, budget)
			}
		}
	}
}

// TestBoundedOverALongSession is the SDK store's leak: one session making
// 50,000 calls (a POST stream each, with its priming event and answer).
// Store's heap stays at its budget; the SDK's grows by each stream's entry.
func TestBoundedOverALongSession(t *testing.T) {
	if testing.Short() {
		t.Skip("50,000 streams")
	}
	const budget = 256 << 10
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	answer := make([]byte, 1200)
	grow := func(s mcp.EventStore) (float64, time.Duration) {
		_ = s.Open(ctx, "s", "")
		h0, t0 := heap(), time.Now()
		for range 50_000 {
			id := crand.Text()
			_ = s.Open(ctx, "s", id)
			_ = s.Append(ctx, "s", id, nil)
			_ = s.Append(ctx, "s", id, answer)
		}
		d := time.Since(t0)
		h := heap()
		runtime.KeepAlive(s)
		return float64(int64(h)-int64(h0)) / 1e6, d
	}
	sdk := mcp.NewMemoryEventStore(nil)
	sdk.SetMaxBytes(budget)
	sdkGrowth, sdkTime := grow(sdk)
	ours := New(budget)
	ourGrowth, ourTime := grow(ours)
	streams, _, _ := ours.Stats()
	t.Logf("50,000 streams in one session, budget %d KB: SDK store heap +%.1f MB in %v; ours +%.1f MB in %v, %d streams held",
		budget>>10, sdkGrowth, sdkTime.Round(time.Millisecond), ourGrowth, ourTime.Round(time.Millisecond), streams)
	if ourGrowth > 3*budget/1e6 {
		t.Errorf("heap grew by %.1f MB for a %d KB budget", ourGrowth, budget>>10)
	}
	if streams > budget/(2*eventOverhead) {
		t.Errorf("%d streams held for a %d KB budget", streams, budget>>10)
	}
}

// TestConcurrent runs appends, resumptions and closes from many goroutines
// (for -race).
func TestConcurrent(t *testing.T) {
	s := New(64 << 10)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			sess := fmt.Sprint("s", g)
			for i := range 2000 {
				id := fmt.Sprint(i)
				_ = s.Open(ctx, sess, id)
				_ = s.Append(ctx, sess, id, make([]byte, 100))
				_ = s.Append(ctx, sess, "", make([]byte, 50))
				for range s.After(ctx, sess, "", i-3) {
				}
				if i%500 == 499 {
					_ = s.SessionClosed(ctx, sess)
					_ = s.Open(ctx, sess, "")
				}
			}
		})
	}
	wg.Wait()
	if _, _, b := s.Stats(); b > 64<<10 {
		t.Errorf("%d bytes retained over a 64 KB budget", b)
	}
}

// BenchmarkAppendLongSession is one call's appends (its stream's opening,
// priming event and answer) in a session that has made many calls, with
// the store at its budget: Store's cost stays flat, the SDK's store walks
// every stream the session ever had whenever it purges.
func BenchmarkAppendLongSession(b *testing.B) {
	for _, name := range []string{"sdk", "ours"} {
		b.Run(name, func(b *testing.B) {
			var s mcp.EventStore
			if name == "sdk" {
				m := mcp.NewMemoryEventStore(nil)
				m.SetMaxBytes(8 << 20)
				s = m
			} else {
				s = New(8 << 20)
			}
			answer := make([]byte, 1200)
			call := func(i int) {
				id := "stream-" + strconv.Itoa(i)
				_ = s.Open(ctx, "s", id)
				_ = s.Append(ctx, "s", id, nil)
				_ = s.Append(ctx, "s", id, answer)
			}
			for i := range 100_000 { // the session's history
				call(i)
			}
			for i := 100_000; b.Loop(); i++ {
				call(i)
			}
		})
	}
}
