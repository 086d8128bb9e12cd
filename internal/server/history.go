package server

import (
	"sort"
	"strings"

	"github.com/tmux-mcp/tmux-mcp/internal/errarg"
)

// persistentHistoryEnv is what suppress_persistent_history adds to a newly
// spawned shell's environment (contract 6): no history file for bash/zsh,
// fish in private mode, and bash's HISTCONTROL ignoring space-prefixed lines.
var persistentHistoryEnv = map[string]string{
	"HISTFILE":          "",
	"fish_history":      "",
	"fish_private_mode": "1",
}

// mergeHistoryEnv returns env with the history suppression variables merged
// in. A caller value that contradicts one of them is an expected error that
// names the variable but never its value; the call is not retried without
// suppression.
func mergeHistoryEnv(env map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(env)+4)
	for k, v := range env {
		out[k] = v
	}
	keys := make([]string, 0, len(persistentHistoryEnv))
	for k := range persistentHistoryEnv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		want := persistentHistoryEnv[k]
		if have, ok := out[k]; ok && have != want {
			return nil, expectedf("environment variable %s conflicts with suppress_persistent_history; remove it or set suppress_persistent_history=false", errarg.Bare(k))
		}
		out[k] = want
	}
	hc := out["HISTCONTROL"]
	tokens := strings.Split(hc, ":")
	has := false
	for _, t := range tokens {
		if t == "ignorespace" || t == "ignoreboth" {
			has = true
		}
	}
	if !has {
		if hc == "" {
			out["HISTCONTROL"] = "ignorespace"
		} else {
			out["HISTCONTROL"] = hc + ":ignorespace"
		}
	}
	return out, nil
}

// envFlags turns an environment map into tmux "-e K=V" flags in a stable
// order. Keys must be non-empty and free of "=" and NUL.
func envFlags(env map[string]string) ([]string, error) {
	keys := make([]string, 0, len(env))
	for k := range env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return nil, expectedf("environment keys must be non-empty and contain no '=' or NUL")
		}
		if strings.IndexByte(env[k], 0) >= 0 {
			return nil, expectedf("environment variable %s contains a NUL byte", errarg.Bare(k))
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var flags []string
	for _, k := range keys {
		flags = append(flags, "-e", k+"="+env[k])
	}
	return flags, nil
}

// spawnEnv decodes an environment argument and applies
// suppress_persistent_history, returning the -e flags.
func spawnEnv(arg StringMapArg, suppress bool) ([]string, error) {
	env, err := arg.Map("environment")
	if err != nil {
		return nil, err
	}
	if suppress {
		if env, err = mergeHistoryEnv(env); err != nil {
			return nil, err
		}
	}
	return envFlags(env)
}
