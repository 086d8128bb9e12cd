package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/audit"
	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/metrics"
)

// Confirmation (issue 23, item 2): before a call of the tiers the person
// chose (--confirm) runs, the person is asked through MCP elicitation, in
// form mode, with a question naming what the call will do (confirm_describe.go);
// the call runs only on accept. On protocol 2025-11-25 and before the
// question is an elicitation/create request sent while the call waits; on
// 2026-07-28, where a server sends no requests of its own, the call is
// answered with the question as an input request and is run when the
// client calls again with the answer and the request state
// (confirm_state.go). Calls nested in a batch are not asked: the batch
// asked once for all of its rows.

// The error types of a call that was not run for want of confirmation.
const (
	// typeConfirmDeclined: the person declined or dismissed the question,
	// or it went unanswered within the wait ceiling, or could not be
	// asked.
	typeConfirmDeclined = "ConfirmationDeclined"
	// typeConfirmRequired: the call needs confirmation (--confirm), the
	// client cannot be asked (no elicitation) and the fallback refuses.
	typeConfirmRequired = "ConfirmationRequired"
	// typeConfirmInvalid: an answer came with a request state this server
	// did not issue to this client, one already used, or one issued for
	// other arguments.
	typeConfirmInvalid = "ConfirmationInvalid"
)

// confirmInputKey is the id of the one input request a question makes.
const confirmInputKey = "confirm"

// multiRoundTripVersion is the first protocol revision that carries
// questions as input requests (SEP-2322) instead of server requests.
const multiRoundTripVersion = "2026-07-28"

// confirmSchema is the form a question asks for: none. Accepting it is the
// answer; clients show the message with accept, decline and cancel.
var confirmSchema = map[string]any{"type": "object", "properties": map[string]any{}}

// confirm asks the person before the call c runs, when it must. It
// returns nil to let the call run, else the result to answer with: the
// question (2026-07-28) or why the call did not run.
func (c *Call) confirm(ctx context.Context, args map[string]any) (res *mcp.CallToolResult) {
	mode := c.cfg.Confirm
	low := mode.Threshold()
	if low == 0 || c.Tool.Tier < low {
		// A batch's rows are capped by its own tier, so a batch below the
		// threshold holds no row that asks either.
		return nil
	}
	if c.checkCall(c.Tool, args) != nil {
		return nil // the call fails validation before it can do anything
	}
	rows := c.confirmRows(args)
	needed := false
	for _, r := range rows {
		needed = needed || (r.refusal == "" && r.tool != nil && r.tool.Tier >= low)
	}
	if !needed {
		return nil
	}
	defer func() {
		if r := recover(); r != nil {
			// Fail closed: a call that should have been confirmed never
			// runs unasked because describing it failed.
			c.log.Error("panic while asking for confirmation", "tool", c.Tool.Name, "panic", fmt.Sprint(r))
			res = errorResult(&ToolError{Msg: c.Tool.Name + " was not run: asking the person for confirmation failed (logged by the server).", Type: typeConfirmDeclined, Expected: true})
		}
	}()
	if !c.canElicit() {
		if mode == config.ConfirmDefault {
			return nil // by default a client that cannot ask is not asked
		}
		id := newConfirmID()
		if c.cfg.ConfirmFallbackAllow {
			c.auditConfirm(ctx, id, "confirm_answer", "", "allowed_without_asking", args, false)
			return nil
		}
		c.auditConfirm(ctx, id, "confirm_answer", "", "refused_without_asking", args, false)
		return errorResult(&ToolError{
			Msg: fmt.Sprintf("%s was not run: it needs the person's confirmation (TMUX_MCP_CONFIRM=%s), and this client does not support MCP elicitation, so the person cannot be asked.",
				c.Tool.Name, mode),
			Type: typeConfirmRequired, Expected: true,
			Suggestion: "Ask the person to do it themselves, or to use a client that supports elicitation; TMUX_MCP_CONFIRM_FALLBACK=allow runs such calls unasked.",
		})
	}
	if c.multiRoundTrip() {
		return c.confirmByInputRequest(ctx, rows, args)
	}
	return c.confirmByElicitation(ctx, rows, args)
}

// canElicit reports whether the client declared form elicitation: per
// request on 2026-07-28, at initialization before. A capability naming
// neither mode means form (the SDK and the spec read it so).
func (c *Call) canElicit() bool {
	if c.Req == nil || c.Req.Session == nil {
		return false
	}
	caps := c.Req.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	e := caps.Elicitation
	return e.Form != nil || e.URL == nil
}

// multiRoundTrip reports whether the client takes questions as input
// requests, decided as the SDK decides it (the session's protocol
// version; a session not initialized yet speaks the newest).
func (c *Call) multiRoundTrip() bool {
	v := multiRoundTripVersion
	if p := c.Req.Session.InitializeParams(); p != nil {
		v = p.ProtocolVersion
	}
	return v >= multiRoundTripVersion
}

// withdrawGrace is how long a call whose question went unanswered waits
// for the SDK to withdraw the question before answering (see
// confirmByElicitation).
const withdrawGrace = 100 * time.Millisecond

// confirmWait is how long a question may stay unanswered: the wait
// ceiling, as for every other wait.
func (c *Call) confirmWait() time.Duration {
	return time.Duration(c.cfg.WaitMax * float64(time.Second))
}

// confirmByElicitation asks with an elicitation/create request and waits
// for the answer at most the wait ceiling; then the request is cancelled
// (the SDK sends notifications/cancelled) and so is the call.
func (c *Call) confirmByElicitation(ctx context.Context, rows []confirmRow, args map[string]any) *mcp.CallToolResult {
	q := c.question(ctx, rows)
	id := newConfirmID()
	c.auditConfirm(ctx, id, "confirm_question", q.audit, "", args, q.secret)
	ectx, cancel := context.WithTimeout(ctx, c.confirmWait())
	res, err := c.Req.Session.Elicit(ectx, q.params())
	cancel()
	if err != nil {
		switch {
		case ctx.Err() != nil:
			c.auditConfirm(ctx, id, "confirm_answer", "", "call_cancelled", nil, false)
			return c.declined("the call was cancelled while the question was open")
		case errors.Is(ectx.Err(), context.DeadlineExceeded):
			c.auditConfirm(ctx, id, "confirm_answer", "", "timeout", nil, false)
			// The SDK withdraws the question (notifications/cancelled) from
			// a goroutine of its own (go-sdk #1150). Over HTTP it travels on
			// this call's stream, which our answer closes: a cancellation
			// written after the answer is dropped, and the person's client
			// would keep a question nobody waits for. Let it go first.
			select {
			case <-time.After(withdrawGrace):
			case <-ctx.Done():
			}
			return c.unanswered()
		}
		c.log.Warn("elicitation failed", "tool", c.Tool.Name, "error", err)
		c.auditConfirm(ctx, id, "confirm_answer", "", "failed", nil, false)
		return c.declined("the question could not be asked (" + err.Error() + ")")
	}
	return c.answered(ctx, id, res.Action)
}

// confirmByInputRequest is the 2026-07-28 exchange: the first call is
// answered with the question and a request state; the call that carries
// the answer must carry a state this server issued to this client for
// this very call, unused and not past the wait ceiling.
func (c *Call) confirmByInputRequest(ctx context.Context, rows []confirmRow, args map[string]any) *mcp.CallToolResult {
	p := c.Req.Params
	owner := OwnerFrom(ctx)
	digest := argsDigest(c.Tool.Name, args)
	if p.RequestState == "" {
		if len(p.InputResponses) > 0 {
			c.auditConfirm(ctx, "", "confirm_answer", "", "forged", nil, false)
			return c.invalid("it carries an answer but no request state")
		}
		q := c.question(ctx, rows)
		now := time.Now()
		pc := &pendingConfirm{id: newConfirmID(), owner: owner, tool: c.Tool.Name, args: digest, asked: now, expires: now.Add(c.confirmWait())}
		state := c.confirms().put(pc)
		c.auditConfirm(ctx, pc.id, "confirm_question", q.audit, "", args, q.secret)
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{confirmInputKey: q.params()}, RequestState: state}
	}
	now := time.Now()
	pc, got := c.confirms().take(p.RequestState, owner, now)
	switch got {
	case takeSpent:
		c.auditConfirm(ctx, "", "confirm_answer", "", "replayed", nil, false)
		return c.invalid("its request state was already used: each answer runs the call at most once")
	case takeUnknown:
		c.auditConfirm(ctx, "", "confirm_answer", "", "forged", nil, false)
		return c.invalid("its request state was not issued by this server to this client (or is long expired)")
	}
	if pc.tool != c.Tool.Name || pc.args != digest {
		c.auditConfirm(ctx, pc.id, "confirm_answer", "", "mismatch", nil, false)
		return c.invalid("the person was asked about other arguments than these")
	}
	if now.After(pc.expires) {
		c.auditConfirm(ctx, pc.id, "confirm_answer", "", "timeout", nil, false)
		return c.unanswered()
	}
	er, _ := p.InputResponses[confirmInputKey].(*mcp.ElicitResult)
	if er == nil {
		c.auditConfirm(ctx, pc.id, "confirm_answer", "", "no_answer", nil, false)
		return c.invalid("it carries no answer to the question")
	}
	return c.answered(ctx, pc.id, er.Action)
}

// answered turns the person's answer into the call's fate.
func (c *Call) answered(ctx context.Context, id, action string) *mcp.CallToolResult {
	c.auditConfirm(ctx, id, "confirm_answer", "", action, nil, false)
	switch action {
	case "accept":
		return nil
	case "cancel":
		return c.declined("the person dismissed the question without answering")
	case "decline":
		return c.declined("the person declined")
	}
	return c.declined("the answer was neither accept, decline nor cancel")
}

func (c *Call) declined(why string) *mcp.CallToolResult {
	return errorResult(&ToolError{
		Msg:  fmt.Sprintf("%s was not run: %s.", c.Tool.Name, why),
		Type: typeConfirmDeclined, Expected: true,
		Suggestion: "Do not retry it unasked: ask the person what they want instead.",
	})
}

func (c *Call) unanswered() *mcp.CallToolResult {
	return c.declined(fmt.Sprintf("the person did not answer the question within %g s (the wait ceiling), so it was cancelled", c.cfg.WaitMax))
}

func (c *Call) invalid(why string) *mcp.CallToolResult {
	return errorResult(&ToolError{
		Msg:  fmt.Sprintf("%s was not run: the confirmation is not valid: %s.", c.Tool.Name, why),
		Type: typeConfirmInvalid, Expected: true,
		Suggestion: "Call it again without inputResponses and requestState: the person is then asked.",
	})
}

// auditConfirm writes a question (with its text as the audit log may hold
// it) or an answer to the audit log, tied to the call by request id and to
// each other by confirm id. args (the call's, redacted as every record's)
// go with a question and with a decision made without asking.
func (c *Call) auditConfirm(ctx context.Context, id, event, question, answer string, args map[string]any, secret bool) {
	if event == "confirm_answer" {
		metrics.Confirmation(confirmAnswer(answer)) // metrics.go
	}
	if c.audit == nil {
		return
	}
	r := audit.Record{
		Time: time.Now().UTC(), Tool: c.Tool.Name, RequestID: c.RequestID,
		Event: event, ConfirmID: id, Question: question, Answer: answer,
		Outcome: "asked", Args: map[string]any{},
	}
	if answer != "" {
		r.Outcome = answer
	}
	switch {
	case args != nil && secret:
		r.Args = audit.RedactSecret(args)
	case args != nil:
		r.Args = audit.Redact(args)
	}
	stampCaller(ctx, &r, c.Req)
	c.audit.Log(r)
}
