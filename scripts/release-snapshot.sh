#!/bin/sh
# Build every release artifact locally, publishing nothing, and check them:
#   scripts/release-snapshot.sh
# It installs the pinned goreleaser through the Go module proxy (if this
# version is not installed yet) and the official mcpb CLI (npm ci in
# scripts/mcpb, if not installed), checks .goreleaser.yaml (a deprecation
# warning fails), runs a snapshot release into dist/ (archives with the man
# page and completions, .mcpb bundles, checksums, the Homebrew cask, and
# the images where a container daemon answers), writes dist/server.json as
# the release workflow does, and runs TestReleaseSnapshot on dist/.
# Not part of CI: building goreleaser takes minutes.
#
# goreleaser is pinned at v2.15.x: it builds with the Go this project uses,
# newer releases need a newer Go. The release workflow uses the same version.
set -eu

GORELEASER_VERSION=v2.15.1

cd "$(dirname "$0")/.."
gobin=$(go env GOBIN)
[ -n "$gobin" ] || gobin=$(go env GOPATH)/bin
goreleaser=$gobin/goreleaser

if ! "$goreleaser" --version 2>/dev/null | grep -q "GitVersion:[[:space:]]*${GORELEASER_VERSION}\$"; then
	echo "release-snapshot: installing goreleaser $GORELEASER_VERSION (this takes a few minutes)"
	go install "github.com/goreleaser/goreleaser/v2@$GORELEASER_VERSION"
fi
if [ -z "${MCPB:-}" ] && [ ! -x scripts/mcpb/node_modules/.bin/mcpb ]; then
	echo "release-snapshot: installing the official mcpb CLI (npm ci --prefix scripts/mcpb)"
	npm ci --prefix scripts/mcpb --no-audit --no-fund --loglevel=error
fi

check=$("$goreleaser" check 2>&1) || { echo "$check"; exit 1; }
echo "$check"
if echo "$check" | grep -qi deprecat; then
	echo "release-snapshot: goreleaser check reports a deprecation" >&2
	exit 1
fi

skip=""
if ! docker info >/dev/null 2>&1; then
	echo "release-snapshot: no container daemon answers (docker info failed): skipping the image builds (dockers_v2)"
	skip="--skip=docker"
fi
# shellcheck disable=SC2086 # $skip is one word or none
"$goreleaser" release --snapshot --clean $skip

version=$(sed -n 's/.*"version":"\([^"]*\)".*/\1/p' dist/metadata.json)
go run ./internal/release/cmd/tmux-mcp-release server-json --dist dist --version "$version" --out dist/server.json

echo
echo "dist/:"
ls -l dist/ dist/homebrew/Casks/
echo
cat dist/*_checksums.txt
echo
TMUX_MCP_RELEASE_SNAPSHOT=dist go test -count=1 -run 'TestReleaseSnapshot' -v ./internal/release/
