#!/usr/bin/env bash
# Real hosts: three network namespaces (watch, phone, mac) joined by veth links, a node serving
# in each, entries synced across, the phone cut off, writes on both sides, the link restored,
# convergence checked. The mac is given no --peer: it finds the phone by LAN discovery (UDP
# broadcast, PROTOCOL.md §1.3); an untrusted node announcing beside the phone is listed by the
# mac, never dialled. Needs root and iproute2; otherwise it prints SKIP and exits 0.
#
# Usage: Tests/Network/namespaces.sh [path/to/lifesync]
# Addresses, and every discovery broadcast, live only inside the namespaces this script creates
# (10.77.1.0/30, 10.77.2.0/30): each namespace has its own network stack.
set -uo pipefail

LIFESYNC=${1:-${LIFESYNC_BINARY:-$(dirname "$0")/../../.build/debug/lifesync}}
LIFESYNC=$(realpath "$LIFESYNC")
tag="ls$$"
ns_watch="$tag-watch" ns_phone="$tag-phone" ns_mac="$tag-mac"
work=$(mktemp -d)
pids=()

skip() { echo "SKIP: $*"; exit 0; }
fail() { echo "FAIL: $*"; for f in "$work"/*.log; do echo "--- $f"; tail -n 30 "$f"; done; exit 1; }

[ "$(id -u)" -eq 0 ] || skip "network namespaces need root"
command -v ip >/dev/null || skip "iproute2 (ip) is not installed"
ip netns add "$tag-probe" 2>/dev/null || skip "this machine does not allow creating network namespaces"
ip netns del "$tag-probe"

cleanup() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
    sleep 0.3
    # Anything still running inside our namespaces goes too, whatever started it.
    for ns in "$ns_watch" "$ns_phone" "$ns_mac"; do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
        ip netns del "$ns" 2>/dev/null
    done
    rm -rf "$work"
}
trap cleanup EXIT

in_ns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

for ns in "$ns_watch" "$ns_phone" "$ns_mac"; do
    ip netns add "$ns" || fail "cannot create namespace $ns"
    in_ns "$ns" ip link set lo up
done
# watch <-> phone on 10.77.1.0/30, mac <-> phone on 10.77.2.0/30; the phone is the hub.
veth() { # name-a namespace-a name-b namespace-b; temporary names avoid clashes in the root namespace
    ip link add "$tag-a" type veth peer name "$tag-b" || fail "cannot create a veth pair"
    ip link set "$tag-a" netns "$2" && ip link set "$tag-b" netns "$4" || fail "cannot move veth into namespaces"
    in_ns "$2" ip link set "$tag-a" name "$1" && in_ns "$4" ip link set "$tag-b" name "$3" || fail "cannot rename veth"
}
veth vw-p "$ns_watch" vp-w "$ns_phone"
veth vm-p "$ns_mac" vp-m "$ns_phone"
in_ns "$ns_watch" ip addr add 10.77.1.2/30 dev vw-p
in_ns "$ns_phone" ip addr add 10.77.1.1/30 dev vp-w
in_ns "$ns_mac" ip addr add 10.77.2.2/30 dev vm-p
in_ns "$ns_phone" ip addr add 10.77.2.1/30 dev vp-m
for pair in "$ns_watch vw-p" "$ns_phone vp-w" "$ns_mac vm-p" "$ns_phone vp-m"; do
    set -- $pair; in_ns "$1" ip link set "$2" up
done

W="$work/watch.sqlite" P="$work/phone.sqlite" M="$work/mac.sqlite" S="$work/stranger.sqlite"
"$LIFESYNC" init --role watch --db "$W" >/dev/null && "$LIFESYNC" init --role phone --db "$P" >/dev/null \
    && "$LIFESYNC" init --role mac --db "$M" >/dev/null && "$LIFESYNC" init --role mac --db "$S" >/dev/null || fail "init"
phone_id=$("$LIFESYNC" id --json --db "$P" | sed -n 's/^  "node_id": "\([^"]*\)",*/\1/p')
stranger_id=$("$LIFESYNC" id --json --db "$S" | sed -n 's/^  "node_id": "\([^"]*\)",*/\1/p')
[ -n "$phone_id" ] && [ -n "$stranger_id" ] || fail "cannot read node IDs"
# Pair the three as a user would: each trusts the others' pairing strings.
for a in "$W" "$P" "$M"; do
    for b in "$W" "$P" "$M"; do
        [ "$a" = "$b" ] || "$LIFESYNC" trust "$("$LIFESYNC" id --db "$a")" --db "$b" >/dev/null || fail "pair $a with $b"
    done
done
"$LIFESYNC" add --db "$W" --category mood --metric mood=6 --scale 1..10 >/dev/null
"$LIFESYNC" add --db "$M" --category note --text "written on the mac" >/dev/null
"$LIFESYNC" add --db "$P" --category note --text "written on the phone" >/dev/null

serve() { # namespace db log args...
    local ns=$1 db=$2 log=$3; shift 3
    # ip execs lifesync in place, so $! is the node's own pid.
    ip netns exec "$ns" "$LIFESYNC" serve --db "$db" --reconnect-max-ms 1000 "$@" >"$log" 2>&1 </dev/null &
    pids+=($!)
}
# The mac listens on every interface and dials nobody: it learns the phone's address from the
# phone's announcement (sent at its start, which is why the mac starts first, then every 30 s).
serve "$ns_mac" "$M" "$work/mac.log" --listen 0.0.0.0:7001
wait_log() { # description, seconds, file, fixed text
    local deadline=$((SECONDS + $2))
    while [ $SECONDS -lt $deadline ]; do grep -qF -- "$4" "$3" 2>/dev/null && return 0; sleep 0.2; done
    fail "$1 did not happen within $2 s"
}
wait_log "the mac listening for announcements" 20 "$work/mac.log" "LAN discovery: announcing"
serve "$ns_phone" "$P" "$work/phone.log" --listen 0.0.0.0:7000
serve "$ns_phone" "$S" "$work/stranger.log" --listen 0.0.0.0:7009
serve "$ns_watch" "$W" "$work/watch.log" --peer 10.77.1.1:7000

entries() { "$LIFESYNC" status --db "$1" --json | sed -n 's/^  "entries": \([0-9]*\),*/\1/p'; }
hash_of() { "$LIFESYNC" status --hash --db "$1" --json | sed -n 's/^  "state_hash": "\([0-9a-f]*\)",*/\1/p'; }
wait_for() { # description, seconds, condition...
    local what=$1 limit=$2; shift 2
    local deadline=$((SECONDS + limit))
    while [ $SECONDS -lt $deadline ]; do "$@" && return 0; sleep 0.2; done
    fail "$what did not happen within $limit s"
}
converged() { [ "$(entries "$P")" = "$1" ] && [ "$(entries "$M")" = "$1" ] && [ "$(hash_of "$P")" = "$(hash_of "$M")" ]; }

wait_for "first convergence across hosts" 45 converged 3
echo "ok: 3 entries synced across three namespaces (watch -> phone -> mac relay included)"
grep -qF "discovered trusted peer ${phone_id:0:14} at 10.77.2.1:7000" "$work/mac.log" || fail "the mac did not find the phone by discovery"
grep -qF "connected to 10.77.2.1:7000" "$work/mac.log" || fail "the mac did not dial the discovered address"
echo "ok: the mac found the phone by LAN discovery (no --peer) and synced"
in_stranger_list() { "$LIFESYNC" peers --json --db "$M" | grep -qF "\"node_id\": \"$stranger_id\""; }
wait_for "the mac listing the untrusted announcer" 40 in_stranger_list
grep -qF "connected to 10.77.2.1:7009" "$work/mac.log" && fail "the mac dialled an untrusted node"
grep -qF "accepted connection" "$work/stranger.log" && fail "someone dialled the untrusted node"
grep -qF "LAN discovery off: this node does not listen" "$work/watch.log" || fail "the watch (no listener) should not run discovery"
echo "ok: an untrusted announcer is listed by the mac, never dialled"

in_ns "$ns_phone" ip link set vp-w down
in_ns "$ns_phone" ip link set vp-m down
"$LIFESYNC" add --db "$W" --category health --text "watch, phone unreachable" >/dev/null
"$LIFESYNC" add --db "$M" --category note --text "mac, phone unreachable" >/dev/null
"$LIFESYNC" add --db "$P" --category note --text "phone, cut off" >/dev/null
sleep 2
[ "$(entries "$M")" = "4" ] || fail "the mac received something while the phone's links were down"
echo "ok: phone's links down; wrote on the watch, the mac and the phone"

in_ns "$ns_phone" ip link set vp-w up
in_ns "$ns_phone" ip link set vp-m up
wait_for "convergence after the links came back" 90 converged 6
[ "$(entries "$W")" = "2" ] || fail "the watch should hold only its own 2 entries, holds $(entries "$W")"
echo "ok: links restored; phone and mac converged on 6 entries, hash $(hash_of "$P" | cut -c1-12)"
echo "1 passed, 0 failed"
