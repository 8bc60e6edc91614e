#!/bin/sh
# Builds the two Debian packages: elicitd (the broker, `elicit`,
# elicit-tui, elicit-notify: one multi-call binary) and elicit-gtk, with cargo-deb (pinned 3.8.0,
# `cargo install cargo-deb --locked --version 3.8.0`), into target/debian.
#
#   packaging/build-debs.sh
#
# The Maintainer is whoever builds the packages, the Debian way: DEBFULLNAME
# and DEBEMAIL, else git's user.name and user.email, else the author of the
# checked-out commit. The project has no address of its own to put there.
# Needs libgtk-4-dev (elicit-gtk), dpkg-dev (dpkg-shlibdeps) and gettext
# (msgfmt, for the translations).
set -eu
cd "$(dirname "$0")/.."

name=${DEBFULLNAME:-$(git config user.name 2>/dev/null || git log -1 --format=%an 2>/dev/null || true)}
email=${DEBEMAIL:-$(git config user.email 2>/dev/null || git log -1 --format=%ae 2>/dev/null || true)}
if [ -z "$name" ] || [ -z "$email" ]; then
  echo "build-debs.sh: no maintainer: set DEBFULLNAME and DEBEMAIL" >&2
  exit 1
fi
maintainer="$name <$email>"

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
[ -n "$version" ] || { echo "build-debs.sh: no version in Cargo.toml" >&2; exit 1; }

# The dist profile (Cargo.toml): smaller binaries than release. elicitd,
# elicit, elicit-tui and elicit-notify are one multi-call binary
# (packaging/multicall) in the package: /usr/bin/elicitd, and the other
# three names symlinks to it. Four binaries carried tokio, zbus, serde and
# clap four times (48 MB installed).
cargo build --profile dist --locked -p elicit-multicall -p elicit-gtk --bins
bin=target/dist/multicall
rm -rf "$bin"
mkdir -p "$bin"
cp target/dist/elicit-multicall "$bin/elicitd"
for name in elicit elicit-tui elicit-notify; do
  ln -s elicitd "$bin/$name"
done
packaging/debian-docs.sh target dist "$bin"
# The translation catalogues (msgfmt, Debian package gettext).
po/build.sh target/dist/locale

# The Debian changelog (cargo-deb gzips it into changelog.Debian.gz): one
# entry per build, dated by the commit so that a rebuild is identical.
mkdir -p target/debian-meta
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
date=$(git log -1 --format=%aD 2>/dev/null || date -R)
cat >target/debian-meta/changelog <<CHANGES
elicitd ($version-1) unstable; urgency=medium

  * Built from the elicitd source at commit $commit.

 -- $maintainer  $date
CHANGES

rm -f target/debian/elicitd_*.deb target/debian/elicit-gtk_*.deb
# cargo-deb reads the assets' target/release/ as the profile's folder.
cargo deb -p elicitd --profile dist --no-build --maintainer "$maintainer"
cargo deb -p elicit-gtk --profile dist --no-build --maintainer "$maintainer"
ls -l target/debian/*.deb
