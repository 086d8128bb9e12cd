//go:build !linux && !darwin

package foreground

import "time"

// Inspect cannot tell on this platform: every answer is unknown.
func Inspect(t Target, o Options) Report {
	r := unknownReport(t.PanePID, "this platform offers no way to read a terminal's foreground state")
	r.At = time.Now()
	return r
}

// Supported reports whether Inspect can answer on this platform.
func Supported() bool { return false }
