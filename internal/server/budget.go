package server

import (
	"encoding/json"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What a model reads of tools/list (name, description and inputSchema of each
// tool) is context an agent pays for on every turn. The budget below keeps it
// well under the reference's, the host argument of remote tmux included.

// ReferenceModelFacingBytes is what a model reads of the reference's
// tools/list at the destructive tier (56 tools), measured by modelFacingBytes
// on testdata/reference/tools.json: the name, description and inputSchema of
// each tool of libtmux-mcp 0.1.0a20 as its tools/list sends them. A test
// keeps the constant and the fixture in step.
const ReferenceModelFacingBytes = 72441

// ModelFacingBudget is the most a model may read of our tools/list at the
// destructive tier, as a fraction of ReferenceModelFacingBytes (issue 13
// item 12), counted with a host argument on every tool.
const ModelFacingBudget = 0.6

// HostArgDescription is the description tools/list gives the host argument
// that remote tmux over SSH adds to every tool: none. Repeated on some 60
// tools, its old text ("TMUX_MCP_HOSTS entry; default: local") cost 3.2 KB
// of every tools/list, which the tools of issue 20 and later need; like the
// socket arguments, it is explained once, in the instructions (which name
// the configured hosts) and in docs/tools.md's common arguments.
const HostArgDescription = ""

// HostArgName is the property name of the host argument.
const HostArgName = "host"

// hostProperty is the host argument as tools/list advertises it: an
// optional string (a *string field), as every other optional argument is
// spelled (advertisedInput).
func hostProperty() map[string]any {
	s, _, err := typeSchema(reflect.TypeFor[*string]())
	if err != nil {
		panic(err)
	}
	if HostArgDescription != "" {
		s["description"] = HostArgDescription
	}
	return portableNulls(s)
}

// modelFacingBytes is the size in compact JSON of what a model reads of
// tools: each tool's name, description and inputSchema, each tool counted as
// its own object (a client hands the model one function declaration per
// tool). With host, every input schema that lacks it gets the host property.
func modelFacingBytes(tools []*mcp.Tool, host bool) (int, error) {
	n := 0
	for _, t := range tools {
		in := t.InputSchema
		if host {
			var err error
			if in, err = withHost(in); err != nil {
				return 0, err
			}
		}
		b, err := json.Marshal(map[string]any{"name": t.Name, "description": t.Description, "inputSchema": in})
		if err != nil {
			return 0, err
		}
		n += len(b)
	}
	return n, nil
}

// withHost returns a copy of an input schema with the host property added
// (unchanged when it already has one).
func withHost(in any) (map[string]any, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	props, _ := s["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		s["properties"] = props
	}
	if _, ok := props[HostArgName]; !ok {
		props[HostArgName] = hostProperty()
	}
	return s, nil
}

// ModelFacingLimit is the budget in bytes: ModelFacingBudget of
// ReferenceModelFacingBytes, rounded down.
func ModelFacingLimit() int {
	limit := ModelFacingBudget * float64(ReferenceModelFacingBytes)
	return int(limit)
}
