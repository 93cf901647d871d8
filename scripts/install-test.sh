#!/usr/bin/env bash
# install-test.sh: run board/install.sh for real (user, repo, unit,
# enable, idempotence, --uninstall keeping data, --purge) without touching
# the machine: it re-runs itself in a private mount namespace where /etc,
# /usr and /var are overlays whose writes go to a temporary directory.
# Needs root and overlayfs (CI: root on Debian). Then it starts the
# installed daemon as the cairn user, adds and cats a file over loopback,
# and checks the installed unit with systemd-analyze verify.
#
# With a .deb for this machine (scripts/deb.sh amd64) as a second argument
# it also installs, removes and purges the package with dpkg.
#
#   scripts/install-test.sh [cairn-binary [cairn.deb]]   # default dist/cairn-linux-amd64
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(readlink -f "${1:-dist/cairn-linux-amd64}")
[ -x "$bin" ] || { echo "install-test: $bin missing (run make cross)" >&2; exit 1; }
deb=${2:+$(readlink -f "$2")}
[ "$(id -u)" -eq 0 ] || { echo "install-test: SKIPPED: needs root (CI runs as root)" >&2; exit 0; }

if [ -z "${CAIRN_INSTALL_SANDBOX:-}" ]; then
	exec unshare --mount --propagation private env CAIRN_INSTALL_SANDBOX=1 "$0" "$bin" ${deb:+"$deb"}
fi

work=$(mktemp -d)
for d in etc usr var; do
	mkdir -p "$work/$d/upper" "$work/$d/work"
	mount -t overlay overlay -o "lowerdir=/$d,upperdir=$work/$d/upper,workdir=$work/$d/work" "/$d"
done
pid=""
trap '[ -z "$pid" ] || kill -9 "$pid" 2>/dev/null || true' EXIT

fail() { echo "install-test: FAIL: $*" >&2; exit 1; }
ok() { echo "install-test: ok: $*"; }
peer() { sed -n 's/^ *"PeerID": "\([^"]*\)".*/\1/p' /var/lib/cairn/config; }

getent passwd cairn >/dev/null && fail "a cairn user exists before the test (not a clean sandbox)"

board/install.sh --binary "$bin" --board=pi-zero-2w --no-start
[ -x /usr/bin/cairn ] || fail "binary not installed"
getent passwd cairn | grep -q ':/var/lib/cairn:/usr/sbin/nologin$' || fail "user: $(getent passwd cairn)"
[ "$(stat -c %U:%a /var/lib/cairn)" = cairn:700 ] || fail "repo dir: $(stat -c %U:%a /var/lib/cairn)"
[ "$(stat -c %U /var/lib/cairn/config)" = cairn ] || fail "config not owned by cairn"
grep -q '"Board": "pi-zero-2w"' /var/lib/cairn/config || fail "no board in config"
grep -q '^MemoryHigh=217M$' /etc/systemd/system/cairn.service || fail "MemoryHigh not filled in"
grep -q '^MemoryMax=256M$' /etc/systemd/system/cairn.service || fail "MemoryMax not filled in"
[ "$(readlink /etc/systemd/system/multi-user.target.wants/cairn.service)" = /etc/systemd/system/cairn.service ] || fail "not enabled"
out=$(systemd-analyze verify /etc/systemd/system/cairn.service 2>&1) || fail "verify: $out"
[ -z "$out" ] || fail "verify warnings: $out"
ok "install: binary, user, repo (pi-zero-2w), unit with the budget, enabled, verified"

id1=$(peer)
unit1=$(sha256sum </etc/systemd/system/cairn.service)
board/install.sh --binary "$bin" --board=pi4-8g --no-start >/dev/null
[ "$(peer)" = "$id1" ] || fail "second run changed the identity"
[ "$(sha256sum </etc/systemd/system/cairn.service)" = "$unit1" ] || fail "second run changed the unit"
grep -q '"Board": "pi-zero-2w"' /var/lib/cairn/config || fail "second run replaced the repo"
ok "idempotent: second run keeps the repo, identity and unit"

# The installed daemon runs as cairn, from the state directory.
setpriv --reuid=cairn --regid=cairn --init-groups env CAIRN_PATH=/var/lib/cairn /usr/bin/cairn daemon --offline >"$work/daemon.log" 2>&1 &
pid=$!
for _ in $(seq 100); do [ -s /var/lib/cairn/api ] && break; sleep 0.1; done
[ -s /var/lib/cairn/api ] || fail "daemon did not start: $(cat "$work/daemon.log")"
port=$(sed 's|.*/tcp/||' /var/lib/cairn/api)
cid=$(echo "installed" | curl -sS -f -X POST -F file=@- "http://127.0.0.1:$port/api/v0/add?quieter=true" | sed -n 's/.*"Hash":"\([^"]*\)".*/\1/p')
[ "$(curl -sS -f -X POST "http://127.0.0.1:$port/api/v0/cat?arg=$cid")" = installed ] || fail "add/cat through the installed daemon"
kill -TERM "$pid"
wait "$pid" || fail "daemon exit code $?"
pid=""
ok "the installed daemon serves as user cairn and stops on SIGTERM"

board/install.sh --uninstall
[ ! -e /usr/bin/cairn ] && [ ! -e /etc/systemd/system/cairn.service ] || fail "uninstall left the binary or unit"
[ ! -e /etc/systemd/system/multi-user.target.wants/cairn.service ] || fail "uninstall left the enable link"
[ "$(peer)" = "$id1" ] && getent passwd cairn >/dev/null || fail "uninstall lost the repo or user"
ok "--uninstall keeps the repo and user"

board/install.sh --binary "$bin" --no-start >/dev/null
[ "$(peer)" = "$id1" ] || fail "reinstall did not reuse the repo"
board/install.sh --uninstall --purge
[ ! -e /var/lib/cairn ] && ! getent passwd cairn >/dev/null || fail "purge left the repo or user"
ok "reinstall reuses the repo; --uninstall --purge removes it and the user"
if [ -n "$deb" ]; then
	CAIRN_BOARD=pi3 dpkg -i "$deb" >"$work/dpkg.log" 2>&1 || fail "dpkg -i: $(cat "$work/dpkg.log")"
	grep -q '"Board": "pi3"' /var/lib/cairn/config || fail "deb: repo not made for CAIRN_BOARD=pi3"
	grep -q '^MemoryMax=512M$' /etc/systemd/system/cairn.service || fail "deb: unit budget"
	[ -L /etc/systemd/system/multi-user.target.wants/cairn.service ] || fail "deb: unit not enabled"
	id2=$(peer)
	dpkg -r cairn >>"$work/dpkg.log" 2>&1 || fail "dpkg -r: $(cat "$work/dpkg.log")"
	[ ! -e /usr/bin/cairn ] && [ ! -e /etc/systemd/system/cairn.service ] || fail "dpkg -r left files"
	[ "$(peer)" = "$id2" ] || fail "dpkg -r lost the repo"
	dpkg -P cairn >>"$work/dpkg.log" 2>&1 || fail "dpkg -P: $(cat "$work/dpkg.log")"
	[ ! -e /var/lib/cairn ] && ! getent passwd cairn >/dev/null || fail "dpkg -P left the repo or user"
	ok "deb: dpkg -i makes the repo and unit, -r keeps the repo, -P purges it"
fi
echo "install-test: all passed (the machine's /etc, /usr and /var were overlays)"
