package server

import (
	"context"
	"sort"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/errarg"
)

// Prompts as tools, for clients that cannot use MCP prompts
// (TMUX_MCP_PROMPTS_AS_TOOLS=1). Unlike the reference, whose generated tools
// had no tier and were hidden by its own safety gate, these are read-only
// tools that really appear.

type listPromptsArgs struct{}

type getPromptArgs struct {
	Name      string            `json:"name" desc:"Prompt name, from list_prompts."`
	Arguments map[string]string `json:"arguments" default:"{}" doc:"Prompt arguments."`
}

// PromptInfo describes one prompt.
type PromptInfo struct {
	Name        string           `json:"name"`
	Title       string           `json:"title"`
	Description string           `json:"description"`
	Arguments   []PromptArgument `json:"arguments"`
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
}

// RenderedPrompt is a prompt's text.
type RenderedPrompt struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

func promptTools() []*Tool {
	return []*Tool{
		define(Tool{
			Name: "list_prompts", Title: "List Prompts", Toolset: "server", Tier: config.Readonly, Preset: RO,
			Description: "List the server's prompt recipes (multi-step workflows such as run_and_wait) with their arguments. Render one with get_prompt.",
		}, func(ctx context.Context, c *Call, _ listPromptsArgs) ([]PromptInfo, error) {
			var out []PromptInfo
			for _, p := range Prompts() {
				pi := PromptInfo{Name: p.Name, Title: p.Title, Description: p.Description, Arguments: []PromptArgument{}}
				for _, a := range p.Args {
					pi.Arguments = append(pi.Arguments, PromptArgument{a.Name, a.Description, a.Required})
				}
				out = append(out, pi)
			}
			sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
			return out, nil
		}),
		define(Tool{
			Name: "get_prompt", Title: "Get Prompt", Toolset: "server", Tier: config.Readonly, Preset: RO,
			Description: "Render one prompt recipe from list_prompts with its arguments and return its text.",
		}, func(ctx context.Context, c *Call, a getPromptArgs) (RenderedPrompt, error) {
			for _, p := range Prompts() {
				if p.Name == a.Name {
					text, err := renderPrompt(p, a.Arguments)
					if err != nil {
						return RenderedPrompt{}, expectedf("%v", err)
					}
					return RenderedPrompt{Name: p.Name, Text: text}, nil
				}
			}
			return RenderedPrompt{}, expectedf("unknown prompt %s; call list_prompts", errarg.Quoted(a.Name))
		}),
	}
}
