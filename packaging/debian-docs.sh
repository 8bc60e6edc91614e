#!/bin/sh
# Generates the man pages and shell completions that `cargo deb -p elicitd`
# packages, from the release binaries themselves, into TARGET/release/docs.
#
#   packaging/debian-docs.sh [TARGET]      (default: $CARGO_TARGET_DIR or target)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
target=${1:-${CARGO_TARGET_DIR:-$here/../target}}
out=$target/release/docs
rm -rf "$out"
"$target/release/elicitd" --generate-docs "$out"
"$target/release/elicit" generate-docs "$out"
"$target/release/elicit-tui" --generate-docs "$out"
"$target/release/elicit-notify" --generate-docs "$out"
