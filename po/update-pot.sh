#!/bin/sh
# Regenerates po/elicitd.pot, the template of every string elicitd's own
# programs show (elicit-gtk, elicit-tui, elicit-notify, the elicit CLI's
# human-readable output and the form model they share), from the sources,
# with xgettext; then brings each po/LANG.po up to date with it (msgmerge).
#
#   po/update-pot.sh           rewrite the .pot and merge it into the .po files
#   po/update-pot.sh --check   change nothing; fail when the .pot is not what
#                              the sources give, or a .po lacks one of its
#                              strings (CI runs this)
#
# The strings are the first argument of tr() and fill()'s templates made by
# tr(), and the first two of trn() (elicit-i18n). xgettext 0.21 (Debian 12)
# has no Rust parser; its C one reads these calls right, provided that a
# marked string is one literal with no `\` line continuation. Locations are
# file names only, so that moving a line does not change the template.
set -eu
cd "$(dirname "$0")/.."
check=false
case "${1:-}" in
  --check) check=true ;;
  "") ;;
  *) echo "usage: po/update-pot.sh [--check]" >&2; exit 2 ;;
esac

sources=$(find frontends/form/src frontends/gtk/src frontends/tui/src frontends/notify/src \
  daemon/cli/src -name '*.rs' | LC_ALL=C sort)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
# shellcheck disable=SC2086 # one word per file
xgettext --language=C --from-code=UTF-8 --keyword= --keyword=tr --keyword=trn:1,2 \
  --add-comments=TRANSLATORS: --add-location=file --sort-by-file \
  --package-name=elicitd --package-version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)" \
  --msgid-bugs-address= \
  --copyright-holder="The elicitd developers" \
  --output="$work/elicitd.pot" $sources 2>"$work/log" || { cat "$work/log" >&2; exit 1; }
# The C scanner takes a Rust lifetime ('static) or a raw string for an
# unterminated literal and says so; no bug address is given (the project
# has none of its own). Nothing else it says is expected.
grep -v -e 'warning: unterminated' -e 'msgid-bugs-address' -e 'Makevars' -e 'MSGID_BUGS_ADDRESS' "$work/log" >&2 || true
# The creation date changes on every run; it says nothing about the strings.
strip_date() { grep -v '^"POT-Creation-Date:' "$1"; }

if $check; then
  if ! strip_date po/elicitd.pot | cmp -s - "$work/stripped" 2>/dev/null; then
    strip_date "$work/elicitd.pot" >"$work/stripped"
    if ! strip_date po/elicitd.pot | diff -u - "$work/stripped"; then
      echo "po/update-pot.sh: po/elicitd.pot is out of date with the sources: run po/update-pot.sh" >&2
      exit 1
    fi
  fi
  for lang in $(grep -v '^#' po/LINGUAS); do
    # Every string of the template is in the catalogue (translated or not:
    # the coverage test in tests/ says whether it is).
    msgcmp --use-untranslated "po/$lang.po" po/elicitd.pot ||
      { echo "po/update-pot.sh: po/$lang.po lacks strings of the .pot: run po/update-pot.sh" >&2; exit 1; }
  done
  echo "po/update-pot.sh: po/elicitd.pot and the catalogues are up to date"
  exit 0
fi

if [ -f po/elicitd.pot ] && strip_date po/elicitd.pot | cmp -s - "$(strip_date "$work/elicitd.pot" >"$work/stripped"; echo "$work/stripped")"; then
  echo "po/update-pot.sh: po/elicitd.pot unchanged"
else
  cp "$work/elicitd.pot" po/elicitd.pot
  echo "po/update-pot.sh: wrote po/elicitd.pot"
fi
for lang in $(grep -v '^#' po/LINGUAS); do
  if [ -f "po/$lang.po" ]; then
    msgmerge --quiet --update --backup=none --add-location=file --sort-by-file "po/$lang.po" po/elicitd.pot
    # A string gone from the sources goes from the catalogue too (history
    # has it).
    msgattrib --no-obsolete --add-location=file --sort-by-file --output-file="po/$lang.po" "po/$lang.po"
  else
    msginit --no-translator --locale="$lang" --input=po/elicitd.pot --output-file="po/$lang.po"
  fi
done
