#!/bin/sh
# install.sh: put cairn on a board as a systemd service. Run as root.
#
#   sudo ./install.sh [--binary PATH] [--board NAME|auto] [--budget MiB] [--no-start]
#   sudo ./install.sh --uninstall [--purge]
#
# Idempotent: run it again to upgrade the binary or repair the install.
#   1. copies the binary to /usr/bin/cairn (default: the one for this
#      machine's architecture from dist/ beside this script, or ./cairn);
#   2. creates the system user "cairn" (no login, no home of its own);
#   3. creates the repo in /var/lib/cairn with `cairn init --board=auto`
#      (the detected board profile; --board NAME overrides it) unless a repo
#      is already there, which is kept as it is;
#   4. installs /etc/systemd/system/cairn.service with MemoryHigh and
#      MemoryMax from the repo's Budget, enables it and (re)starts it.
#
# --uninstall stops and removes the service and the binary and keeps the
# repo and the user; --purge removes them too (all blocks and the identity).
# --no-start enables the unit without starting it (image building).
set -eu

BIN_DST=/usr/bin/cairn
UNIT_DST=/etc/systemd/system/cairn.service
REPO=/var/lib/cairn
USER_NAME=cairn

here=$(cd "$(dirname "$0")" && pwd)
binary=""
board=auto
budget=""
start=yes
mode=install
purge=no
keep_binary=no

die() {
	echo "install.sh: $*" >&2
	exit 1
}
say() { echo "install.sh: $*"; }

while [ $# -gt 0 ]; do
	case "$1" in
	--binary) binary=${2:?--binary needs a path}; shift ;;
	--binary=*) binary=${1#*=} ;;
	--board) board=${2:?--board needs a name}; shift ;;
	--board=*) board=${1#*=} ;;
	--budget) budget=${2:?--budget needs MiB}; shift ;;
	--budget=*) budget=${1#*=} ;;
	--no-start) start=no ;;
	--uninstall) mode=uninstall ;;
	--purge) purge=yes ;;
	--keep-binary) keep_binary=yes ;; # for the .deb: dpkg owns /usr/bin/cairn
	-h | --help)
		sed -n '2,/^set -eu/p' "$0" | sed 's/^# \{0,1\}//; /^set -eu/d'
		exit 0
		;;
	*) die "unknown option $1 (see --help)" ;;
	esac
	shift
done

[ "$(id -u)" -eq 0 ] || die "run me as root (sudo $0 ...)"

# systemd is running (not a chroot, an image build or a container).
systemd_up() { [ -d /run/systemd/system ]; }

# The unit template: beside this script in a checkout or release, in
# /usr/share/cairn from the .deb.
unit_template() {
	for f in "$here/systemd/cairn.service" "$here/cairn.service" /usr/share/cairn/cairn.service; do
		[ -f "$f" ] && { echo "$f"; return; }
	done
	die "cannot find the unit template (systemd/cairn.service beside $0)"
}

# The binary built for this machine (uname -m; a 64-bit kernel runs the
# static arm64 build even under a 32-bit userland).
default_binary() {
	case "$(uname -m)" in
	aarch64 | arm64) arch=arm64 ;;
	armv7l | armv8l) arch=armv7 ;;
	armv6l) arch=armv6 ;;
	x86_64) arch=amd64 ;;
	*) die "no cairn build for $(uname -m); pass --binary" ;;
	esac
	for f in "$here/../dist/cairn-linux-$arch" "$here/cairn-linux-$arch" "$here/cairn"; do
		[ -x "$f" ] && { echo "$f"; return; }
	done
	die "cannot find cairn-linux-$arch (run make cross, or pass --binary PATH)"
}

# json_int KEY: an integer field of the repo config (written one per line
# by cairn's config writer), empty when absent.
json_int() {
	sed -n "s/^ *\"$1\": *\([0-9][0-9]*\).*/\1/p" "$REPO/config" | head -n 1
}

# render_unit MEMORY_HIGH_MiB MEMORY_MAX_MiB: the unit with the budget.
render_unit() {
	if [ -n "$2" ]; then
		sed -e "s/^MemoryHigh=.*/MemoryHigh=$1M/" -e "s/^MemoryMax=.*/MemoryMax=$2M/" "$(unit_template)"
	else
		sed -e '/^MemoryHigh=/d' -e '/^MemoryMax=/d' "$(unit_template)"
	fi
}

enable_unit() {
	if systemd_up; then
		systemctl daemon-reload
		systemctl enable cairn.service >/dev/null 2>&1
	else
		# No running systemd: make the symlink `systemctl enable` would.
		mkdir -p /etc/systemd/system/multi-user.target.wants
		ln -sf "$UNIT_DST" /etc/systemd/system/multi-user.target.wants/cairn.service
	fi
}

uninstall() {
	if systemd_up; then
		systemctl disable --now cairn.service >/dev/null 2>&1 || true
	fi
	rm -f /etc/systemd/system/multi-user.target.wants/cairn.service "$UNIT_DST"
	systemd_up && systemctl daemon-reload
	[ "$keep_binary" = yes ] || rm -f "$BIN_DST"
	if [ "$purge" = yes ]; then
		rm -rf "$REPO"
		if getent passwd "$USER_NAME" >/dev/null; then userdel "$USER_NAME"; fi
		if getent group "$USER_NAME" >/dev/null; then groupdel "$USER_NAME" 2>/dev/null || true; fi
		say "removed cairn, its repo $REPO and the user $USER_NAME"
	else
		say "removed the cairn service and binary; kept the repo $REPO and the user $USER_NAME (--uninstall --purge removes them)"
	fi
}

if [ "$mode" = uninstall ]; then
	uninstall
	exit 0
fi

# 1. The binary.
[ -n "$binary" ] || binary=$(default_binary)
[ -x "$binary" ] || die "$binary is not an executable"
if [ "$(readlink -f "$binary")" != "$(readlink -f "$BIN_DST" 2>/dev/null || true)" ]; then
	install -m 0755 "$binary" "$BIN_DST.new"
	mv -f "$BIN_DST.new" "$BIN_DST"
fi
"$BIN_DST" version >/dev/null || die "$BIN_DST does not run on this machine (wrong architecture?)"
say "binary: $BIN_DST ($("$BIN_DST" version --commit))"

# 2. The user.
if ! getent passwd "$USER_NAME" >/dev/null; then
	useradd --system --user-group --home-dir "$REPO" --no-create-home --shell /usr/sbin/nologin \
		--comment "cairn IPFS node" "$USER_NAME"
	say "user: created $USER_NAME"
fi

# 3. The repo.
mkdir -p "$REPO"
chown "$USER_NAME:$USER_NAME" "$REPO"
chmod 0700 "$REPO"
if [ -f "$REPO/config" ]; then
	say "repo: $REPO exists; keeping its config and identity"
else
	set -- init "--board=$board"
	[ -z "$budget" ] || set -- "$@" "--budget=$budget"
	runuser -u "$USER_NAME" -- env CAIRN_PATH="$REPO" "$BIN_DST" "$@" | sed 's/^/install.sh: init: /'
	[ -f "$REPO/config" ] || die "cairn init failed"
fi

# 4. The unit, with the repo's budget.
max=$(json_int MemoryMiB)
high=$(json_int MemoryHighMiB)
if [ -n "$max" ] && [ -z "$high" ]; then high=$((max * 85 / 100)); fi
[ -n "$max" ] || say "warning: $REPO/config has no Budget.MemoryMiB: the unit gets no MemoryHigh/MemoryMax"
tmp=$(mktemp)
render_unit "$high" "$max" >"$tmp"
if ! cmp -s "$tmp" "$UNIT_DST" 2>/dev/null; then
	install -m 0644 "$tmp" "$UNIT_DST"
fi
rm -f "$tmp"
enable_unit
say "unit: $UNIT_DST (MemoryHigh=${high:-none}M MemoryMax=${max:-none}M), enabled"

if [ "$start" = yes ] && systemd_up; then
	systemctl restart cairn.service
	say "started: systemctl status cairn; journalctl -u cairn"
else
	say "not started now; it starts at the next boot (or: systemctl start cairn)"
fi
