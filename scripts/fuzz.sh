#!/usr/bin/env bash
# Runs every fuzz target for a while. CI runs it briefly (FUZZTIME=5s);
# run it longer by hand before a release: FUZZTIME=10m scripts/fuzz.sh
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME="${FUZZTIME:-1m}"
targets=(
  "./internal/tmux/control FuzzParse"
  "./internal/tmux/control FuzzParseForgedBlock"
  "./internal/tmux/control FuzzUnescape"
  "./internal/tmux/control FuzzQuote"
  "./internal/tmux FuzzParseRows"
  "./internal/tmux FuzzControlQuoteRoundTrip"
  "./internal/termtext FuzzDecoder"
  "./internal/termtext FuzzDecoderVsTmux"
  "./internal/oauth FuzzVerify"
)
for t in "${targets[@]}"; do
  set -- $t
  echo "fuzz: $2 ($1) for $FUZZTIME"
  go test -run '^$' -fuzz "^$2\$" -fuzztime "$FUZZTIME" "$1"
done
