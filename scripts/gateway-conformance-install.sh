#!/bin/sh
# gateway-conformance-install.sh: installs the official gateway test suite,
# github.com/ipfs/gateway-conformance $GWC_VERSION (v0.13.1), once, into
# $GWC_CACHE ($HOME/.cache/cairn-gwconformance/<version>):
#
#	src/                     the module's source; the command runs
#	                         `go test ./tests` there at run time
#	                         (GATEWAY_CONFORMANCE_HOME points at it)
#	gateway-conformance      its command, built from src/
#
# The source is the Go module proxy's copy of the release (go mod download;
# nothing is committed). Where the proxy refuses the module, a copy of the
# release's tree given in GATEWAY_CONFORMANCE_SRC is used instead (its
# go.mod must name the module); the build then fetches only the suite's
# dependencies from the proxy. The test package is compiled once here, so
# that the run (scripts/gwconformance, inside a network namespace) only
# links it. Run it with GO=golock where builds share a lock. Exit status 3:
# the proxy did not serve the module and no GATEWAY_CONFORMANCE_SRC was
# given (.ci/run reports that as blocked).
set -eu
GO=${GO:-go}
V=${GWC_VERSION:-v0.13.1}
MOD=github.com/ipfs/gateway-conformance
DIR=${GWC_CACHE:-$HOME/.cache/cairn-gwconformance/$V}
if [ -x "$DIR/gateway-conformance" ] && [ -f "$DIR/src/go.mod" ] && [ -f "$DIR/.tests-built" ]; then
	exit 0
fi
mkdir -p "$DIR"
if [ ! -f "$DIR/src/go.mod" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	src=$(cd "$tmp" && $GO mod download -json "$MOD@$V" 2>/dev/null | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p') || true
	if [ -z "$src" ]; then
		if [ -z "${GATEWAY_CONFORMANCE_SRC:-}" ]; then
			echo "gateway-conformance-install.sh: the Go module proxy did not serve $MOD@$V" >&2
			(cd "$tmp" && $GO mod download -json "$MOD@$V" | sed -n 's/^[[:space:]]*"Error": //p') >&2 || true
			echo "set GATEWAY_CONFORMANCE_SRC to a copy of the $V release's tree to build from it" >&2
			exit 3
		fi
		src=$GATEWAY_CONFORMANCE_SRC
		if ! grep -q "^module $MOD\$" "$src/go.mod" 2>/dev/null; then
			echo "gateway-conformance-install.sh: $src/go.mod is not module $MOD" >&2
			exit 1
		fi
		echo "building $MOD from $src (the proxy refused $V)" >&2
	fi
	rm -rf "$DIR/src.new"
	cp -R "$src" "$DIR/src.new"
	chmod -R u+w "$DIR/src.new"
	mv "$DIR/src.new" "$DIR/src"
fi
cd "$DIR/src"
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod -buildvcs=false"
if [ ! -x "$DIR/gateway-conformance" ]; then
	echo "building gateway-conformance $V into $DIR (once)" >&2
	$GO build -trimpath -ldflags "-X $MOD/tooling.Version=$V" -o "$DIR/gateway-conformance" ./cmd/gateway-conformance
fi
# The test package and test2json, compiled into the build cache.
$GO test -c -o /dev/null ./tests
$GO build -o /dev/null cmd/test2json
touch "$DIR/.tests-built"
