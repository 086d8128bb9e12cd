#!/usr/bin/env bash
# Installs the MCP App browser test's host (scripts/app-host, from its
# lockfile) and runs the pane view in headless Chromium against the built
# binary through e2e/app_browser_test.go. .ci/run installs Chromium and the
# packages too (under CI a missing one fails the test; elsewhere it
# skips); this is how to run it alone. With TMUX_MCP_APP_SCREENSHOT=1 the
# screenshot is written to docs/images/pane-app.png.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v node >/dev/null && command -v npm >/dev/null || { echo "app-host: node and npm are required" >&2; exit 2; }
[ -x /usr/bin/chromium ] || [ -n "${TMUX_MCP_CHROMIUM:-}" ] || { echo "app-host: Chromium is required (apt-get install chromium, or TMUX_MCP_CHROMIUM=path)" >&2; exit 2; }
npm ci --prefix scripts/app-host --no-audit --no-fund --loglevel=error
go test -count=1 -run 'TestAppInChromium' -v ./e2e/
