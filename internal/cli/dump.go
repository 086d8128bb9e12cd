package cli

import (
	"bytes"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
)

// dumpOnSignal logs every goroutine's stack, grouped by identical stacks
// with a count (pprof's goroutine profile at debug level 1), each time the
// process gets SIGUSR1, until the returned func is called (not at the
// first SIGTERM: a stop that does not end is one thing to look at). A
// server that seems hung (a call that never answers, a stop that does not
// end) can then be asked where it waits without being killed. The dump is
// one log record (field "goroutines"), so stderr stays one JSON record per
// line for whatever reads it. Where there is no SIGUSR1 (Windows) it does
// nothing.
func dumpOnSignal(logger *slog.Logger) (stop func()) {
	if dumpSignal == nil {
		return func() {}
	}
	return onSignal(nil, dumpSignal, func() {
		logger.Warn("goroutine dump (SIGUSR1)", "goroutines", goroutineDump())
	})
}

// onSignal runs fn each time the process gets sig, one at a time, until
// ended is closed (nil: never) or the returned func is called. While it
// listens, sig no longer has its default effect (for SIGHUP and SIGUSR1,
// ending the process).
func onSignal(ended <-chan struct{}, sig os.Signal, fn func()) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sig)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-ended:
				return
			case <-done:
				return
			case <-ch:
				fn()
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}

// goroutineDump is every goroutine's stack, identical stacks counted once.
func goroutineDump() string {
	var b bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil {
		return "goroutine profile: " + err.Error()
	}
	return b.String()
}
