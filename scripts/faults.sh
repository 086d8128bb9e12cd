#!/usr/bin/env bash
# Runs the protocol-and-fault suite of issue 9 against the built binary for
# a few minutes: malformed JSON-RPC lines, SIGTERM/EOF/SIGKILL and tmux or
# pane kills (once per minute of the run, at most 5 rounds), a clobber sweep
# of every tool at canary files, and a schema-driven fuzz of every tool's
# arguments for TMUX_MCP_FAULT_DURATION. Not in CI by default: CI runs the
# ~20 s version through `go test ./...`.
#
#   scripts/faults.sh                         # 5 minutes
#   TMUX_MCP_FAULT_DURATION=30m scripts/faults.sh
#   TMUX_MCP_FAULT_SEED=123 scripts/faults.sh # replay a fuzz run
set -euo pipefail
cd "$(dirname "$0")/.."
export TMUX_MCP_FAULT_DURATION="${TMUX_MCP_FAULT_DURATION:-5m}"
# go test's own timeout: the duration plus room for the fault rounds and the
# build (plain "90s", "5m", "1h" forms; anything else gets 3 hours).
d="$TMUX_MCP_FAULT_DURATION"
case "$d" in
  *[0-9]s) secs=${d%s} ;;
  *[0-9]m) secs=$(( ${d%m} * 60 )) ;;
  *[0-9]h) secs=$(( ${d%h} * 3600 )) ;;
  *) secs=10800 ;;
esac
[[ "$secs" =~ ^[0-9]+$ ]] || secs=10800
timeout_s=$(( secs + 900 ))
log=$(mktemp -t tmux-mcp-faults.XXXXXX)
echo "faults: running for ${TMUX_MCP_FAULT_DURATION} (log: $log)"
set +e
go test -count=1 -timeout "${timeout_s}s" -run 'TestFault' -v ./e2e/ 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
echo
echo "faults: summary"
grep -h '^faults: ' "$log" || true
grep -hE '^\s*--- (FAIL|PASS): TestFault' "$log" || true
exit "$status"
