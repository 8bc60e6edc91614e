#!/bin/sh
# Generates the man pages (gzipped, as Debian policy wants them) and shell
# completions that `cargo deb` packages, from the release binaries
# themselves, into TARGET/PROFILE/docs/PACKAGE. cargo-deb compresses man
# pages only when they come from outside the target directory, hence the
# gzip here.
#
#   packaging/debian-docs.sh [TARGET [PROFILE [BIN]]]
#
# (default: $CARGO_TARGET_DIR or target, release, TARGET/PROFILE). BIN is
# where elicitd, elicit, elicit-tui and elicit-notify are: the multi-call
# binary's names for the package (build-debs.sh), the profile's folder
# for the four separate binaries. elicit-gtk is always TARGET/PROFILE's.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
target=${1:-${CARGO_TARGET_DIR:-$here/../target}}
profile=${2:-release}
bin=${3:-$target/$profile}
out=$target/$profile/docs
rm -rf "$out"
"$bin/elicitd" --generate-docs "$out/elicitd"
"$bin/elicit" generate-docs "$out/elicitd"
"$bin/elicit-tui" --generate-docs "$out/elicitd"
"$bin/elicit-notify" --generate-docs "$out/elicitd"
if [ -x "$target/$profile/elicit-gtk" ]; then
  "$target/$profile/elicit-gtk" --generate-docs "$out/elicit-gtk"
fi
# -n: no name or time stamp inside, so the package is reproducible.
find "$out" -path '*/man1/*.1' -exec gzip -9n {} +
