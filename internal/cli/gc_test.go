package cli

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestApplyGCSettings: the shipped GC percent and memory limit are applied
// only where the user has not set GOGC or GOMEMLIMIT.
func TestApplyGCSettings(t *testing.T) {
	oldPercent := debug.SetGCPercent(100)
	oldLimit := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(oldPercent); debug.SetMemoryLimit(oldLimit) })
	for _, tc := range []struct {
		name        string
		env         map[string]string
		wantPercent int
		wantLimit   int64
	}{
		{"nothing set", nil, gcPercent, memoryLimit},
		{"GOGC set", map[string]string{"GOGC": "50"}, 100, memoryLimit},
		{"GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "1GiB"}, gcPercent, math.MaxInt64},
		{"both set", map[string]string{"GOGC": "off", "GOMEMLIMIT": "off"}, 100, math.MaxInt64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The runtime read the real variables at start; the test
			// stands in for it by resetting to the defaults first.
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(math.MaxInt64)
			ApplyGCSettings(func(k string) string { return tc.env[k] })
			if got := debug.SetGCPercent(100); got != tc.wantPercent {
				t.Errorf("GC percent %d, want %d", got, tc.wantPercent)
			}
			if got := debug.SetMemoryLimit(-1); got != tc.wantLimit {
				t.Errorf("memory limit %d, want %d", got, tc.wantLimit)
			}
		})
	}
}

// TestApplyHTTPMemoryLimit: serve --http runs with the larger limit, and a
// user's GOMEMLIMIT still wins.
func TestApplyHTTPMemoryLimit(t *testing.T) {
	old := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	for _, tc := range []struct {
		env  map[string]string
		want int64
	}{
		{nil, httpMemoryLimit},
		{map[string]string{"GOMEMLIMIT": "1GiB"}, memoryLimit},
	} {
		debug.SetMemoryLimit(memoryLimit)
		applyHTTPMemoryLimit(func(k string) string { return tc.env[k] })
		if got := debug.SetMemoryLimit(-1); got != tc.want {
			t.Errorf("env %v: memory limit %d, want %d", tc.env, got, tc.want)
		}
	}
}
