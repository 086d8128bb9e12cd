//go:build !linux

package foreground

// CurrentSupported reports whether ReadPaneProcs can read anything on this
// platform: not here, where tmux's own answer is used.
func CurrentSupported() bool { return false }

// ReadPaneProcs reads nothing on this platform.
func ReadPaneProcs(pids []int, o Options) map[int]PaneProc { return map[int]PaneProc{} }

// ChildrenRead reads nothing on this platform.
type ChildrenRead struct{}

// StartServerChildren starts nothing on this platform.
func StartServerChildren(serverPID int, o Options) *ChildrenRead { return &ChildrenRead{} }

// Wait returns nil: the children cannot be listed here.
func (*ChildrenRead) Wait() map[int]PaneProc { return nil }

// deviceIs cannot tell on this platform.
func deviceIs(path string, nr uint64) bool { return false }
