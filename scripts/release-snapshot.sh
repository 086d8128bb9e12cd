#!/bin/sh
# Build every release archive locally, publishing nothing: installs the pinned
# goreleaser through the Go module proxy (if this version is not installed
# yet), checks .goreleaser.yaml, runs a snapshot release into dist/ and lists
# it. Not part of CI: building goreleaser takes minutes.
#
# goreleaser is pinned at v2.15.x: it builds with the Go this project uses,
# newer releases need a newer Go.
set -eu

GORELEASER_VERSION=v2.15.1

cd "$(dirname "$0")/.."
gobin=$(go env GOBIN)
[ -n "$gobin" ] || gobin=$(go env GOPATH)/bin
goreleaser=$gobin/goreleaser

if ! "$goreleaser" --version 2>/dev/null | grep -q "GitVersion:[[:space:]]*${GORELEASER_VERSION}\$"; then
	echo "installing goreleaser $GORELEASER_VERSION (this takes a few minutes)"
	go install "github.com/goreleaser/goreleaser/v2@$GORELEASER_VERSION"
fi

"$goreleaser" check
"$goreleaser" release --snapshot --clean
echo
echo "dist/:"
ls -l dist/
echo
cat dist/*_checksums.txt
