//go:build unix

package cli

import (
	"os"
	"syscall"
)

// dumpSignal asks for a goroutine dump (see dumpOnSignal).
var dumpSignal os.Signal = syscall.SIGUSR1
