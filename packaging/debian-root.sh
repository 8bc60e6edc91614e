# Sourced by bash scripts that run as root (check-install.sh,
# fresh-root.sh): a clean Debian minbase root from debootstrap, with proc,
# dev, dev/pts and sys (with its cgroup hierarchy) mounted, torn down when
# the script exits.
#
#   . packaging/debian-root.sh
#   debian_root SUITE CACHE   # sets $root; then in_root COMMAND…
#
# The bootstrapped root is cached as CACHE/SUITE-minbase.tar.gz, and apt's
# downloads in CACHE/archives (bound into the root), so that a rerun takes
# seconds instead of minutes. The caller defines die(). DEBIAN_MIRROR
# overrides the mirror.

root=""
debian_root_mounts=()

# Unmounts what debian_root mounted and removes the root; whatever still
# runs in the root goes first (a daemon a session left, a build).
debian_root_cleanup() {
  [ -n "$root" ] || return 0
  local pid i
  for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    if [ "$(readlink "/proc/$pid/root" 2>/dev/null)" = "$root" ]; then kill -9 "$pid" 2>/dev/null || true; fi
  done
  for ((i = ${#debian_root_mounts[@]} - 1; i >= 0; i--)); do
    umount -R "${debian_root_mounts[i]}" || umount -R -l "${debian_root_mounts[i]}" ||
      echo "debian-root: cannot unmount ${debian_root_mounts[i]}" >&2
  done
  rm -rf --one-file-system "$root"
  root=""
  # A later debian_root (check-apt-orders.sh makes several) starts afresh.
  debian_root_mounts=()
}

debian_root() {
  local suite=$1 cache=$2 fresh fs
  local mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
  [ "$(id -u)" -eq 0 ] || die "run as root (debootstrap, chroot, mount)"
  command -v debootstrap >/dev/null || die "debootstrap is missing (apt-get install debootstrap)"
  mkdir -p "$cache/archives/partial"
  if [ ! -f "$cache/$suite-minbase.tar.gz" ]; then
    fresh=$(mktemp -d /var/tmp/elicitd-bootstrap.XXXXXX)
    debootstrap --variant=minbase "$suite" "$fresh" "$mirror" >"$cache/debootstrap-$suite.log" 2>&1 ||
      { tail -n 20 "$cache/debootstrap-$suite.log"; rm -rf "$fresh"; die "debootstrap $suite"; }
    tar -C "$fresh" -czf "$cache/$suite-minbase.tar.gz.part" .
    mv "$cache/$suite-minbase.tar.gz.part" "$cache/$suite-minbase.tar.gz"
    rm -rf "$fresh"
  fi
  root=$(mktemp -d /var/tmp/elicitd-root.XXXXXX)
  trap debian_root_cleanup EXIT
  # The root is a mount point of its own, as a machine's / is (the
  # sandbox tests look for one).
  mount --bind "$root" "$root"
  debian_root_mounts+=("$root")
  tar -C "$root" -xzf "$cache/$suite-minbase.tar.gz"
  # The tarball's "./" keeps mktemp's 0700, which would lock users out.
  chmod 755 "$root"
  for fs in proc sys dev dev/pts; do
    case $fs in
      proc) mount -t proc proc "$root/proc" ;;
      # Recursive, with the cgroup hierarchy below it (the sandbox tests
      # make a snap's cgroup); a slave, so that unmounting it in the root
      # leaves the machine's own mounts alone.
      sys) mount --rbind /sys "$root/sys" && mount --make-rslave "$root/sys" ;;
      dev) mount --bind /dev "$root/dev" ;;
      dev/pts) mount --bind /dev/pts "$root/dev/pts" ;;
    esac
    debian_root_mounts+=("$root/$fs")
  done
  mount --bind "$cache/archives" "$root/var/cache/apt/archives"
  debian_root_mounts+=("$root/var/cache/apt/archives")
  cp /etc/resolv.conf "$root/etc/resolv.conf"
}

# Runs a command in the root with a clean environment.
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 "$@"; }
