package cli

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/tmux-mcp/tmux-mcp/internal/server"
)

// docs regenerates docs/tools.md, the README's tool table and the
// generated tool schemas (internal/server/schemas_gen.go) in the repository
// at root, or with check only reports whether they are current.
func docs(root string, check bool, stdout io.Writer, logger *slog.Logger) int {
	md, err := server.ToolsMarkdown()
	if err != nil {
		logger.Error(err.Error())
		return 1
	}
	table, err := server.ReadmeToolTable()
	if err != nil {
		logger.Error(err.Error())
		return 1
	}
	toolsPath := filepath.Join(root, "docs", "tools.md")
	readmePath := filepath.Join(root, "README.md")
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		logger.Error("docs must run at the repository root", "error", err)
		return 1
	}
	const begin, end = "<!-- tools:begin -->\n", "<!-- tools:end -->"
	i, j := strings.Index(string(readme), begin), strings.Index(string(readme), end)
	if i < 0 || j < i {
		logger.Error("README.md lacks the tools:begin/tools:end markers")
		return 1
	}
	newReadme := string(readme[:i+len(begin)]) + table + string(readme[j:])
	schemas, err := server.GeneratedSchemasSource()
	if err != nil {
		logger.Error(err.Error())
		return 1
	}
	schemasPath := filepath.Join(root, filepath.FromSlash(server.SchemasGenPath))
	oldSchemas, _ := os.ReadFile(schemasPath)
	old, _ := os.ReadFile(toolsPath)
	if check {
		if string(old) != md || newReadme != string(readme) || string(oldSchemas) != string(schemas) {
			logger.Error("docs are stale: run `go run ./cmd/tmux-mcp docs` and commit the result")
			return 1
		}
		fmt.Fprintln(stdout, "docs are up to date")
		return 0
	}
	if err := os.MkdirAll(filepath.Dir(toolsPath), 0o755); err != nil {
		logger.Error(err.Error())
		return 1
	}
	if err := os.WriteFile(toolsPath, []byte(md), 0o644); err != nil {
		logger.Error(err.Error())
		return 1
	}
	if err := os.WriteFile(readmePath, []byte(newReadme), 0o644); err != nil {
		logger.Error(err.Error())
		return 1
	}
	if err := os.WriteFile(schemasPath, schemas, 0o644); err != nil {
		logger.Error(err.Error())
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s, %s and the tool table in %s\n", toolsPath, schemasPath, readmePath)
	return 0
}
