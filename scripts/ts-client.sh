#!/usr/bin/env bash
# Installs the TypeScript SDK client check (scripts/ts-client, from its
# lockfile) and runs it against the built serve --http through
# e2e/http_tsclient_test.go. CI skips that test when the SDK is not
# installed; this is how to run it.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v node >/dev/null && command -v npm >/dev/null || { echo "ts-client: node and npm are required" >&2; exit 2; }
npm ci --prefix scripts/ts-client --no-audit --no-fund --loglevel=error
go test -count=1 -run 'TestHTTPTypeScriptClient' -v ./e2e/
