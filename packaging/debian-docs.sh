#!/bin/sh
# Generates the man pages (gzipped, as Debian policy wants them) and shell
# completions that `cargo deb` packages, from the release binaries
# themselves, into TARGET/release/docs/PACKAGE. cargo-deb compresses man
# pages only when they come from outside the target directory, hence the
# gzip here.
#
#   packaging/debian-docs.sh [TARGET]      (default: $CARGO_TARGET_DIR or target)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
target=${1:-${CARGO_TARGET_DIR:-$here/../target}}
out=$target/release/docs
rm -rf "$out"
"$target/release/elicitd" --generate-docs "$out/elicitd"
"$target/release/elicit" generate-docs "$out/elicitd"
"$target/release/elicit-tui" --generate-docs "$out/elicitd"
"$target/release/elicit-notify" --generate-docs "$out/elicitd"
if [ -x "$target/release/elicit-gtk" ]; then
  "$target/release/elicit-gtk" --generate-docs "$out/elicit-gtk"
fi
# -n: no name or time stamp inside, so the package is reproducible.
find "$out" -path '*/man1/*.1' -exec gzip -9n {} +
