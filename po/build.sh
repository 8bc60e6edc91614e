#!/bin/sh
# Compiles each po/LANG.po (po/LINGUAS) into DIR/LANG/LC_MESSAGES/elicitd.mo
# with msgfmt (Debian package gettext), checking its format strings and
# header.
#
#   po/build.sh [DIR]    (default: target/share/locale)
#
# The default is where a program built in target/debug or target/release
# looks (share/locale beside its bin/ directory; see elicit-i18n), so that
# `po/build.sh && LANG=de_DE.UTF-8 target/debug/elicit-tui` shows German.
# Packages and install.sh put them under PREFIX/share/locale.
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
