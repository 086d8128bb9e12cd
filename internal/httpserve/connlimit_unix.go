//go:build unix

package httpserve

import "syscall"

// openFileLimit is the process's RLIMIT_NOFILE soft limit (which the Go
// runtime raises to the hard limit at start), 0 when it cannot be read.
func openFileLimit() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	return rl.Cur
}
