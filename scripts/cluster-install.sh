#!/bin/sh
# cluster-install.sh: installs ipfs-cluster-service and ipfs-cluster-ctl
# v1.1.6 for make test-fleet, once, into
# $HOME/.cache/cairn-fleet/ipfs-cluster-v1.1.6 (built from the Go module
# proxy; never committed).
#
# It tries `go install ...@v1.1.6` first; when the proxy refuses the
# module's version list (which go install reads to check for deprecation)
# it builds from `go mod download`'s copy of the release instead, as
# scripts/bench-kubo.sh does for Kubo.
set -eu
GO=${GO:-go}
V=v1.1.6
M=github.com/ipfs-cluster/ipfs-cluster
DIR=${CLUSTER_DIR:-$HOME/.cache/cairn-fleet/ipfs-cluster-$V}
if [ -x "$DIR/ipfs-cluster-service" ] && [ -x "$DIR/ipfs-cluster-ctl" ]; then
	exit 0
fi
mkdir -p "$DIR"
echo "building IPFS Cluster $V into $DIR (several minutes, once)" >&2
if GOBIN="$DIR" GOFLAGS=-buildvcs=false $GO install -trimpath \
	"$M/cmd/ipfs-cluster-service@$V" "$M/cmd/ipfs-cluster-ctl@$V"; then
	exit 0
fi
echo "cluster-install.sh: go install failed; building from go mod download" >&2
src=$($GO mod download -json "$M@$V" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$src" ] || { echo "cluster-install.sh: go mod download $M@$V failed" >&2; exit 1; }
cd "$src"
GOBIN="$DIR" GOFLAGS=-buildvcs=false $GO install -trimpath ./cmd/ipfs-cluster-service ./cmd/ipfs-cluster-ctl
