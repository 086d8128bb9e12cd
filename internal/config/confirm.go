package config

import (
	"fmt"
	"strings"
)

// Confirm is which tool calls wait for the person's answer to a question
// sent through MCP elicitation before they run (--confirm). Its zero value
// is the default, which depends on the client: destructive for a client
// that declares elicitation, off for the others, so that a client which
// cannot ask keeps today's behaviour unless the person chose otherwise.
type Confirm int

const (
	ConfirmDefault     Confirm = iota // not set: destructive where the client can ask, else off
	ConfirmOff                        // never ask
	ConfirmDestructive                // the destructive tier's tools
	ConfirmMutating                   // the mutating tier's tools and up
)

func (c Confirm) String() string {
	switch c {
	case ConfirmOff:
		return "off"
	case ConfirmDestructive:
		return "destructive"
	case ConfirmMutating:
		return "mutating"
	}
	return "default"
}

// Threshold is the lowest tier that asks under c for a client that can
// be asked; 0 means nothing asks.
func (c Confirm) Threshold() Tier {
	switch c {
	case ConfirmDefault, ConfirmDestructive:
		return Destructive
	case ConfirmMutating:
		return Mutating
	}
	return 0
}

// ParseConfirm reads a --confirm value. Anything else stops start-up: a
// person who asked to be asked must not find that a typo turned it off.
func ParseConfirm(v, name string) (Confirm, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "off":
		return ConfirmOff, nil
	case "destructive":
		return ConfirmDestructive, nil
	case "mutating":
		return ConfirmMutating, nil
	}
	return 0, fmt.Errorf("%w: %s must be destructive, mutating or off", ErrInvalid, name)
}

// ParseConfirmFallback reads --confirm-fallback: whether a call that needs
// confirmation is refused (true) or run unasked (false) for a client that
// cannot be asked.
func ParseConfirmFallback(v, name string) (refuse bool, err error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "refuse":
		return true, nil
	case "allow":
		return false, nil
	}
	return true, fmt.Errorf("%w: %s must be refuse or allow", ErrInvalid, name)
}

// confirmWarnings notes a fallback set without --confirm: it decides
// nothing then, since by default a client that cannot ask is not asked.
func (c Config) confirmWarnings() []Warning {
	if c.Confirm == ConfirmDefault && c.From["confirm-fallback"] != "" && c.From["confirm-fallback"] != "default" {
		return []Warning{Warning(c.From["confirm-fallback"] + " has no effect unless --confirm (TMUX_MCP_CONFIRM) is set too")}
	}
	return nil
}

// ConfirmSummary says in a line which calls ask the person, for doctor.
func (c Config) ConfirmSummary() string {
	switch c.Confirm {
	case ConfirmOff:
		return "off: no call asks the person"
	case ConfirmDefault:
		return "destructive calls ask the person where the client supports elicitation; other clients are not asked"
	}
	fallback := "refused"
	if c.ConfirmFallbackAllow {
		fallback = "run unasked"
	}
	return fmt.Sprintf("%s-tier calls and up ask the person; for clients without elicitation they are %s", c.Confirm, fallback)
}
