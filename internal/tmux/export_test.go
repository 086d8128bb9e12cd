package tmux

import "os"

// SetStat replaces the runner's os.Stat of socket files (before its first
// call), so tests can count when the socket is looked at.
func SetStat(r *ControlRunner, stat func(string) (os.FileInfo, error)) { r.stat = stat }
