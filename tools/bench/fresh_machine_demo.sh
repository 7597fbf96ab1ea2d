#!/usr/bin/env bash
# Times a fresh clone's `./nanotick demo` on a fresh Debian 12 machine: a
# minimal bookworm chroot made by debootstrap (nothing installed: no
# compiler, no Python), this repository cloned into it, then `./nanotick
# demo` run there as root with no terminal. Prints each stage's line and the
# total; the demo's whole output goes to OUT (default /tmp/fresh_demo.out).
#
# usage: tools/bench/fresh_machine_demo.sh [WORKDIR] [OUT]     (as root; needs debootstrap)
#
# The chroot shares the host's kernel, network and CPUs (so the load on the
# host counts). Where the machine reaches package registries through a proxy
# with its own CA, the host's CA bundle and /etc/pip.conf are copied in so
# that pip can verify it, as on any machine of that network.
set -euo pipefail
work="${1:-/tmp/nanotick-fresh}"
out="${2:-/tmp/fresh_demo.out}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
[[ "$(id -u)" -eq 0 ]] || { echo "fresh_machine_demo: run as root (chroot, mount)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "fresh_machine_demo: apt-get install debootstrap first" >&2; exit 2; }
base="$work/base" run="$work/run"
cleanup() { umount -R "$run/proc" "$run/sys" "$run/dev" 2>/dev/null || true; }
trap cleanup EXIT
if [[ ! -x "$base/bin/bash" ]]; then
  echo "debootstrap --variant=minbase bookworm $base (once; not timed)"
  debootstrap --variant=minbase bookworm "$base" http://deb.debian.org/debian >"$work.debootstrap.log" 2>&1
fi
cleanup
rm -rf "$run"
cp -a "$base" "$run"
cp /etc/resolv.conf "$run/etc/resolv.conf"
env_extra=()
if [[ -f /etc/ssl/certs/ca-certificates.crt ]]; then
  cp /etc/ssl/certs/ca-certificates.crt "$run/etc/ssl-host-ca.crt"
  env_extra+=(PIP_CERT=/etc/ssl-host-ca.crt SSL_CERT_FILE=/etc/ssl-host-ca.crt)
fi
[[ -f /etc/pip.conf ]] && cp /etc/pip.conf "$run/etc/pip.conf"
mount -t proc proc "$run/proc"
mount --rbind /sys "$run/sys"
mount --rbind /dev "$run/dev"
git clone -q "$root" "$run/root/nanotick"
start=$SECONDS
set +e
chroot "$run" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin TERM=dumb \
  "${env_extra[@]}" bash -c 'cd /root/nanotick && ./nanotick demo' </dev/null >"$out" 2>&1
rc=$?
set -e
grep '^nanotick: ' "$out" | grep -v 'build release: [0-9]' || true
echo "fresh_machine_demo: exit $rc, $((SECONDS - start)) s from the clone to the demo's summary (output: $out)"
exit $rc
