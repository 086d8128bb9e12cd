#!/usr/bin/env bash
# Runs the whole internal/server tool suite against a remote host (issue 12):
# every tool call goes over ssh to a loopback sshd whose tmux server is the
# test's own. CI runs only the representative subset (TestRemoteHostTools);
# run this by hand after touching the remote path. Needs openssh-server.
# Extra arguments go to go test (e.g. -run TestSendKeys -v).
set -euo pipefail
cd "$(dirname "$0")/.."
TMUX_MCP_TEST_TRANSPORT=ssh go test -count=1 -timeout 20m "$@" ./internal/server/
