#!/bin/bash
# Runs the README's commands as a newcomer would, on a truly fresh machine:
# a clean Debian minbase root (debootstrap, packaging/debian-root.sh) with
# nothing but this machine's CA certificates and rustup's Rust copied in,
# a clone of this checkout's HEAD, and then, exactly as README.md writes
# it, command 1 (the build and the demo; the demo answered by
# packaging/scripted-demo.sh, there being nobody at the keyboard) or, with
# --tests, command 2. Each step is timed. Runs as root.
#
#   packaging/fresh-root.sh [--suite bookworm|trixie] [--tests] [--registry]
#
# --suite   the Debian release (default bookworm, Debian 12; trixie is 13)
# --tests   command 2 (`tests/setup && cargo test --workspace`) instead
# --registry  copies this machine's cargo registry (the crates' downloads,
#           not their builds) into the root, to spare the downloads; the
#           build is the root's own either way
#
# The bootstrapped root and apt's downloads are cached in
# target/debian-roots (shared with check-install.sh: one debootstrap per suite); the root itself is made anew and removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
suite=bookworm
command=1
registry=no
while [ $# -gt 0 ]; do
  case $1 in
    --suite) suite=$2; shift 2 ;;
    --tests) command=2; shift ;;
    --registry) registry=yes; shift ;;
    *) echo "usage: packaging/fresh-root.sh [--suite bookworm|trixie] [--tests] [--registry]" >&2; exit 2 ;;
  esac
done

die() { echo "fresh-root: FAILED: $*" >&2; exit 1; }
started=$SECONDS
timed() { # WHAT COMMAND…: runs COMMAND, then says how long it took
  local what=$1 from=$SECONDS status=0
  shift
  "$@" || status=$?
  printf 'fresh-root: %s: %s, %dm%02ds\n' "$suite" "$what" $(((SECONDS - from) / 60)) $(((SECONDS - from) % 60))
  [ "$status" -eq 0 ] || die "$what (exit $status)"
}

# The commands, as the README writes them (its comment left off).
readme_line() { grep -m 1 -E "$1" README.md | sed 's/[[:space:]]*#.*$//'; }
if [ "$command" = 1 ]; then
  line=$(readme_line '&& target/release/elicit demo')
  # The demo needs a terminal and a person; the build before it runs as
  # written, then the scripted demo with the binary that the line starts.
  case $line in
    *" && target/release/elicit demo") build=${line% && target/release/elicit demo} ;;
    *) die "README.md's command 1 does not end with target/release/elicit demo: $line" ;;
  esac
else
  line=$(readme_line '^tests/setup && cargo test')
fi
[ -n "$line" ] || die "README.md has no command $command"
echo "fresh-root: $suite: command $command: $line"

for tool in git chroot mount; do
  command -v "$tool" >/dev/null || die "$tool is missing"
done
[ -x /root/.cargo/bin/cargo ] || die "no rustup Rust in /root/.rustup and /root/.cargo"
. packaging/debian-root.sh
timed "a clean $suite root" debian_root "$suite" "$PWD/target/debian-roots"

# This machine's CA certificates: cargo's downloads may pass through a
# proxy that this machine trusts. The bundle itself (the root has no
# ca-certificates package), and the local ones, which ca-certificates'
# update-ca-certificates keeps when a later install brings it in.
mkdir -p "$root/usr/local/share/ca-certificates" "$root/etc/ssl"
cp -a /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/"
cp -a /etc/ssl/certs "$root/etc/ssl/"
if in_root sh -c 'command -v update-ca-certificates' >/dev/null; then
  in_root update-ca-certificates >/dev/null
fi

# Only rustup's Rust: the default toolchain, its settings and the proxies.
toolchain=$(RUSTUP_HOME=/root/.rustup /root/.cargo/bin/rustup default | cut -d' ' -f1)
mkdir -p "$root/root/.rustup/toolchains" "$root/root/.cargo"
cp -a /root/.rustup/settings.toml "$root/root/.rustup/"
cp -a "/root/.rustup/toolchains/$toolchain" "$root/root/.rustup/toolchains/"
cp -a /root/.cargo/bin "$root/root/.cargo/"
if [ "$registry" = yes ] && [ -d /root/.cargo/registry ]; then
  mkdir -p "$root/root/.cargo/registry"
  cp -a /root/.cargo/registry/index /root/.cargo/registry/cache "$root/root/.cargo/registry/"
fi
as_newcomer() { # COMMAND…: in the root, in the clone, as root with rustup's PATH
  chroot "$root" env -i HOME=/root USER=root LANG=C.UTF-8 TERM=dumb \
    PATH=/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    RUSTUP_HOME=/root/.rustup CARGO_HOME=/root/.cargo \
    ${CI:+CI=$CI} sh -c 'cd /root/elicitd && exec "$@"' sh "$@"
}
# A clone of what is committed here, as a newcomer's would be.
git clone -q --no-hardlinks "$PWD" "$root/root/elicitd"
git -C "$root/root/elicitd" log --oneline -1
as_newcomer sh -c 'which cargo rustc && cargo --version && rustc --version' ||
  die "rustup's cargo and rustc do not run in the root"
if as_newcomer sh -c 'command -v cc gcc dbus-daemon' >/dev/null 2>&1; then
  die "the fresh root already has a C compiler or dbus-daemon"
fi


before=$(in_root dpkg-query -W -f '${Package}\n' | sort)
if [ "$command" = 1 ]; then
  timed "command 1, the build: $build" as_newcomer sh -c "$build"
  timed "command 1, the demo (scripted)" as_newcomer packaging/scripted-demo.sh target/release/elicit
  added=$(in_root dpkg-query -W -f '${Package}\n' | sort | comm -13 <(echo "$before") -)
  echo "fresh-root: $suite: apt added $(echo "$added" | grep -c .) packages"
  # Once all is there, the set-up installs nothing and needs no apt.
  again=$(as_newcomer packaging/setup-build)
  echo "$again"
  case $again in *"nothing to install"*) ;; *) die "a second packaging/setup-build did something" ;; esac
else
  timed "command 2: $line" as_newcomer sh -c "$line"
fi
printf 'fresh-root: %s: ok, command %s in %dm%02ds all told\n' "$suite" "$command" \
  $(((SECONDS - started) / 60)) $(((SECONDS - started) % 60))
