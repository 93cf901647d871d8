#!/usr/bin/env bash
# cross.sh: static release binaries for the boards, into dist/.
#
# Builds CGO_ENABLED=0, -trimpath, stripped, with the commit baked in
# (cairn/node.Commit), for linux/arm64 (Pi 3/4/5/Zero 2 W on a 64-bit
# OS), linux/arm GOARM=7 (the same boards on a 32-bit OS), linux/arm
# GOARM=6 (Pi Zero W, Pi 1) and linux/amd64. Writes dist/SHA256SUMS, prints
# each size, then runs scripts/size-check.sh.
#
#   scripts/cross.sh            # all targets
#   scripts/cross.sh arm64 armv7
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
DIST=${DIST:-dist}
COMMIT=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
LDFLAGS="-s -w -X cairn/node.Commit=${COMMIT}"

# name GOARCH GOARM
ALL="arm64:arm64: armv7:arm:7 armv6:arm:6 amd64:amd64:"
want=${*:-arm64 armv7 armv6 amd64}

mkdir -p "$DIST"
for t in $ALL; do
	IFS=: read -r name arch arm <<<"$t"
	case " $want " in *" $name "*) ;; *) continue ;; esac
	out="$DIST/cairn-linux-$name"
	env CGO_ENABLED=0 GOOS=linux GOARCH="$arch" GOARM="$arm" \
		"$GO" build -trimpath -buildvcs=false -ldflags "$LDFLAGS" -o "$out" ./cmd/cairn
	awk -v f="$out" -v n="$(stat -c %s "$out")" 'BEGIN { printf "%-24s %9d bytes (%.1f MiB)\n", f, n, n / 1048576 }'
done
(cd "$DIST" && sha256sum cairn-linux-* >SHA256SUMS)
echo "$DIST/SHA256SUMS written (commit $COMMIT)"
scripts/size-check.sh "$DIST"
