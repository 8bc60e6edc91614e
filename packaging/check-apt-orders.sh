#!/bin/bash
# CI (as root), from check-install.sh: the two Debian packages choose a
# session bus without systemd however an administrator names them. Each way
# runs in a fresh clean Debian 12 root (debootstrap --variant=minbase
# bookworm, which has no session bus and no systemd):
#
#   1. apt-get install ./elicitd_*.deb ./elicit-gtk_*.deb   (the docs' order)
#   2. apt-get install ./elicit-gtk_*.deb ./elicitd_*.deb   (the other one)
#   3. apt-get install ./*.deb                               (a glob: elicit-gtk first)
#   4. apt-get install ./elicit-gtk_*.deb                    (alone; elicitd from a repository)
#
# and fails if apt added systemd, systemd-sysv, libpam-systemd or
# dbus-user-session, or no dbus-x11. One line per way says what apt added.
#
#   packaging/check-apt-orders.sh ELICITD.deb ELICIT-GTK.deb
#
# Only the packages' control fields matter here, so packages built with the
# same Depends and no payload check the same thing in seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
daemon_deb=$(realpath "$1")
gtk_deb=$(realpath "$2")
cache=$PWD/target/debian-roots
daemon=$(basename "$daemon_deb")
gtk=$(basename "$gtk_deb")

die() { echo "check-apt-orders: FAILED: $*" >&2; exit 1; }
. packaging/debian-root.sh

# A flat repository in the root holding elicitd, for the way that names
# elicit-gtk alone (as if elicitd came from the distribution).
local_repository() {
  local repo=$root/srv/elicitd-repo
  mkdir -p "$repo"
  cp "$daemon_deb" "$repo/"
  {
    # The control file, without the blank line that ends it in a package.
    dpkg-deb --field "$daemon_deb" | sed '/^$/d'
    echo "Filename: ./$daemon"
    echo "Size: $(stat -c %s "$daemon_deb")"
    echo "SHA256: $(sha256sum "$daemon_deb" | cut -d' ' -f1)"
    echo
  } >"$repo/Packages"
  {
    echo "Suite: local"
    echo "Codename: local"
    echo "Date: $(date -u -R)"
    echo "SHA256:"
    echo " $(sha256sum "$repo/Packages" | cut -d' ' -f1) $(stat -c %s "$repo/Packages") Packages"
  } >"$repo/Release"
  echo "deb [trusted=yes] file:/srv/elicitd-repo ./" >"$root/etc/apt/sources.list.d/elicitd.list"
}

# WAY NAME, then the file names apt-get install gets in /tmp/debs.
try() {
  local way=$1 before added unwanted
  shift
  debian_root bookworm "$cache"
  mkdir -p "$root/tmp/debs"
  cp "$daemon_deb" "$gtk_deb" "$root/tmp/debs/"
  [ "$way" != "elicit-gtk alone" ] || local_repository
  in_root apt-get update -qq || die "$way: apt-get update in the root"
  before=$(mktemp)
  in_root dpkg-query -W -f '${Package}\n' | sort >"$before"
  # Through sh, so that a glob is expanded as a shell expands it.
  in_root sh -c "cd /tmp/debs && apt-get install -y -qq $*" >"$root/tmp/apt.log" 2>&1 ||
    { tail -n 20 "$root/tmp/apt.log"; die "$way: apt-get install $*"; }
  added=$(in_root dpkg-query -W -f '${Package}\n' | sort | comm -13 "$before" -)
  rm -f "$before"
  echo "$way (apt-get install $*): apt added $(echo "$added" | wc -l) packages"
  for unwanted in systemd systemd-sysv libpam-systemd dbus-user-session; do
    if echo "$added" | grep -qx "$unwanted"; then die "$way: apt-get install $* pulled in $unwanted"; fi
  done
  echo "$added" | grep -qx dbus-x11 || die "$way: no dbus-x11: which session bus did apt choose?"
  echo "$added" | grep -qx elicitd || die "$way: elicitd was not installed"
  echo "$added" | grep -qx elicit-gtk || die "$way: elicit-gtk was not installed"
  debian_root_cleanup
}

try "the docs' order" "./$daemon" "./$gtk"
try "the other order" "./$gtk" "./$daemon"
try "a glob" './*.deb'
try "elicit-gtk alone" "./$gtk"
echo "apt orders ok: no systemd whatever the order"
