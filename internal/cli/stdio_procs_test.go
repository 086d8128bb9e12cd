//go:build linux

package cli

import (
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestProcessStdio runs processStdio against the process's own stdin and
// stdout, replaced for the test by pipes, files or other streams: one
// processor only for the process's own pipes and only when the user did not
// choose GOMAXPROCS. Not parallel: it changes os.Stdin, os.Stdout and
// GOMAXPROCS, and puts them back.
func TestProcessStdio(t *testing.T) {
	blockingPipe := func(t *testing.T) (r, w *os.File) {
		var fds [2]int
		if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		r, w = os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
		t.Cleanup(func() { r.Close(); w.Close() })
		return r, w
	}
	regular := func(t *testing.T) *os.File {
		f, err := os.CreateTemp(t.TempDir(), "out")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	socketEnd := func(t *testing.T) *os.File {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		ours, peer := os.NewFile(uintptr(fds[0]), "ours"), os.NewFile(uintptr(fds[1]), "peer")
		t.Cleanup(func() { ours.Close(); peer.Close() })
		return ours
	}
	type streams struct {
		in, out  *os.File
		passIn   io.Reader // what serve is given, when not the process's own
		passOutW io.Writer
	}
	for _, tc := range []struct {
		name       string
		make       func(t *testing.T) streams
		gomaxprocs string
		pollable   bool
		procs1     bool
	}{
		{"pipes", func(t *testing.T) streams {
			inR, _ := blockingPipe(t)
			_, outW := blockingPipe(t)
			return streams{in: inR, out: outW}
		}, "", true, true},
		{"pipes, GOMAXPROCS set by the user", func(t *testing.T) streams {
			inR, _ := blockingPipe(t)
			_, outW := blockingPipe(t)
			return streams{in: inR, out: outW}
		}, "2", true, false},
		{"sockets", func(t *testing.T) streams {
			in := socketEnd(t)
			return streams{in: in, out: socketEnd(t)}
		}, "", true, true},
		{"stdout a file", func(t *testing.T) streams {
			inR, _ := blockingPipe(t)
			return streams{in: inR, out: regular(t)}
		}, "", false, false},
		{"stdin a file", func(t *testing.T) streams {
			_, outW := blockingPipe(t)
			return streams{in: regular(t), out: outW}
		}, "", false, false},
		{"not the process's own streams", func(t *testing.T) streams {
			inR, _ := blockingPipe(t)
			_, outW := blockingPipe(t)
			s := streams{in: inR, out: outW}
			s.passIn, s.passOutW = strings.NewReader(""), io.Discard
			return s
		}, "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.make(t)
			oldIn, oldOut, oldProcs := os.Stdin, os.Stdout, runtime.GOMAXPROCS(0)
			os.Stdin, os.Stdout = s.in, s.out
			t.Cleanup(func() { os.Stdin, os.Stdout = oldIn, oldOut; runtime.GOMAXPROCS(oldProcs) })
			if oldProcs == 1 {
				runtime.GOMAXPROCS(2) // so that a change to 1 shows
			}
			before := runtime.GOMAXPROCS(0)
			var in io.Reader = s.in
			var out io.Writer = s.out
			if s.passIn != nil {
				in, out = s.passIn, s.passOutW
			}
			env := map[string]string{"GOMAXPROCS": tc.gomaxprocs}
			gotIn, gotOut, restore := processStdio(in, out, func(k string) string { return env[k] }, slog.New(slog.DiscardHandler))
			t.Cleanup(restore)
			changed := gotIn != in || gotOut != out
			if changed != tc.pollable {
				t.Errorf("streams replaced: %v, want %v", changed, tc.pollable)
			}
			if changed {
				t.Cleanup(func() { gotIn.(*os.File).Close(); gotOut.(*os.File).Close() })
			}
			if got, want := runtime.GOMAXPROCS(0), map[bool]int{true: 1, false: before}[tc.procs1]; got != want {
				t.Errorf("GOMAXPROCS = %d, want %d", got, want)
			}
		})
	}
}
