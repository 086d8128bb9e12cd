#!/usr/bin/env bash
# Installs the TypeScript SDK client checks (scripts/ts-client, from its
# lockfile) and runs them against the built binary through
# e2e/http_tsclient_test.go, e2e/confirm_tsclient_test.go and
# e2e/outputs_tsclient_test.go. .ci/run
# installs the SDK too (under CI a missing one fails those tests;
# elsewhere they skip); this is how to run them alone.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v node >/dev/null && command -v npm >/dev/null || { echo "ts-client: node and npm are required" >&2; exit 2; }
npm ci --prefix scripts/ts-client --no-audit --no-fund --loglevel=error
go test -count=1 -run 'TestHTTPTypeScriptClient|TestConfirmTypeScriptClient|TestTypeScriptClientValidatesOutputs' -v ./e2e/
