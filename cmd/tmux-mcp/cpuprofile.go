//go:build cpuprofile

package main

import (
	"os"
	"runtime"
	"runtime/pprof"
)

// With the cpuprofile build tag (never in a release), TMUX_MCP_CPUPROFILE
// names a file that receives a CPU profile of the whole process, written
// when it exits: the e2e benchmark BenchmarkFloorGetPaneInfo builds the
// server this way to compare its profile with the floor server's.
func init() {
	// TMUX_MCP_MEMPROFILE: every allocation of 4 KB on average sampled,
	// written at exit (go tool pprof -sample_index=alloc_space).
	if mem := os.Getenv("TMUX_MCP_MEMPROFILE"); mem != "" {
		runtime.MemProfileRate = 4096
		defer func() {
			prev := stopProfile
			stopProfile = func() {
				prev()
				if f, err := os.Create(mem); err == nil {
					_ = pprof.Lookup("allocs").WriteTo(f, 0)
					_ = f.Close()
				}
			}
		}()
	}
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
