#!/usr/bin/env bash
# smoke-arm.sh: run the ARM release binaries under qemu-user and check
# that a board node works end to end, on loopback only:
#
#   init --profile=test --board=pi-zero-2w, daemon --offline, add a random
#   file through the RPC (curl), cat it back through the RPC and through the
#   CLI, compare SHA-256, shutdown, exit 0, api file gone.
#
# The CIDs of the same file must agree across architectures. armv7 must
# note the 32-bit bound of its block index and leave StorageMax uncapped.
# qemu-user-static is installed with apt-get
# when missing (root, Debian).
#
#   scripts/smoke-arm.sh              # arm64 and armv7 (needs dist/, see make cross)
#   scripts/smoke-arm.sh armv6
set -euo pipefail
cd "$(dirname "$0")/.."
DIST=${DIST:-dist}
arches=${*:-arm64 armv7}

say() { echo "smoke-arm: $*"; }
die() {
	echo "smoke-arm: FAIL: $*" >&2
	exit 1
}

ensure_tool() { # command package
	command -v "$1" >/dev/null && return
	say "installing $2"
	local sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get install -y -q "$2" >/dev/null 2>&1 || {
		$sudo apt-get update -q >/dev/null
		$sudo apt-get install -y -q "$2" >/dev/null
	}
	command -v "$1" >/dev/null || die "$1 still missing after installing $2"
}
ensure_tool qemu-aarch64-static qemu-user-static
ensure_tool curl curl

work=$(mktemp -d)
daemon_pid=""
cleanup() {
	if [ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null; then
		kill -9 "$daemon_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

head -c $((3 * 1024 * 1024 + 12345)) /dev/urandom >"$work/input.bin"
want_sha=$(sha256sum <"$work/input.bin" | cut -d' ' -f1)
first_cid=""

for arch in $arches; do
	case "$arch" in
	arm64) qemu=qemu-aarch64-static ;;
	armv7 | armv6) qemu=qemu-arm-static ;;
	*) die "unknown arch $arch" ;;
	esac
	bin="$DIST/cairn-linux-$arch"
	[ -x "$bin" ] || die "$bin missing: run make cross"
	file "$bin" 2>/dev/null | grep -q 'statically linked' || [ ! -x /usr/bin/file ] || die "$bin is not static"
	cpu=""
	[ "$arch" = armv6 ] && cpu="-cpu arm1176"
	run() { "$qemu" $cpu "$bin" "$@"; }

	repo="$work/repo-$arch"
	export CAIRN_PATH="$repo"
	say "$arch: $(run version --commit 2>&1 | head -1)"

	out=$(run init --profile=test --board=pi-zero-2w) || die "$arch: init failed: $out"
	echo "$out" | grep -q '^board: pi-zero-2w' || die "$arch: init did not apply the board: $out"
	if [ "$arch" != arm64 ]; then
		echo "$out" | grep -q '^note: 32-bit ARM: the block index may take 768 MiB' || die "$arch: no 32-bit index note: $out"
		! grep -q '"StorageMax": "900MB"' "$repo/config" || die "$arch: StorageMax still capped at 900MB"
	fi

	run daemon --offline >"$work/daemon-$arch.log" 2>&1 &
	daemon_pid=$!
	for _ in $(seq 600); do
		[ -s "$repo/api" ] && break
		kill -0 "$daemon_pid" 2>/dev/null || die "$arch: daemon exited: $(cat "$work/daemon-$arch.log")"
		sleep 0.1
	done
	[ -s "$repo/api" ] || die "$arch: daemon not ready after 60 s: $(cat "$work/daemon-$arch.log")"
	grep -q 'Board profile: pi-zero-2w' "$work/daemon-$arch.log" || die "$arch: budget not applied"
	port=$(sed 's|.*/tcp/||' "$repo/api")
	url="http://127.0.0.1:$port/api/v0"

	start=$(date +%s.%N)
	resp=$(curl -sS -f -X POST -F "file=@$work/input.bin" "$url/add?quieter=true&pin=true") || die "$arch: add failed"
	cid=$(echo "$resp" | sed -n 's/.*"Hash":"\([^"]*\)".*/\1/p' | tail -1)
	[ -n "$cid" ] || die "$arch: no CID in $resp"
	curl -sS -f -X POST "$url/cat?arg=$cid" -o "$work/cat-$arch.bin" || die "$arch: cat failed"
	end=$(date +%s.%N)
	got_sha=$(sha256sum <"$work/cat-$arch.bin" | cut -d' ' -f1)
	[ "$got_sha" = "$want_sha" ] || die "$arch: RPC cat returned different bytes ($got_sha != $want_sha)"
	cli_sha=$(run cat "$cid" | sha256sum | cut -d' ' -f1)
	[ "$cli_sha" = "$want_sha" ] || die "$arch: CLI cat through the daemon returned different bytes"
	if [ -z "$first_cid" ]; then first_cid=$cid; fi
	[ "$cid" = "$first_cid" ] || die "$arch: CID $cid differs from the first architecture's $first_cid"

	curl -sS -f -X POST "$url/shutdown" >/dev/null || die "$arch: shutdown request failed"
	code=0
	for _ in $(seq 300); do
		kill -0 "$daemon_pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$daemon_pid" 2>/dev/null && die "$arch: daemon still running 30 s after shutdown"
	wait "$daemon_pid" || code=$?
	daemon_pid=""
	[ "$code" -eq 0 ] || die "$arch: daemon exit code $code: $(cat "$work/daemon-$arch.log")"
	[ ! -e "$repo/api" ] || die "$arch: api file left behind"
	say "$arch: ok: add+cat of 3 MiB under qemu in $(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.1f", b-a}') s, CID $cid, SHA-256 matches, clean shutdown"
done
say "all passed ($arches)"
