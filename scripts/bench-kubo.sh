#!/bin/sh
# bench-kubo.sh: installs Kubo v0.42.0 for the benchmarks, once, into
# $HOME/.cache/cairn-bench/kubo-v0.42.0 (ipfs for this machine and
# linux_arm64/ipfs for the size figure). Never committed.
#
# It builds from the module proxy's copy of the release (go mod download)
# rather than `go install github.com/ipfs/kubo/cmd/ipfs@v0.42.0`, which
# gives the same binary but fails when the proxy refuses the module's
# version list (which go install reads to check for deprecation).
set -eu
GO=${GO:-go}
V=v0.42.0
DIR=${KUBO_DIR:-$HOME/.cache/cairn-bench/kubo-$V}
if [ -x "$DIR/ipfs" ] && [ -x "$DIR/linux_arm64/ipfs" ]; then
	exit 0
fi
src=$($GO mod download -json "github.com/ipfs/kubo@$V" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$src" ] || { echo "bench-kubo.sh: go mod download github.com/ipfs/kubo@$V failed" >&2; exit 1; }
cd "$src"
mkdir -p "$DIR/linux_arm64"
if [ ! -x "$DIR/ipfs" ]; then
	echo "building Kubo $V into $DIR (several minutes, once)" >&2
	GOBIN="$DIR" GOFLAGS=-buildvcs=false $GO install -trimpath ./cmd/ipfs
fi
if [ ! -x "$DIR/linux_arm64/ipfs" ]; then
	echo "building Kubo $V for linux/arm64 (size figure; once)" >&2
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 GOFLAGS=-buildvcs=false \
		$GO build -trimpath -ldflags "-s -w" -o "$DIR/linux_arm64/ipfs" ./cmd/ipfs
fi
