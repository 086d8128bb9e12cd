//go:build !unix

package cli

import "os"

// dumpSignal is nil where the system has no SIGUSR1 (Windows, among the
// release targets): no goroutine dump is offered there.
var dumpSignal os.Signal
