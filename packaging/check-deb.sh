#!/bin/sh
# CI: checks the Debian package built by `cargo deb -p elicitd --no-build`:
# every file in its place, and the unit and the D-Bus service file naming
# the installed binary. Unpacks into a throwaway root; installs nothing.
#
#   packaging/check-deb.sh PACKAGE.deb
set -eu
deb=$1
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT INT TERM

dpkg-deb --info "$deb"
dpkg-deb --contents "$deb"
dpkg-deb -x "$deb" "$root"

missing=0
for file in \
  usr/bin/elicitd usr/bin/elicit usr/bin/elicit-tui usr/bin/elicit-notify \
  usr/lib/systemd/user/elicitd.service \
  usr/share/dbus-1/services/dev.elicitd.Broker.service \
  usr/share/elicitd/config.toml \
  usr/share/elicitd/rules.d/50-elicitd-defaults.rhai \
  usr/share/bash-completion/completions/elicit \
  usr/share/bash-completion/completions/elicitd \
  usr/share/bash-completion/completions/elicit-tui \
  usr/share/bash-completion/completions/elicit-notify \
  usr/share/zsh/vendor-completions/_elicit \
  usr/share/fish/vendor_completions.d/elicit.fish; do
  if [ ! -f "$root/$file" ]; then echo "missing: /$file" >&2; missing=1; fi
done
# Man pages may be compressed by the packager.
for page in elicitd elicit elicit-ask elicit-answer elicit-tui elicit-notify; do
  if [ ! -f "$root/usr/share/man/man1/$page.1" ] && [ ! -f "$root/usr/share/man/man1/$page.1.gz" ]; then
    echo "missing: man page $page.1" >&2; missing=1
  fi
done
grep -qx 'ExecStart=/usr/bin/elicitd --state-dir=${STATE_DIRECTORY}' \
  "$root/usr/lib/systemd/user/elicitd.service" || { echo "unit: wrong ExecStart" >&2; missing=1; }
grep -qx 'Exec=/usr/bin/elicitd' "$root/usr/share/dbus-1/services/dev.elicitd.Broker.service" \
  || { echo "D-Bus service: wrong Exec" >&2; missing=1; }
"$root/usr/bin/elicit" --version
if [ "$missing" -ne 0 ]; then exit 1; fi
echo "deb ok: $deb"
