//go:build !unix

package tmux

import "io/fs"

// MaxSocketPath is the longest path a unix socket address holds.
var MaxSocketPath = 103

// fileOwner is unknown here: tmux runs on unix only, so the ownership rule
// is skipped.
func fileOwner(fs.FileInfo) (int, bool) { return 0, false }
