#!/bin/sh
# Run the differential test against the reference server libtmux-mcp
# (see /work/shared/reference/README.md for setting it up; CI cannot fetch it,
# so there TestReference skips). Usage:
#   scripts/reference-diff.sh [path/to/start-reference.sh]
# REFSRC (where setup-reference.sh laid the sources out) defaults to /tmp/refsrc.
set -eu
cd "$(dirname "$0")/.."
TMUX_MCP_REFERENCE=${1:-${TMUX_MCP_REFERENCE:-/work/shared/reference/start-reference.sh}}
REFSRC=${REFSRC:-/tmp/refsrc}
export TMUX_MCP_REFERENCE REFSRC
exec go test -count=1 -run 'TestReference$' -v ./e2e/
