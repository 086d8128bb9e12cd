#!/usr/bin/env bash
# The full HTTP load test of issue 11 (e2e/http_load_test.go): 50 clients,
# each with its own bearer token (a 0600 tokens file), its own MCP session
# and its own tmux session and pane on an isolated tmux server, x 200 mixed
# calls (get_pane_info, list_panes, capture_pane, send_keys into its own
# pane, one run_command each) against one `serve --http` process; then the
# same with 10 clients subscribed to their own pane's content; then
# get_pane_info alone, back to back (the most calls per second) and at a
# steady 1,000 calls/s (latency at a rate). Once per protocol generation
# (2025-11-25 sessions, 2026-07-28 stateless). Prints p50/p99 per tool,
# calls/s, the server's own p50/p99 and each process's CPU per phase.
#
#   scripts/http-load.sh                  # 200 calls per client per phase
#   CALLS=500 scripts/http-load.sh        # more
#   RUN=TestHTTPLoad/2025-11-25 scripts/http-load.sh   # one generation
#
# CI runs the same test with 20 calls per client.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "http-load: $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg) before the run"
TMUX_MCP_LOAD=1 TMUX_MCP_LOAD_CALLS=${CALLS:-200} \
  go test -count=1 -timeout 90m -run "${RUN:-TestHTTPLoad}" -v ./e2e/
echo "http-load: load average $(cut -d' ' -f1-3 /proc/loadavg) after the run"
