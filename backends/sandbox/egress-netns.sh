#!/bin/sh
# Runs a command in a network namespace of its own whose one way out is slirp4netns (user-mode networking): the
# command can open connections to the internet (a model hub), never to the host. Inside the namespace 127.0.0.0/8 is
# its own empty loopback; slirp4netns runs with --disable-host-loopback, so its gateway (10.0.2.2) does not lead to
# the host's loopback; and every address in BLACKHOLES (the host's own, link-local and metadata ranges, the stack's
# servers) is a blackhole route, added before the command starts and out of its reach (the command holds no
# capability over this namespace). Used by backends/sandbox/egress-network.ts for `trainer.network: true`.
#   egress-netns.sh USERNS BLACKHOLES -- ARGV...
#   USERNS 1: make a user namespace too (a worker that is not root); 0: the worker is root.
set -u
PATH=/usr/sbin:/usr/bin:/sbin:/bin:${PATH:-}
userns=$1
holes=$2
shift 2
[ "${1-}" = "--" ] && shift
dir=$(mktemp -d "${TMPDIR:-/tmp}/fw-egress-XXXXXX") || exit 70
trap 'rm -rf "$dir"' EXIT
mkfifo "$dir/go.up" "$dir/go" "$dir/ready" || exit 70

# The namespace's first process: says it is in its namespace, waits for "go" (slirp4netns is up), adds the
# blackholes, becomes the command.
inner='echo up >"$1.up" || exit 71
read -r go <"$1" || exit 71
[ "$go" = go ] || exit 71
holes=$2
shift 2
ip link set lo up || exit 71
for a in $holes; do ip route add blackhole "$a" || exit 71; done
exec "$@"'
if [ "$userns" = 1 ]; then
  unshare --user --map-root-user --net -- /bin/sh -c "$inner" egress "$dir/go" "$holes" "$@" &
else
  unshare --net -- /bin/sh -c "$inner" egress "$dir/go" "$holes" "$@" &
fi
child=$!
# Held open read-write, so neither side's open of the FIFO waits for the other.
exec 3<>"$dir/go"
# slirp4netns joins the namespace of $child: only once $child is in it, never the host's.
if ! read -r _ <"$dir/go.up"; then
  echo "egress network: the namespace did not start" >&2
  exit 71
fi
if [ "$userns" = 1 ]; then
  slirp4netns --configure --mtu=65520 --disable-host-loopback --ready-fd=4 \
    --userns-path="/proc/$child/ns/user" --netns-type=path "/proc/$child/ns/net" tap0 4>"$dir/ready" >/dev/null 2>&1 &
else
  slirp4netns --configure --mtu=65520 --disable-host-loopback --ready-fd=4 "$child" tap0 4>"$dir/ready" >/dev/null 2>&1 &
fi
slirp=$!
# slirp4netns writes "1" (no newline) to its ready fd once the tap device is up; nothing if it failed.
ready=
read -r ready <"$dir/ready"
if [ "$ready" = 1 ]; then
  echo go >&3
else
  echo "egress network: slirp4netns did not start (is /dev/net/tun usable here?)" >&2
  echo stop >&3
fi
wait "$child"
code=$?
kill "$slirp" 2>/dev/null
exit "$code"
