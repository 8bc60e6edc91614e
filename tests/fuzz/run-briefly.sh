#!/usr/bin/env bash
# CI: runs every fuzz target briefly on its committed corpus and fails on
# any finding (a panic, a broken invariant, a slow or leaking input). It
# installs nothing: cargo-fuzz must be on the PATH (`cargo install
# cargo-fuzz --locked --version 0.13.2`). The targets need nightly-only
# compiler flags; RUSTC_BOOTSTRAP lets the stable toolchain accept them.
#
#   tests/fuzz/run-briefly.sh [SECONDS_PER_TARGET]   (default 45)
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=${1:-45}
export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target/fuzz}
targets=(schema_check content_validation proxy_lines)

build_log=$(mktemp)
if ! cargo fuzz build --fuzz-dir tests/fuzz >"$build_log" 2>&1; then
  cat "$build_log"
  echo "building the fuzz targets failed (above)" >&2
  exit 1
fi
rm -f "$build_log"
for target in "${targets[@]}"; do
  # A scratch copy of the corpus: new inputs found here must not dirty the
  # checkout; crashes still land in tests/fuzz/artifacts/ for upload.
  scratch=$(mktemp -d)
  cp -r "tests/fuzz/corpus/$target/." "$scratch/"
  echo "fuzzing $target for ${seconds}s"
  # -timeout: an input that takes seconds is a finding (it would stall
  # the proxy or the broker); -rss_limit_mb: so is one that needs 2 GB.
  if ! cargo fuzz run --fuzz-dir tests/fuzz "$target" "$scratch" -- \
    -max_total_time="$seconds" -timeout=3 -rss_limit_mb=2048 -print_final_stats=1 \
    >"$scratch.log" 2>&1; then
    tail -n 60 "$scratch.log"
    echo "fuzz target $target found a problem (above; input in tests/fuzz/artifacts/$target/)" >&2
    exit 1
  fi
  grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb|DONE' "$scratch.log" | tr '\n' ' '
  echo
  rm -rf "$scratch" "$scratch.log"
done
echo "every fuzz target ran ${seconds}s without a finding"
