#!/bin/sh
# Compiles each po/LANG.po (po/LINGUAS) into DIR/LANG/LC_MESSAGES/elicitd.mo
# with msgfmt (Debian package gettext), checking its format strings and
# header.
#
#   po/build.sh [DIR]    (default: target/share/locale)
#
# Packages and install.sh put them under PREFIX/share/locale. A source
# build needs no such step: `cargo build` compiles the catalogues too
# (frontends/i18n/build.rs), and a program run from target/ finds them.
# The default is where such a program looks first (share/locale beside
# its bin/ directory; see elicit-i18n), to try msgfmt's output instead.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$here/../target/share/locale}
for lang in $(grep -v '^#' "$here/LINGUAS"); do
  out=$dir/$lang/LC_MESSAGES/elicitd.mo
  mkdir -p "$dir/$lang/LC_MESSAGES"
  # Written aside, then renamed: a program starting meanwhile (a test run
  # in parallel) reads the old catalogue or the new one, never half of one.
  msgfmt --check --output-file="$out.$$" "$here/$lang.po"
  mv -f "$out.$$" "$out"
done
