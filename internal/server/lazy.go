package server

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles expr on first use. Compiled at package init, this
// package's expressions cost about 1 ms of every start-up, before the first
// answer, for checks most sessions never make.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
