// Command coldfloor is the floor of BenchmarkColdStartToolsList: a Go
// program that answers initialize and tools/list with constant lines and
// does nothing else, so the benchmark can tell the cost of starting any Go
// process on this machine from the cost of starting tmux-mcp.
package main

import (
	"bufio"
	"os"
	"strings"
)

func main() {
	r := bufio.NewReader(os.Stdin)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		switch {
		case strings.Contains(line, `"initialize"`):
			os.Stdout.WriteString(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"coldfloor","version":"0"}}}` + "\n")
		case strings.Contains(line, `"tools/list"`):
			os.Stdout.WriteString(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}` + "\n")
		}
	}
}
