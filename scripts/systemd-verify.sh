#!/usr/bin/env bash
# systemd-verify.sh: check board/systemd/cairn.service with
# `systemd-analyze verify` and its hardening with `systemd-analyze security
# --offline` (exposure at most 3.0), installing Debian's systemd package if
# systemd-analyze is missing. Runs without a running systemd (CI).
#
#   scripts/systemd-verify.sh [cairn-binary]   # default dist/cairn-linux-amd64
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(readlink -f "${1:-dist/cairn-linux-amd64}")
[ -x "$bin" ] || { echo "systemd-verify: $bin missing (run make cross)" >&2; exit 1; }

if ! command -v systemd-analyze >/dev/null; then
	echo "systemd-verify: installing systemd (for systemd-analyze)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -q systemd >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q systemd >/dev/null; }
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# verify checks that ExecStart exists: point it at the built binary.
sed "s|^ExecStart=/usr/bin/cairn |ExecStart=$bin |" board/systemd/cairn.service >"$work/cairn.service"
grep -q "^ExecStart=$bin daemon" "$work/cairn.service" || { echo "systemd-verify: unexpected ExecStart line" >&2; exit 1; }
for line in Type=notify User=cairn StateDirectory=cairn ProtectSystem=strict NoNewPrivileges=yes PrivateTmp=yes \
	Restart=on-failure 'RestrictAddressFamilies=' 'MemoryHigh=' 'MemoryMax='; do
	grep -q "^$line" "$work/cairn.service" || { echo "systemd-verify: $line missing from the unit" >&2; exit 1; }
done
out=$(systemd-analyze verify "$work/cairn.service" 2>&1) || { echo "$out" >&2; echo "systemd-verify: verify failed" >&2; exit 1; }
if [ -n "$out" ]; then echo "$out" >&2; echo "systemd-verify: verify printed warnings" >&2; exit 1; fi
echo "systemd-verify: systemd-analyze verify: ok ($(systemd-analyze --version | head -1))"
systemd-analyze security --offline=yes --threshold=30 "$work/cairn.service" | tail -1
