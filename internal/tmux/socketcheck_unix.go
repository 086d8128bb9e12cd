//go:build unix

package tmux

import (
	"io/fs"
	"syscall"
)

// MaxSocketPath is the longest path a unix socket address holds: sun_path
// less its terminating NUL (107 bytes on Linux, 103 on the BSDs and macOS).
var MaxSocketPath = len(syscall.RawSockaddrUnix{}.Path) - 1

// fileOwner returns the uid that owns a file.
func fileOwner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
