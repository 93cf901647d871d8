#!/bin/sh
# bench-kubo.sh: installs a Kubo release for the benchmarks, once, into
# $HOME/.cache/cairn-bench/kubo-$KUBO_VERSION: ipfs for this machine and,
# unless KUBO_ARM64=0, linux_arm64/ipfs for the size figure of make bench.
# KUBO_VERSION is v0.43.1 (the reference, internal/daemon.KuboVersion)
# unless set.
# Never committed.
#
# v0.42.0 builds from the module proxy's copy of the release (go mod
# download) rather than `go install github.com/ipfs/kubo/cmd/ipfs@v0.42.0`,
# which gives the same binary but fails when the proxy refuses the module's
# version list (which go install reads to check for deprecation).
#
# Later releases cannot be built inside their own module: v0.43.1's go.mod
# replaces go-libp2p with a fork the proxy refuses. They build from a
# throwaway module (a temporary directory) that requires the release and
# builds github.com/ipfs/kubo/cmd/ipfs, with replaces of its own that pin
# the QUIC modules to versions go-libp2p's release builds with (listed per
# release below); `ipfs version` then names the release.
set -eu
GO=${GO:-go}
V=${KUBO_VERSION:-v0.43.1}
ARM64=${KUBO_ARM64:-1}
DIR=${KUBO_DIR:-$HOME/.cache/cairn-bench/kubo-$V}
if [ -x "$DIR/ipfs" ] && { [ "$ARM64" = 0 ] || [ -x "$DIR/linux_arm64/ipfs" ]; }; then
	exit 0
fi
if [ "$V" = v0.42.0 ]; then
	src=$($GO mod download -json "github.com/ipfs/kubo@$V" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[ -n "$src" ] || { echo "bench-kubo.sh: go mod download github.com/ipfs/kubo@$V failed" >&2; exit 1; }
	cd "$src"
	pkg=./cmd/ipfs
else
	case $V in
	v0.43.1)
		replaces="github.com/quic-go/webtransport-go=github.com/quic-go/webtransport-go@v0.11.1
github.com/quic-go/quic-go=github.com/quic-go/quic-go@v0.60.0" ;;
	*)
		echo "bench-kubo.sh: no build recipe for Kubo $V (v0.42.0 and v0.43.1 have one)" >&2
		exit 1 ;;
	esac
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	cd "$tmp"
	$GO mod init cairn-bench-kubo >/dev/null 2>&1
	$GO mod edit -require="github.com/ipfs/kubo@$V"
	for r in $replaces; do
		$GO mod edit -replace="$r"
	done
	pkg=github.com/ipfs/kubo/cmd/ipfs
	export GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod"
fi
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-buildvcs=false"
mkdir -p "$DIR"
if [ ! -x "$DIR/ipfs" ]; then
	echo "building Kubo $V into $DIR (several minutes, once)" >&2
	$GO build -trimpath -o "$DIR/ipfs" "$pkg"
fi
if [ "$ARM64" != 0 ] && [ ! -x "$DIR/linux_arm64/ipfs" ]; then
	echo "building Kubo $V for linux/arm64 (size figure; once)" >&2
	mkdir -p "$DIR/linux_arm64"
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 \
		$GO build -trimpath -ldflags "-s -w" -o "$DIR/linux_arm64/ipfs" "$pkg"
fi
