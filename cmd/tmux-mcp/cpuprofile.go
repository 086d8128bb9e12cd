//go:build cpuprofile

package main

import (
	"os"
	"runtime/pprof"
)

// With the cpuprofile build tag (never in a release), TMUX_MCP_CPUPROFILE
// names a file that receives a CPU profile of the whole process, written
// when it exits: the e2e benchmark BenchmarkFloorGetPaneInfo builds the
// server this way to compare its profile with the floor server's.
func init() {
	path := os.Getenv("TMUX_MCP_CPUPROFILE")
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		return
	}
	if pprof.StartCPUProfile(f) != nil {
		_ = f.Close()
		return
	}
	stopProfile = func() { pprof.StopCPUProfile(); _ = f.Close() }
}
