package httpserve

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

func TestConnCap(t *testing.T) {
	for _, tc := range []struct {
		sessions int
		nofile   uint64
		want     int
	}{
		{1, 0, minConnCap},                  // limit unknown: the floor
		{256, 0, 256 * connsPerSession},     // the default --max-sessions
		{256, 20000, 256 * connsPerSession}, // well within the limit
		{256, 1024, 1024 - fdReserve},       // a small ulimit -n: the reserve is kept
		{5000, 20000, 20000 - fdReserve},    // many sessions: the limit wins
		{1, 300, 64},                        // below the reserve: still some
		{0, 1 << 40, minConnCap},            // huge limit, no sessions: the floor
		{2, 1<<63 + 5, minConnCap},          // a limit beyond int64 (RLIM_INFINITY)
		{1 << 20, 1<<63 + 5, (1 << 20) * connsPerSession},
	} {
		if got := connCap(tc.sessions, tc.nofile); got != tc.want {
			t.Errorf("connCap(%d, %d) = %d, want %d", tc.sessions, tc.nofile, got, tc.want)
		}
	}
}

// TestConnectionCap: through Serve, connections past the cap wait for one
// to close instead of being refused or taking more descriptors; those open
// keep being served; and a stop ends an Accept waiting for a slot.
func TestConnectionCap(t *testing.T) {
	srv, st, _ := churnServer(t)
	const limit = 3
	d, err := New(Options{Server: srv, Checkers: []TokenChecker{st}, MaxConnections: limit})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.MaxConnections(); got != limit {
		t.Fatalf("MaxConnections() = %d, want %d", got, limit)
	}
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// Serve caps the listener it is given: this one counts the
	// connections the cap let through.
	ln := &countingListener{Listener: inner}
	addr := ln.Addr().String()
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- d.Serve(ctx, ln, nil) }()
	t.Cleanup(func() {
		stop()
		<-served
	})

	// One kept-alive client connection, then idle connections that send
	// nothing (as a flood would) fill the cap.
	kept := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	healthz := func(c *http.Client) error {
		res, err := c.Get("http://" + addr + "/healthz")
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return &net.AddrError{Err: res.Status, Addr: addr}
		}
		return nil
	}
	if err := healthz(kept); err != nil {
		t.Fatal(err)
	}
	var idle []net.Conn
	for range limit - 1 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
		t.Cleanup(func() { c.Close() })
	}
	waitFor(t, "every slot taken", func() bool { return ln.accepted.Load() == limit })

	// A new connection waits in the backlog...
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	late := make(chan error, 1)
	go func() { late <- healthz(fresh) }()
	select {
	case err := <-late:
		t.Fatalf("a connection past the cap was served at once (err=%v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	// ...while the open one is still served...
	if err := healthz(kept); err != nil {
		t.Fatalf("the open connection, at the cap: %v", err)
	}
	// ...and is taken once a slot frees.
	idle[0].Close()
	select {
	case err := <-late:
		if err != nil {
			t.Fatalf("the waiting connection, once a slot freed: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting connection was not served after a slot freed")
	}

	// With every slot taken again, a stop still ends Serve promptly.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// Accepted so far: the cap's three, the one that waited, and this one.
	waitFor(t, "every slot taken again", func() bool { return ln.accepted.Load() == limit+2 })
	stop()
	select {
	case err := <-served:
		if err != nil && err != http.ErrServerClosed {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(stopBudget + 2*time.Second):
		t.Fatal("Serve did not return within its stop budget after the stop")
	}
	served <- nil // for the cleanup
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
