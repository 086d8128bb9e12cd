package tmux

import (
	"os"
	"time"
)

// SetStat replaces the runner's os.Stat of socket files (before its first
// call), so tests can count when the socket is looked at.
func SetStat(r *ControlRunner, stat func(string) (os.FileInfo, error)) { r.stat = stat }

// SetWatchIdle changes how long an unused watcher stays attached, for the
// test's duration.
func SetWatchIdle(t interface{ Cleanup(func()) }, d time.Duration) {
	old := watchIdle
	watchIdle = d
	t.Cleanup(func() { watchIdle = old })
}
