#!/usr/bin/env bash
# deb.sh: Debian packages of the release binaries, into dist/.
#
#   scripts/deb.sh [arm64] [armhf] [amd64]     # default: arm64 armhf
#
# arm64 takes dist/cairn-linux-arm64; armhf takes the GOARM=6 build so that
# one package runs on every Raspberry Pi OS armhf board, Pi Zero W and Pi 1
# included. The package holds /usr/bin/cairn and, in /usr/share/cairn,
# install.sh and the unit template; its maintainer scripts run install.sh
# (board/deb/). Built with dpkg-deb alone, as root-owned files.
set -euo pipefail
cd "$(dirname "$0")/.."
DIST=${DIST:-dist}
COMMIT=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
VERSION=$(sed -n 's/^\tVersion = "\(.*\)"/\1/p' node/version.go)
[ -n "$VERSION" ] || { echo "deb.sh: no Version in node/version.go" >&2; exit 1; }
archs=${*:-arm64 armhf}

command -v dpkg-deb >/dev/null || { echo "deb: dpkg-deb missing (apt-get install dpkg-dev)" >&2; exit 1; }
for a in $archs; do
	case "$a" in
	arm64) bin=$DIST/cairn-linux-arm64 ;;
	armhf) bin=$DIST/cairn-linux-armv6 ;;
	amd64) bin=$DIST/cairn-linux-amd64 ;;
	*) echo "deb: unknown architecture $a" >&2; exit 1 ;;
	esac
	[ -x "$bin" ] || { echo "deb: $bin missing (run make cross)" >&2; exit 1; }
	root=$(mktemp -d)
	chmod 0755 "$root"
	install -D -m 0755 "$bin" "$root/usr/bin/cairn"
	install -D -m 0755 board/install.sh "$root/usr/share/cairn/install.sh"
	install -D -m 0644 board/systemd/cairn.service "$root/usr/share/cairn/cairn.service"
	mkdir -p "$root/DEBIAN"
	for s in postinst prerm postrm; do install -m 0755 "board/deb/$s" "$root/DEBIAN/$s"; done
	size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
	sed -e "s/@VERSION@/$VERSION+g$COMMIT/" -e "s/@ARCH@/$a/" -e "s/@SIZE@/$size/" board/deb/control.in >"$root/DEBIAN/control"
	out="$DIST/cairn_${VERSION}+g${COMMIT}_$a.deb"
	dpkg-deb --root-owner-group -Zxz --build "$root" "$out" >/dev/null
	rm -rf "$root"
	echo "deb: $out ($(stat -c %s "$out") bytes)"
done
