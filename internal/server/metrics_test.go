package server

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/metrics"
)

// TestCallOutcome: the outcome each kind of result is counted under, from
// results as the server builds them.
func TestCallOutcome(t *testing.T) {
	for _, c := range []struct {
		name string
		res  *mcp.CallToolResult
		want metrics.Outcome
	}{
		{"ok", &mcp.CallToolResult{}, metrics.OK},
		{"question", &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{confirmInputKey: nil}}, metrics.InputRequired},
		{"bad input", errorResult(expectedf("no")), metrics.ToolError},
		{"pane gone", errorResult(&ToolError{Msg: "x", Type: typePaneNotFound}), metrics.ToolError},
		{"cancelled", errorResult(toToolError(contextCanceled())), metrics.Cancelled},
		{"tmux timeout", errorResult(&ToolError{Msg: "x", Type: "TmuxTimeout"}), metrics.Timeout},
		{"wait ran out", errorResult(&ToolError{Msg: "x", Type: typeTimeout}), metrics.Timeout},
		{"out of scope", errorResult(scopeRefused("x")), metrics.Refused},
		{"declined", errorResult(&ToolError{Msg: "x", Type: typeConfirmDeclined}), metrics.Refused},
		{"cannot ask", errorResult(&ToolError{Msg: "x", Type: typeConfirmRequired}), metrics.Refused},
		{"forged answer", errorResult(&ToolError{Msg: "x", Type: typeConfirmInvalid}), metrics.Refused},
		{"nil", nil, metrics.ToolError},
	} {
		if got := callOutcome(c.res); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestConfirmAnswer: every answer auditConfirm records maps to one of
// the metric's answers.
func TestConfirmAnswer(t *testing.T) {
	for answer, want := range map[string]metrics.Answer{
		"accept": metrics.Accept, "decline": metrics.Decline, "cancel": metrics.Cancel, "call_cancelled": metrics.Cancel,
		"timeout": metrics.Unanswered, "allowed_without_asking": metrics.Unsupported, "refused_without_asking": metrics.Unsupported,
		"failed": metrics.Invalid, "forged": metrics.Invalid, "replayed": metrics.Invalid, "mismatch": metrics.Invalid,
		"no_answer": metrics.Invalid, "something else": metrics.Invalid,
	} {
		if got := confirmAnswer(answer); got != want {
			t.Errorf("%s: %v, want %v", answer, got, want)
		}
	}
}

func contextCanceled() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx.Err()
}
