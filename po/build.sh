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
  mkdir -p "$dir/$lang/LC_MESSAGES"
  msgfmt --check --output-file="$dir/$lang/LC_MESSAGES/elicitd.mo" "$here/$lang.po"
done
