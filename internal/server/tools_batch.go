package server

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/errarg"
)

func init() { toolGroups = append(toolGroups, batchTools) }

// maxBatchOps bounds one batch.
const maxBatchOps = 1000

type batchOperation struct {
	Tool      string         `json:"tool" doc:"Name of the tool to call."`
	Arguments map[string]any `json:"arguments" default:"{}" doc:"Arguments for that tool."`
}

func (batchOperation) closedSchema() {}

type batchArgs struct {
	Operations []batchOperation `json:"operations" desc:"1 to 1000 calls, run in order."`
	OnError    string           `json:"on_error" default:"\"stop\"" enum:"stop,continue" doc:"stop: halt after the first failing call; continue: run them all."`
	// Host is the host of every operation that names none; an operation's
	// own host argument wins, so one batch may mix hosts.
	Host *string `json:"host" doc:"A TMUX_MCP_HOSTS entry: the call reaches tmux on that host over ssh; omitted: this machine."`
}

// BatchResultRow is one nested call's outcome.
type BatchResultRow struct {
	Index             int              `json:"index"`
	Tool              string           `json:"tool"`
	Success           bool             `json:"success"`
	Error             *string          `json:"error"`
	Content           []map[string]any `json:"content"`
	StructuredContent any              `json:"structured_content" default:"null"`
	Meta              any              `json:"meta" default:"null"`
	ElapsedSeconds    float64          `json:"elapsed_seconds"`
}

// ToolCallBatchResult is the reference's batch answer.
type ToolCallBatchResult struct {
	Results                []BatchResultRow `json:"results"`
	Succeeded              int              `json:"succeeded"`
	Failed                 int              `json:"failed"`
	StoppedAt              *int             `json:"stopped_at"`
	ResponseTruncated      bool             `json:"response_truncated"`
	ResponseTruncatedBytes int              `json:"response_truncated_bytes"`
}

func batchTools() []*Tool {
	mk := func(name, title string, tier config.Tier, preset Preset, what string) *Tool {
		return define(Tool{
			Name: name, Title: title, Tier: tier, Preset: preset, Toolset: "batch",
			Description: fmt.Sprintf("Run several %s tool calls in order in one request, each validated and checked as a direct call. "+
				"Waiting tools (run_command, wait_for_text, wait_for_channel) and batch tools cannot be nested.", what),
		}, func(ctx context.Context, c *Call, a batchArgs) (ToolCallBatchResult, error) {
			return c.runBatch(ctx, tier, a)
		})
	}
	return []*Tool{
		mk("call_readonly_tools_batch", "Call Readonly Tools Batch", config.Readonly, RO, "read-only"),
		mk("call_mutating_tools_batch", "Call Mutating Tools Batch", config.Mutating, BSE, "read-only or mutating"),
		mk("call_destructive_tools_batch", "Call Destructive Tools Batch", config.Destructive, BSE, "read-only, mutating or destructive"),
	}
}

// runBatch runs nested calls one after another through invoke, so each gets
// validation, retry, error mapping and panic recovery exactly as a direct
// call. A nested tool must be visible to the client and within the batch's
// own tier ceiling.
func (c *Call) runBatch(ctx context.Context, ceiling config.Tier, a batchArgs) (ToolCallBatchResult, error) {
	if len(a.Operations) == 0 || len(a.Operations) > maxBatchOps {
		return ToolCallBatchResult{}, expectedf("operations must hold 1 to %d calls", maxBatchOps)
	}
	res := ToolCallBatchResult{Results: []BatchResultRow{}}
	for i, op := range a.Operations {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		start := time.Now()
		row := BatchResultRow{Index: i, Tool: op.Tool, Content: []map[string]any{}}
		if refusal := c.batchRefusal(op.Tool, ceiling); refusal != "" {
			row.Error = &refusal
			row.Content = []map[string]any{{"type": "text", "text": refusal}}
		} else {
			if a.Host != nil && *a.Host != "" && takesHost(c.visible[op.Tool]) {
				if _, given := op.Arguments[HostArgName]; !given {
					op.Arguments = maps.Clone(op.Arguments)
					if op.Arguments == nil {
						op.Arguments = map[string]any{}
					}
					op.Arguments[HostArgName] = *a.Host
				}
			}
			args, _ := json.Marshal(op.Arguments)
			r := c.invoke(ctx, c.visible[op.Tool], c.Req, args, c.RequestID)
			row.Success = !r.IsError
			row.Content = contentMaps(r.Content)
			if r.IsError {
				msg := text(r)
				row.Error = &msg
			} else if r.StructuredContent != nil {
				row.StructuredContent = r.StructuredContent
			}
			if len(r.Meta) > 0 {
				row.Meta = r.Meta
			}
		}
		row.ElapsedSeconds = roundMs(time.Since(start))
		res.Results = append(res.Results, row)
		if row.Success {
			res.Succeeded++
		} else {
			res.Failed++
			if a.OnError == "stop" {
				idx := i
				res.StoppedAt = &idx
				break
			}
		}
	}
	capBatch(&res)
	return res, nil
}

// batchRefusal explains why a nested tool may not run, or returns "".
func (c *Call) batchRefusal(name string, ceiling config.Tier) string {
	t := c.visible[name]
	switch {
	case t == nil && c.tool(name) != nil:
		return fmt.Sprintf("tool '%s' is not available to this client (safety tier or toolsets)", name)
	case t == nil:
		return fmt.Sprintf("unknown tool '%s'", errarg.Bare(name))
	case t.Toolset == "batch":
		return "batch tools cannot be nested"
	case t.SelfBounded:
		return fmt.Sprintf("'%s' waits on its own clock and cannot run inside a batch; call it directly", name)
	case t.Tier > ceiling:
		return fmt.Sprintf("'%s' needs the %s tier; this batch allows up to %s", name, t.Tier, ceiling)
	}
	return ""
}

func contentMaps(cs []mcp.Content) []map[string]any {
	out := []map[string]any{}
	for _, c := range cs {
		raw, err := json.Marshal(c)
		if err != nil {
			continue
		}
		var m map[string]any
		if json.Unmarshal(raw, &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// capBatch keeps the answer within maxResultBytes by eliding nested content
// from the first rows on, and labels what it did. It measures the answer as
// limitSize will, structured JSON plus its escaped text copy, so limitSize
// never has to cut rows after it without a label. Each row is marshalled
// once; eliding a row changes the total by that row's difference.
// ResponseTruncatedBytes counts the structured JSON removed.
func capBatch(res *ToolCallBatchResult) {
	const envelope = 4096 // content list, type fields, _meta
	total, _ := wireSize(res)
	if total <= maxResultBytes-envelope {
		return
	}
	removed := 0
	for i := range res.Results {
		if total <= maxResultBytes-envelope {
			break
		}
		wire, js := wireSize(res.Results[i])
		res.Results[i].Content = []map[string]any{{"type": "text", "text": "[... batch truncated nested content ...]"}}
		res.Results[i].StructuredContent = nil
		wire2, js2 := wireSize(res.Results[i])
		total += wire2 - wire
		removed += js - js2
	}
	res.ResponseTruncated = true
	res.ResponseTruncatedBytes = removed
}

// wireSize is what v costs in a structured tool result: its JSON, plus the
// same JSON escaped into the text copy. It also returns the JSON's size.
func wireSize(v any) (wire, jsonBytes int) {
	b, _ := json.Marshal(v)
	t, _ := json.Marshal(string(b))
	return len(b) + len(t), len(b)
}

func roundMs(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond)) / float64(time.Second)
}

// takesHost reports whether a tool has the host argument.
func takesHost(t *Tool) bool {
	props, _ := t.inSchema()["properties"].(map[string]any)
	_, ok := props[HostArgName]
	return ok
}
