#!/usr/bin/env bash
# Builds the binary for every GOOS/GOARCH that .goreleaser.yaml names, as the
# release does (CGO_ENABLED=0), writing nothing: a target that does not
# compile (a syscall one OS lacks) fails here, in CI, rather than at release
# time. The targets are read from the config, so they cannot drift apart.
set -euo pipefail
cd "$(dirname "$0")/.."
config=.goreleaser.yaml

# builds is the config's top-level "builds:" section.
builds=$(awk '/^[^[:space:]#]/ { on = ($1 == "builds:") } on' "$config")
# The script reads one build's plain goos and goarch lists. A config that
# narrows or widens them otherwise would be misread: say so instead.
if [ "$(grep -c '^  - ' <<<"$builds")" != 1 ] ||
  grep -Eq '^[[:space:]]+(ignore|targets|goarm|goamd64|goarm64):' <<<"$builds"; then
  echo "cross-build: $config has more than one build, or ignore/targets/goarm*: teach scripts/cross-build.sh to read it" >&2
  exit 1
fi

# list KEY prints the items of the YAML list under KEY (comments skipped).
list() {
  awk -v key="$1" '
    $1 == key":" { on = 1; next }
    on && /^[[:space:]]*#/ { next }
    on && $1 == "-" { print $2; next }
    on { exit }
  ' <<<"$builds"
}
mapfile -t oses < <(list goos)
mapfile -t arches < <(list goarch)
if [ ${#oses[@]} = 0 ] || [ ${#arches[@]} = 0 ]; then
  echo "cross-build: found no goos or goarch list in $config" >&2
  exit 1
fi

failed=()
for os in "${oses[@]}"; do
  for arch in "${arches[@]}"; do
    echo "cross-build: $os/$arch"
    if ! GOOS=$os GOARCH=$arch CGO_ENABLED=0 go build -o /dev/null ./cmd/tmux-mcp; then
      failed+=("$os/$arch")
    fi
  done
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "cross-build: these release targets do not build: ${failed[*]}" >&2
  exit 1
fi
echo "cross-build: ${#oses[@]} x ${#arches[@]} release targets build"
