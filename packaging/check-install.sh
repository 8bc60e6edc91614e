#!/bin/bash
# CI (as root): installs both Debian packages with apt into a clean Debian 12
# root (debootstrap --variant=minbase bookworm, no systemd) with the plain
# `apt-get install ./elicitd_*.deb ./elicit-gtk_*.deb`, prints every
# package apt added and fails if systemd came with them (and first, with
# packaging/check-apt-orders.sh, the other order, a glob and elicit-gtk
# alone, each in a fresh root); then, as a
# normal user with dbus-launch sessions: D-Bus activation, `elicit ask`
# answered by `elicit answer`, a private state directory, the daemon leaving
# with its bus, a second session starting cleanly; then `apt-get purge`
# leaves nothing but the user's data. Also `systemd-analyze verify --user`
# of the installed unit. Any failed step stops the script with its name.
#
#   packaging/check-install.sh ELICITD.deb ELICIT-GTK.deb
#
# The bootstrapped root and apt's downloads are cached in
# target/debian-roots (packaging/debian-root.sh; fresh-root.sh shares it), so a rerun takes seconds
# instead of minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
daemon_deb=$(realpath "$1")
gtk_deb=$(realpath "$2")
cache=$PWD/target/debian-roots

step() { printf '\n== %s\n' "$*"; }
die() { echo "check-install: FAILED: $*" >&2; exit 1; }
command -v systemd-analyze >/dev/null || die "systemd-analyze is missing (apt-get install systemd)"
. packaging/debian-root.sh

step "a session bus without systemd, whatever the order the packages are named in"
# Four ways, each in a clean root of its own (check-apt-orders.sh).
packaging/check-apt-orders.sh "$daemon_deb" "$gtk_deb" || die "the packages in another order (above)"

step "a clean bookworm root"
debian_root bookworm "$cache"

step "apt-get install ./elicitd_*.deb ./elicit-gtk_*.deb, as an administrator types it"
cp "$daemon_deb" "$gtk_deb" "$root/tmp/"
in_root apt-get update -qq || die "apt-get update in the root"
before=$(mktemp)
in_root dpkg-query -W -f '${Package}\n' | sort >"$before"
# The plain command (Recommends too), with -y for the prompt. Nothing is
# installed first: elicitd's Depends must choose a session bus without
# systemd by itself (dbus-x11, see daemon/Cargo.toml).
in_root sh -c "cd /tmp && apt-get install -y -qq ./$(basename "$daemon_deb") ./$(basename "$gtk_deb")" >/dev/null ||
  die "apt-get install of the two packages"
added=$(in_root dpkg-query -W -f '${Package}\n' | sort | comm -13 "$before" -)
rm -f "$before"
# One line, which .ci/run's summary shows.
echo "packages apt added: $(echo "$added" | wc -l): $(echo "$added" | tr '\n' ' ')"
for unwanted in systemd systemd-sysv libpam-systemd dbus-user-session; do
  if echo "$added" | grep -qx "$unwanted"; then die "installing the packages pulled in $unwanted"; fi
done
echo "$added" | grep -qx dbus-x11 || die "no dbus-x11: which session bus did apt choose?"
in_root dpkg-query -W elicitd elicit-gtk

step "systemd-analyze verify --user of the installed unit"
# The root has no systemd, and the host's systemd-analyze takes no --root
# for user units: it verifies a copy of the installed unit whose ExecStart
# names the root's binary (the file name must stay elicitd.service).
unit_dir=$(mktemp -d)
runtime=$(mktemp -d)
sed "s|^ExecStart=/usr/bin/elicitd |ExecStart=$root/usr/bin/elicitd |" \
  "$root/usr/lib/systemd/user/elicitd.service" >"$unit_dir/elicitd.service"
grep -q "^ExecStart=$root/usr/bin/elicitd " "$unit_dir/elicitd.service" || die "the installed unit's ExecStart is not /usr/bin/elicitd"
verify=$(XDG_RUNTIME_DIR=$runtime systemd-analyze verify --user --man=no "$unit_dir/elicitd.service" 2>&1) ||
  die "systemd-analyze verify: $verify"
rm -rf "$unit_dir" "$runtime"
[ -z "$verify" ] || die "systemd-analyze verify complains: $verify"

step "a normal user's dbus-launch sessions"
in_root useradd --create-home --shell /bin/sh alice
# Every installed system has a machine id (systemd or dbus's postinst
# writes it); a bare debootstrap root may not, and dbus-launch needs one.
[ -s "$root/etc/machine-id" ] || in_root dbus-uuidgen --ensure=/etc/machine-id
cat >"$root/tmp/session.sh" <<'SESSION'
#!/bin/sh
# Runs as alice. Every wait is for a condition, with a deadline.
set -eu
die() { echo "check-install: FAILED: $*" >&2; exit 1; }
within() { # SECONDS WHAT COMMAND…: retries COMMAND every 0.1 s
  limit=$(($1 * 10)); what=$2; shift 2; n=0
  until "$@"; do
    n=$((n + 1)); [ "$n" -lt "$limit" ] || die "timed out waiting for $what"
    sleep 0.1
  done
}
gone() { # PID: exited (no process, or a zombie nobody reaped yet)
  [ ! -e "/proc/$1" ] || grep -q '^[0-9]* (.*) [ZX]' "/proc/$1/stat"
}
state=$HOME/.local/state/elicitd

echo "-- session 1"
eval "$(dbus-launch --sh-syntax)"
bus1=$DBUS_SESSION_BUS_PID
printf '%s' '{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}' >/tmp/ok.json
elicit ask --message "Go on?" --schema /tmp/ok.json --timeout 60 >/tmp/asked.json &
asker=$!
form() { elicit list --json | grep -o '"id": *"\{0,1\}[A-Za-z0-9-]*' | head -n 1 | sed 's/.*: *"\{0,1\}//'; }
has_form() { [ -n "$(form)" ]; }
within 20 "D-Bus activation to queue the form" has_form
elicit status || die "elicit status"
elicit status | grep -q "log: *$state/elicitd.log" || die "elicit status does not point to the log file"
# No display here: nothing shows the form, and status says so.
elicit status | grep -q "No front-end is running" || die "elicit status does not say that no front-end runs"
pid=$(cat "$state/elicitd.pid")
[ "$(readlink "/proc/$pid/exe")" = /usr/bin/elicitd ] || die "the activated daemon is not /usr/bin/elicitd"
elicit answer "$(form)" --accept '{"ok": true}' || die "elicit answer"
wait "$asker" || die "elicit ask exited $?"
grep -q '"action": *"accept"' /tmp/asked.json || die "elicit ask printed $(cat /tmp/asked.json)"
# `elicit proxy` starts its warden as /proc/self/exe named
# elicit-proxy-warden: the multi-call binary must answer to that name too.
warden=$(bash -c 'exec -a elicit-proxy-warden /usr/bin/elicitd __elicit-proxy-warden' 2>&1 || true)
case $warden in
  *"without its arguments"*) ;;
  *) die "the multi-call binary does not serve the proxy's warden: $warden" ;;
esac
[ "$(stat -c %a "$state")" = 700 ] || die "the state directory is $(stat -c %a "$state"), not 700"
[ "$(stat -c %a "$state/elicitd.log")" = 600 ] || die "the log file is not 600"
kill "$bus1"
within 20 "the daemon to leave with its bus" gone "$pid"
grep -q "stopping: its bus connection closed" "$state/elicitd.log" || die "the log does not say why the daemon stopped"

echo "-- session 2"
eval "$(dbus-launch --sh-syntax)"
elicit status || die "the second session's activation: $(tail -n 5 "$state/elicitd.log")"
pid2=$(cat "$state/elicitd.pid")
[ "$pid2" != "$pid" ] || die "the old daemon answered the new session"
kill "$DBUS_SESSION_BUS_PID"
within 20 "the second daemon to leave with its bus" gone "$pid2"
echo "sessions ok"
SESSION
chmod 755 "$root/tmp/session.sh"
alice=$(in_root id -u alice):$(in_root id -g alice)
chroot --userspec="$alice" "$root" env -i HOME=/home/alice USER=alice LANG=C.UTF-8 \
  PATH=/usr/bin:/bin /tmp/session.sh || die "the user's sessions (above)"

step "apt-get purge leaves nothing but the user's data"
files=$(in_root dpkg-query -L elicitd elicit-gtk | sort -u)
in_root apt-get purge -y -qq elicit-gtk elicitd >/dev/null || die "apt-get purge"
left=""
for file in $files; do
  # Directories shared with other packages (/usr/bin, …) stay, of course.
  if [ -e "$root$file" ] && [ ! -d "$root$file" ]; then left="$left $file"; fi
done
[ -z "$left" ] || die "purge left:$left"
for dir in /usr/share/elicitd /usr/share/doc/elicitd /usr/share/doc/elicit-gtk /etc/elicitd; do
  [ ! -e "$root$dir" ] || die "purge left $dir"
done
[ -f "$root/home/alice/.local/state/elicitd/elicitd.log" ] || die "purge removed the user's data"
echo "install ok: $(basename "$daemon_deb") $(basename "$gtk_deb")"
