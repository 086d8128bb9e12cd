package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/tmux-mcp/tmux-mcp/internal/remote"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// Host is one remote tmux host named in TMUX_MCP_HOSTS / --hosts.
//
// The syntax is comma-separated name=destination pairs, where destination
// is anything ssh takes (an alias from ~/.ssh/config, user@host,
// ssh://user@host:port), optionally followed by "?tmux=BIN&socket=NAME"
// for the remote tmux binary and socket name:
//
//	build=buildbox,gpu=ssh://me@gpu.lan:2222?tmux=/opt/bin/tmux&socket=work
//
// Every part ends up on an ssh command line, and tmux and socket on the
// remote login shell's command line, so each is checked strictly: names
// are [A-Za-z0-9._-] not starting with '-' (and not "local", the name of
// this machine), a destination never starts with '-' (ssh would take it as
// an option such as -oProxyCommand=...) and holds no spaces, quotes or
// shell characters, and the binary and socket are plain words
// (tmux.CheckRemoteWord).
type Host struct {
	Name        string
	Destination string
	TmuxBin     string // "" means "tmux" on the remote PATH
	Socket      string // "" means the remote user's default socket
}

// Spec is the host as package remote takes it.
func (h Host) Spec() remote.Spec {
	return remote.Spec{Name: h.Name, Destination: h.Destination, TmuxBin: h.TmuxBin, Socket: h.Socket}
}

// ParseHosts reads a hosts setting named src. Errors name the entry by
// position, never by value.
func ParseHosts(v, src string) ([]Host, error) {
	var hosts []Host
	seen := map[string]bool{}
	entries := strings.Split(v, ",")
	var errs []error
	for i, e := range entries {
		e = strings.TrimSpace(e)
		bad := func(why string) {
			errs = append(errs, fmt.Errorf("%w: %s: entry %d of %d: %s", ErrInvalid, src, i+1, len(entries), why))
		}
		if e == "" {
			if len(entries) > 1 {
				bad("empty")
			}
			continue
		}
		name, dest, ok := strings.Cut(e, "=")
		if !ok {
			bad("not name=destination")
			continue
		}
		h := Host{Name: strings.TrimSpace(name)}
		dest = strings.TrimSpace(dest)
		if err := remote.CheckName(h.Name); err != nil {
			bad(err.Error())
			continue
		}
		if seen[h.Name] {
			bad("host name given twice")
			continue
		}
		seen[h.Name] = true
		if d, q, ok := strings.Cut(dest, "?"); ok {
			dest = d
			vals, err := url.ParseQuery(q)
			if err != nil {
				bad("options after '?' must be tmux=BIN&socket=NAME")
				continue
			}
			if err := h.options(vals); err != nil {
				bad(err.Error())
				continue
			}
		}
		if err := remote.CheckDestination(dest); err != nil {
			bad(err.Error())
			continue
		}
		h.Destination = dest
		hosts = append(hosts, h)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return hosts, nil
}

func (h *Host) options(vals url.Values) error {
	for k, vs := range vals {
		if len(vs) != 1 {
			return fmt.Errorf("option %q given %d times", k, len(vs))
		}
		switch k {
		case "tmux":
			if err := tmux.CheckRemoteWord("tmux", vs[0]); err != nil {
				return err
			}
			h.TmuxBin = vs[0]
		case "socket":
			if err := tmux.CheckRemoteWord("socket", vs[0]); err != nil {
				return err
			}
			if strings.Contains(vs[0], "/") {
				return errors.New("socket must be a socket name (tmux -L), not a path")
			}
			h.Socket = vs[0]
		default:
			return fmt.Errorf("unknown option %q (known: tmux, socket)", k)
		}
	}
	return nil
}

// ParseSSHCommand splits an ssh command setting into words the way a
// shell would split a simple command, without running one: blanks
// separate words, single quotes keep everything literally, double quotes
// keep everything but a backslash before '"' or '\', and a backslash
// outside quotes keeps the next character. Nothing is expanded ($, ~, *
// stay as they are). An unterminated quote or an empty command is an
// error.
func ParseSSHCommand(v, src string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	const (
		plain = iota
		single
		double
	)
	state := plain
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch state {
		case single:
			if c == '\'' {
				state = plain
			} else {
				cur.WriteByte(c)
			}
		case double:
			switch {
			case c == '"':
				state = plain
			case c == '\\' && i+1 < len(v) && (v[i+1] == '"' || v[i+1] == '\\'):
				i++
				cur.WriteByte(v[i])
			default:
				cur.WriteByte(c)
			}
		default:
			switch {
			case c == ' ' || c == '\t' || c == '\n':
				if inWord {
					words = append(words, cur.String())
					cur.Reset()
					inWord = false
				}
			case c == '\'':
				state, inWord = single, true
			case c == '"':
				state, inWord = double, true
			case c == '\\':
				if i+1 == len(v) {
					return nil, fmt.Errorf("%w: %s ends with a backslash", ErrInvalid, src)
				}
				i++
				cur.WriteByte(v[i])
				inWord = true
			default:
				cur.WriteByte(c)
				inWord = true
			}
		}
		if c == 0 {
			return nil, fmt.Errorf("%w: %s contains a NUL byte", ErrInvalid, src)
		}
	}
	if state != plain {
		return nil, fmt.Errorf("%w: %s has an unterminated quote", ErrInvalid, src)
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 || words[0] == "" {
		return nil, fmt.Errorf("%w: %s names no command", ErrInvalid, src)
	}
	return words, nil
}
