#!/bin/sh
# CI: checks the Debian packages built by packaging/build-debs.sh: every file
# in its place, the unit and the D-Bus service file naming the installed
# binary, compressed man pages and changelog, the declared Depends covering
# what the binaries need (dpkg-shlibdeps over all of them together), and
# lintian with no error. Unpacks into a throwaway root; installs nothing.
#
#   packaging/check-deb.sh ELICITD.deb ELICIT-GTK.deb
set -eu
daemon_deb=$1
gtk_deb=$2
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT INT TERM
failed=0
fail() { echo "check-deb: $*" >&2; failed=1; }

for deb in "$daemon_deb" "$gtk_deb"; do
  dpkg-deb --info "$deb"
  dpkg-deb --contents "$deb"
done
dpkg-deb -x "$daemon_deb" "$root/elicitd"
dpkg-deb -x "$gtk_deb" "$root/elicit-gtk"

expect() {
  pkg=$1
  shift
  for file in "$@"; do
    [ -f "$root/$pkg/$file" ] || fail "$pkg lacks /$file"
  done
}
expect elicitd \
  usr/bin/elicitd usr/bin/elicit usr/bin/elicit-tui usr/bin/elicit-notify \
  usr/lib/systemd/user/elicitd.service usr/lib/systemd/user/elicitd.socket \
  usr/share/dbus-1/services/dev.elicitd.Broker.service \
  usr/share/elicitd/config.toml \
  usr/share/elicitd/rules.d/50-elicitd-defaults.rhai \
  usr/share/bash-completion/completions/elicit \
  usr/share/bash-completion/completions/elicitd \
  usr/share/bash-completion/completions/elicit-tui \
  usr/share/bash-completion/completions/elicit-notify \
  usr/share/zsh/vendor-completions/_elicit \
  usr/share/fish/vendor_completions.d/elicit.fish \
  usr/share/doc/elicitd/copyright usr/share/doc/elicitd/changelog.Debian.gz \
  usr/share/doc/elicitd/README.md usr/share/doc/elicitd/docs/configuration.md
for page in elicitd elicit elicit-ask elicit-answer elicit-status elicit-tui elicit-notify; do
  expect elicitd "usr/share/man/man1/$page.1.gz"
done
# Every language of po/LINGUAS, in the one text domain, in elicitd alone
# (elicit-gtk depends on it; two packages may not own one file).
for lang in $(grep -v '^#' "$(dirname "$0")/../po/LINGUAS"); do
  expect elicitd "usr/share/locale/$lang/LC_MESSAGES/elicitd.mo"
done
if [ -e "$root/elicit-gtk/usr/share/locale" ]; then
  fail "elicit-gtk carries translations, which belong to elicitd"
fi
expect elicit-gtk usr/bin/elicit-gtk usr/share/applications/dev.elicitd.Gtk.desktop \
  etc/xdg/autostart/dev.elicitd.Gtk-autostart.desktop \
  usr/share/man/man1/elicit-gtk.1.gz usr/share/doc/elicit-gtk/copyright \
  usr/share/doc/elicit-gtk/changelog.Debian.gz
if [ -e "$root/elicitd/usr/bin/elicit-gtk" ] || [ -e "$root/elicitd/usr/share/applications" ]; then
  fail "elicitd carries the GTK front-end, which belongs to elicit-gtk"
fi
uncompressed=$(find "$root" -path '*/man/*' -name '*.1' -print)
[ -z "$uncompressed" ] || fail "uncompressed man pages: $uncompressed"
# A page's NAME line is "NAME \- what it does", and what it does must not
# name the program again ("elicit \- elicit: ask, …" came from a crate
# description that began with its binary's name).
for page in $(find "$root" -path '*/man1/*.1.gz' -print); do
  name=$(basename "$page" .1.gz)
  line=$(zcat "$page" | sed -n '/^\.SH NAME/{n;p;q}' | sed 's/\\-/-/g')
  case $line in
    "$name - "?*) ;;
    *) fail "$name.1: the NAME line is not '$name - …': $line" ;;
  esac
  case ${line#"$name - "} in
    "$name"[:\ ]*) fail "$name.1 names itself twice: $line" ;;
  esac
done

grep -qx 'ExecStart=/usr/bin/elicitd --state-dir=${STATE_DIRECTORY}' \
  "$root/elicitd/usr/lib/systemd/user/elicitd.service" || fail "unit: wrong ExecStart"
grep -qx 'Exec=/usr/bin/elicitd' "$root/elicitd/usr/share/dbus-1/services/dev.elicitd.Broker.service" ||
  fail "D-Bus service: wrong Exec"

# The declared Depends of elicitd (written by hand, see daemon/Cargo.toml)
# must name every library the binary links, at least at the version
# dpkg-shlibdeps computes, and libc6 once.
depends=$(dpkg-deb --field "$daemon_deb" Depends)
echo "elicitd Depends: $depends"
[ "$(echo "$depends" | tr ',' '\n' | grep -c 'libc6 ')" -eq 1 ] || fail "libc6 is not named exactly once: $depends"
echo "$depends" | grep -q 'dbus-x11 | dbus-session-bus' || fail "no session bus dependency (dbus-x11 | dbus-session-bus)"
# The program names are one binary: elicitd, and symlinks to it.
for name in elicit elicit-tui elicit-notify; do
  [ "$(readlink "$root/elicitd/usr/bin/$name")" = elicitd ] || fail "/usr/bin/$name is not a symlink to elicitd"
done
[ -z "$(dpkg-deb --field "$daemon_deb" Recommends)" ] || fail "elicitd recommends something: it pulled systemd in before"
shlib=$(mktemp -d)
mkdir "$shlib/debian"
printf 'Source: elicitd\n\nPackage: elicitd\nArchitecture: any\n' >"$shlib/debian/control"
needed=$(cd "$shlib" && dpkg-shlibdeps -O "$root/elicitd/usr/bin/elicitd" 2>/dev/null |
  sed -n 's/^shlibs:Depends=//p')
rm -rf "$shlib"
echo "dpkg-shlibdeps: $needed"
[ -n "$needed" ] || fail "dpkg-shlibdeps computed nothing"
echo "$needed" | tr ',' '\n' | sed 's/^ *//' | while read -r lib op version; do
  version=${version%)}
  declared=$(echo "$depends" | tr ',' '\n' | sed 's/^ *//' | sed -n "s/^$lib (>= \(.*\))\$/\1/p")
  if [ -z "$declared" ]; then
    echo "check-deb: elicitd does not depend on $lib $op $version" >&2
    exit 1
  fi
  dpkg --compare-versions "$declared" ge "$version" ||
    { echo "check-deb: elicitd declares $lib (>= $declared), the binaries need $version" >&2; exit 1; }
done || failed=1
gtk_depends=$(dpkg-deb --field "$gtk_deb" Depends)
echo "elicit-gtk Depends: $gtk_depends"
# Its own session bus first, before GTK's (see frontends/gtk/Cargo.toml).
case $gtk_depends in
  "dbus-x11 | dbus-session-bus, "*) ;;
  *) fail "elicit-gtk's Depends does not begin with dbus-x11 | dbus-session-bus" ;;
esac

"$root/elicitd/usr/bin/elicit" --version

# lintian, as strictly as the issue asks: errors fail, every remaining
# warning is overridden with its reason (packaging/lintian/) or listed in
# packaging/LINTIAN.md.
for deb in "$daemon_deb" "$gtk_deb"; do
  lintian -EvIL +pedantic --fail-on error "$deb" || fail "lintian found errors in $deb"
done

[ "$failed" -eq 0 ] || exit 1
echo "debs ok: $daemon_deb $gtk_deb"
