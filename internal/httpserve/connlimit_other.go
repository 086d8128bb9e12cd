//go:build !unix

package httpserve

// openFileLimit is 0 (unknown) where there is no RLIMIT_NOFILE. Windows,
// the one such release target, caps a process's handles (sockets
// included) at about 16 million, far above any cap --max-sessions asks for.
func openFileLimit() uint64 { return 0 }
