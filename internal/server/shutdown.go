package server

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrShutdown is the cause given to the context of every call in flight
// when the server stops (SIGTERM, SIGINT or end of input). A wait that sees
// it answers with what it has so far instead of an error: the transport is
// still open, and the client is owed an answer.
var ErrShutdown = errors.New("tmux-mcp is shutting down")

// Shutdown cancels every call in flight, and every call that arrives from
// now on, with ErrShutdown as the cause. Waits end early with their partial
// result; the serving code then writes the answers and exits. It does not
// release tmux resources: Close does.
func (s *Server) Shutdown() {
	s.stop.cancel(ErrShutdown)
}

// stopState is made in New: every request's context is tied to it.
type stopState struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// cancelOnShutdown is the receiving middleware that ties each request's
// context to Shutdown.
func (s *Server) cancelOnShutdown(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		release := context.AfterFunc(s.stop.ctx, func() { cancel(ErrShutdown) })
		defer release()
		return next(ctx, method, req)
	}
}

// ErrSessionEnded is the cause a transport gives to the context of a call
// whose client session was ended while the call ran (an HTTP DELETE of the
// session): as at shutdown, the call answers at once with what it has, on
// a connection that is still open.
var ErrSessionEnded = errors.New("the client's session ended")

// endedEarly reports whether ctx ended because the server ended the call
// early, stopping (ErrShutdown) or ending the client's session
// (ErrSessionEnded), as opposed to the client cancelling the call: the
// client is still owed an answer, and a wait gives what it saw so far.
func endedEarly(ctx context.Context) bool {
	cause := context.Cause(ctx)
	return errors.Is(cause, ErrShutdown) || errors.Is(cause, ErrSessionEnded)
}
