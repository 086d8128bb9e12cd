package server

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/metrics"
)

// Metrics (serve --http --metrics ADDR, internal/metrics): invoke counts
// every tools/call it answers by tool and outcome, with its latency and
// while it runs; the gate counts its refusals and the calls of tools that
// do not exist (never by their name); confirmations are counted by answer.
// With metrics off each of these is one atomic load.

// callOutcome is the outcome a call's result is counted under, read from
// the error_type the audit log records with it. A refusal at the gate is
// counted there, since its error type (ExpectedToolError) is also that of
// bad input.
func callOutcome(res *mcp.CallToolResult) metrics.Outcome {
	switch {
	case res == nil:
		return metrics.ToolError
	case res.InputRequests != nil:
		return metrics.InputRequired
	case !res.IsError:
		return metrics.OK
	}
	typ, _ := res.Meta["error_type"].(string)
	switch typ {
	case "Cancelled":
		return metrics.Cancelled
	case "TmuxTimeout", typeTimeout:
		return metrics.Timeout
	case typeOutOfScope, typeConfirmDeclined, typeConfirmRequired, typeConfirmInvalid:
		return metrics.Refused
	}
	return metrics.ToolError
}

// confirmAnswer is the metric's answer for an answer the audit log
// records (auditConfirm's answer field).
func confirmAnswer(answer string) metrics.Answer {
	switch answer {
	case "accept":
		return metrics.Accept
	case "decline":
		return metrics.Decline
	case "cancel", "call_cancelled":
		return metrics.Cancel
	case "timeout":
		return metrics.Unanswered
	case "allowed_without_asking", "refused_without_asking":
		return metrics.Unsupported
	}
	return metrics.Invalid // failed to ask, forged, replayed, mismatch, no answer, an unknown action
}

// ToolNames lists every tool of the registry, visible or not: the only
// names the metrics label calls with.
func (s *Server) ToolNames() []string {
	names := make([]string, len(s.all))
	for i, t := range s.all {
		names[i] = t.Name
	}
	return names
}

// HostStates counts the configured remote hosts by the state of their
// ssh connection: up (live), down (failed or lost) and idle (not
// connected yet).
func (s *Server) HostStates() (up, down, idle int) {
	if s.hosts == nil {
		return 0, 0, 0
	}
	return s.hosts.States()
}
