//go:build linux

package stdio

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func nonblocking(t *testing.T, f *os.File) bool {
	t.Helper()
	raw, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags int
	var ferr error
	if err := raw.Control(func(fd uintptr) { flags, ferr = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil {
		t.Fatal(err)
	}
	if ferr != nil {
		t.Fatal(ferr)
	}
	return flags&unix.O_NONBLOCK != 0
}

// blockingPipe is a pipe whose ends are blocking descriptions, as a
// client's pipes reach a server it spawns (os.Pipe's are non-blocking).
func blockingPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r, w = os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

func TestPollableReadsTheSamePipeWithoutBlockingTheClients(t *testing.T) {
	r, w := blockingPipe(t)
	pr, _, ok := Pollable(r, os.O_RDONLY)
	if !ok || pr == r {
		t.Fatalf("Pollable(pipe) = %v, %v; want a new file", pr, ok)
	}
	defer pr.Close()
	if !nonblocking(t, pr) {
		t.Error("the new description is blocking")
	}
	if nonblocking(t, r) {
		t.Error("the original description became non-blocking: the client's flags changed")
	}
	if _, err := w.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	n, err := pr.Read(buf)
	if err != nil || string(buf[:n]) != "hello\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	w.Close()
	if n, err := pr.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("after the writer closed: %d, %v; want EOF", n, err)
	}
}

func TestPollableWritesTheSamePipe(t *testing.T) {
	r, w := blockingPipe(t)
	pw, _, ok := Pollable(w, os.O_WRONLY)
	if !ok {
		t.Fatal("Pollable(write end) failed")
	}
	defer pw.Close()
	if nonblocking(t, w) || !nonblocking(t, pw) {
		t.Fatalf("flags: original non-blocking %v, new non-blocking %v", nonblocking(t, w), nonblocking(t, pw))
	}
	// More than a pipe holds: the writer waits in the poller until the
	// reader drains it, and every byte arrives in order.
	want := make([]byte, 1<<20)
	for i := range want {
		want[i] = byte(i * 7)
	}
	done := make(chan error, 1)
	go func() {
		_, err := pw.Write(want)
		pw.Close()
		w.Close()
		done <- err
	}()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("read %d bytes, want %d, equal %v", len(got), len(want), string(got) == string(want))
	}
}

// A read waiting in the poller ends when the file is closed, which a
// blocking read(2) on stdin does not.
func TestPollableReadEndsOnClose(t *testing.T) {
	r, _ := blockingPipe(t)
	pr, _, ok := Pollable(r, os.O_RDONLY)
	if !ok {
		t.Fatal("Pollable(pipe) failed")
	}
	done := make(chan error, 1)
	go func() {
		_, err := pr.Read(make([]byte, 8))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	pr.Close()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrClosed) {
			t.Fatalf("read ended with %v, want os.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("read did not end on Close")
	}
}

// A socket (Node's child_process gives a child socket pairs) is read and
// written through a non-blocking duplicate, and restore makes its
// description blocking again.
func TestPollableSocket(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, peer := os.NewFile(uintptr(fds[0]), "ours"), os.NewFile(uintptr(fds[1]), "peer")
	defer ours.Close()
	defer peer.Close()
	ps, restore, ok := Pollable(ours, os.O_RDONLY)
	if !ok || ps == ours {
		t.Fatalf("Pollable(socket) = %v, %v", ps, ok)
	}
	if !nonblocking(t, ps) {
		t.Error("the duplicate is blocking")
	}
	if _, err := peer.Write([]byte("ping\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := ps.Read(buf); err != nil || string(buf[:n]) != "ping\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	if _, err := ps.Write([]byte("pong\n")); err != nil {
		t.Fatal(err)
	}
	if n, err := peer.Read(buf); err != nil || string(buf[:n]) != "pong\n" {
		t.Fatalf("peer read %q, %v", buf[:n], err)
	}
	// A read waiting in the poller ends on Close.
	done := make(chan error, 1)
	go func() { _, err := ps.Read(buf); done <- err }()
	time.Sleep(20 * time.Millisecond)
	ps.Close()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrClosed) {
			t.Errorf("read ended with %v, want os.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("read did not end on Close")
	}
	restore()
	if nonblocking(t, ours) {
		t.Error("after restore the description is still non-blocking")
	}
}

func TestPollableLeavesOtherFilesAlone(t *testing.T) {
	regular, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer regular.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	for _, tc := range []struct {
		name string
		f    *os.File
	}{{"regular file", regular}, {"character device", devnull}} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, ok := Pollable(tc.f, os.O_RDONLY)
			if ok || got != tc.f {
				t.Fatalf("Pollable = %v, %v; want the file itself, false", got, ok)
			}
		})
	}
}
