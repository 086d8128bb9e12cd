package server

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/audit"
)

// nextRequestID numbers tool calls within this process; nested batch calls
// get their own number and name their parent.
func (s *Server) nextRequestID() string {
	return strconv.FormatUint(s.reqSeq.Add(1), 10)
}

// auditCall writes the audit record of one tool call (never its result).
func (s *Server) auditCall(ctx context.Context, tool string, req *mcp.CallToolRequest, raw json.RawMessage, id, parent string, start time.Time, res *mcp.CallToolResult) {
	if s.audit == nil {
		return
	}
	var args map[string]any
	if v, err := decodeObject(raw, false); err == nil {
		args, _ = v.(map[string]any)
	}
	r := audit.Record{
		Time:       start.UTC(),
		Tool:       tool,
		Outcome:    "ok",
		DurationMS: float64(time.Since(start).Microseconds()) / 1000,
		RequestID:  id,
		Parent:     parent,
		Args:       audit.Redact(args),
	}
	if res != nil && res.InputRequests != nil {
		r.Outcome = "input_required" // a question went back; the call runs when it is answered
	}
	if res != nil && res.IsError {
		r.Outcome = "error"
		r.ErrorType, _ = res.Meta["error_type"].(string)
		if r.ErrorType == typeSecretPrompt {
			r.Args = audit.RedactSecret(args)
		}
	}
	stampCaller(ctx, &r, req)
	s.audit.Log(r)
}

// stampCaller fills in who made the call r records: the authenticated
// client's identity, the client's name and the MCP session (req may be
// nil).
func stampCaller(ctx context.Context, r *audit.Record, req *mcp.CallToolRequest) {
	if c, ok := ClientFrom(ctx); ok {
		r.Identity = c.Name
	}
	if req != nil {
		r.Client = clientName(req)
		if req.Session != nil {
			r.Session = req.Session.ID()
		}
	}
}

// clientName is the calling client's name, as req.ClientInfo() would give
// it, without the SDK's re-encoding: a 2026-07-28 request carries it in
// _meta as a JSON map, which ClientInfo turns into an Implementation by
// encoding and decoding it again (about 35 KB allocated per audited call).
func clientName(req *mcp.CallToolRequest) string {
	if req.Params != nil {
		switch ci := req.Params.GetMeta()[mcp.MetaKeyClientInfo].(type) {
		case map[string]any:
			if n, ok := ci["name"].(string); ok {
				return n
			}
		case *mcp.Implementation:
			if ci != nil {
				return ci.Name
			}
		}
	}
	if req.Session != nil {
		if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil {
			return p.ClientInfo.Name
		}
	}
	return ""
}
