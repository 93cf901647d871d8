#!/usr/bin/env bash
# vm-bench.sh: the board benchmark inside a 512 MiB virtual machine, with
# the daemon in a cgroup whose memory.max/memory.high are the profile's
# MemoryMax/MemoryHigh, as systemd would set them from cairn.service. This
# is the measurement that counts for a Pi Zero 2 W: on a big host the
# kernel never reclaims the bbolt map's page cache, so VmHWM there only
# says how large the file was.
#
# Inside the VM (no network device; loopback only): cairn init --board,
# daemon in the cgroup, 1 GiB random file added and catted back through
# the RPC by the cairn CLI (SHA-256 compared), 10k blocks stored with
# `block put --pin` and listed (refs local; pin ls when implemented), a
# sampler of /proc/<pid>/status, then memory.peak, memory.events and VmHWM.
#
# Needs qemu-system-x86, busybox-static, e2fsprogs, cpio and a Debian
# cloud kernel package (downloaded with apt-get download). Not part of CI.
#
#   scripts/vm-bench.sh [board] [size-MiB] [pins] [vm-MiB]
#   default:            pi-zero-2w 1024 10000 512
set -euo pipefail
cd "$(dirname "$0")/.."
board=${1:-pi-zero-2w}
size=${2:-1024}
pins=${3:-10000}
vmmem=${4:-512}
bin=$(readlink -f "${CAIRN_BIN:-dist/cairn-linux-amd64}")
cache=${CAIRN_VM_CACHE:-/tmp/cairn-vm}
[ -x "$bin" ] || { echo "vm-bench: $bin missing (make cross)" >&2; exit 1; }
for t in qemu-system-x86_64 busybox mkfs.ext4 cpio; do
	command -v "$t" >/dev/null || { echo "vm-bench: $t missing (apt-get install qemu-system-x86 busybox-static e2fsprogs cpio)" >&2; exit 1; }
done

mkdir -p "$cache"
kdeb=$(ls "$cache"/linux-image-*-cloud-amd64_*.deb 2>/dev/null | tail -1 || true)
if [ -z "$kdeb" ]; then
	pkg=$(apt-cache depends linux-image-cloud-amd64 | sed -n 's/.*Depends: \(linux-image-.*-cloud-amd64\)$/\1/p' | head -1)
	(cd "$cache" && apt-get download "$pkg")
	kdeb=$(ls "$cache"/linux-image-*-cloud-amd64_*.deb | tail -1)
fi
kx="$cache/kernel"
if [ ! -d "$kx/boot" ]; then dpkg-deb -x "$kdeb" "$kx"; fi
vmlinuz=$(ls "$kx"/boot/vmlinuz-* | head -1)
kver=${vmlinuz##*/vmlinuz-}
mods="$kx/lib/modules/$kver/kernel/drivers"

work=$(mktemp -d)
trap '[ -n "${CAIRN_VM_KEEP:-}" ] || rm -rf "$work"' EXIT
root="$work/root"
mkdir -p "$root"/{bin,proc,sys,dev,mnt,tmp,modules}
cp "$(command -v busybox)" "$root/bin/busybox"
for a in $("$root/bin/busybox" --list); do [ "$a" = busybox ] || ln -sf busybox "$root/bin/$a"; done
cp "$bin" "$root/bin/cairn"
for m in virtio/virtio_ring virtio/virtio virtio/virtio_pci_modern_dev virtio/virtio_pci_legacy_dev virtio/virtio_pci block/virtio_blk; do
	cp "$mods/$m.ko" "$root/modules/"
done
cat >"$root/init" <<'INIT'
#!/bin/sh
export PATH=/bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_blk; do insmod /modules/$m.ko; done
for i in $(seq 50); do [ -b /dev/vda ] && break; sleep 0.1; done
mount -t ext4 /dev/vda /mnt || { echo "RESULT error=no-disk"; poweroff -f; }
ifconfig lo 127.0.0.1 up
mkdir -p /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup
for kv in $(cat /proc/cmdline); do case "$kv" in bench.*) eval "${kv#bench.}";; esac; done
export CAIRN_PATH=/mnt/repo HOME=/tmp
now() { cut -d' ' -f1 /proc/uptime; }
res() { echo "RESULT $*"; }
res memtotal_kb=$(sed -n 's/^MemTotal:[[:space:]]*\([0-9]*\).*/\1/p' /proc/meminfo)
cairn init --profile=test --board="$board" >/tmp/init.log 2>&1 || { cat /tmp/init.log; res error=init; poweroff -f; }
max=$(sed -n 's/^ *"MemoryMiB": \([0-9]*\).*/\1/p' $CAIRN_PATH/config)
high=$(sed -n 's/^ *"MemoryHighMiB": \([0-9]*\).*/\1/p' $CAIRN_PATH/config)
gml=$(sed -n 's/^ *"GoMemLimitMiB": \([0-9]*\).*/\1/p' $CAIRN_PATH/config)
res board=$board budget_mib=$max memory_high_mib=$high gomemlimit_mib=$gml
echo +memory > /sys/fs/cgroup/cgroup.subtree_control
mkdir /sys/fs/cgroup/cairn
echo $((max * 1048576)) > /sys/fs/cgroup/cairn/memory.max
echo $((high * 1048576)) > /sys/fs/cgroup/cairn/memory.high
echo 0 > /sys/fs/cgroup/cairn/memory.swap.max 2>/dev/null
sh -c 'echo $$ > /sys/fs/cgroup/cairn/cgroup.procs; exec cairn daemon' >/tmp/daemon.log 2>&1 &
pid=$!
for i in $(seq 100); do [ -s $CAIRN_PATH/api ] && break; sleep 0.1; done
[ -s $CAIRN_PATH/api ] || { cat /tmp/daemon.log; res error=daemon; poweroff -f; }
pid=$(cat $CAIRN_PATH/repo.lock) # the daemon writes its pid there
grep -qx "$pid" /sys/fs/cgroup/cairn/cgroup.procs || { res error=daemon-not-in-cgroup; poweroff -f; }
# Sampler: peaks of RssAnon and RssFile per phase, written to /tmp/peak.
phase=idle
sampler() {
	a=0; f=0
	while [ ! -e /tmp/stop-sampler ]; do
		set -- $(sed -n 's/^RssAnon:[[:space:]]*\([0-9]*\).*/\1/p; s/^RssFile:[[:space:]]*\([0-9]*\).*/\1/p' /proc/$pid/status)
		[ "${1:-0}" -gt $a ] && a=$1
		[ "${2:-0}" -gt $f ] && f=$2
		echo "$a $f" > /tmp/peak
		sleep 0.05
	done
}
start_phase() { rm -f /tmp/stop-sampler /tmp/peak; sampler & spid=$!; t0=$(now); }
end_phase() { # name bytes
	t1=$(now); touch /tmp/stop-sampler; wait $spid
	set -- "$1" "$2" $(cat /tmp/peak)
	res phase=$1 seconds=$(echo "$t0 $t1" | awk '{print $2-$1}') bytes=$2 peak_anon_kb=$3 peak_file_kb=$4
}
dd if=/dev/urandom of=/mnt/in.bin bs=1M count=$size 2>/dev/null
want=$(sha256sum /mnt/in.bin | cut -d' ' -f1)
sync; echo 3 > /proc/sys/vm/drop_caches
start_phase; cid=$(cairn add -Q /mnt/in.bin); end_phase add $((size * 1048576))
start_phase; got=$(cairn cat "$cid" | sha256sum | cut -d' ' -f1); end_phase cat $((size * 1048576))
[ "$got" = "$want" ] && res cat_sha256=match || res cat_sha256=MISMATCH
mkdir /mnt/blocks; i=0
while [ $i -lt $pins ]; do echo "cairn vm-bench pinned block $i" > /mnt/blocks/b$i; i=$((i + 1)); done
start_phase
i=0
while [ $i -lt $pins ]; do
	j=$((i + 500)); [ $j -gt $pins ] && j=$pins
	files=""; k=$i; while [ $k -lt $j ]; do files="$files /mnt/blocks/b$k"; k=$((k + 1)); done
	cairn block put --pin=true --cid-codec=raw $files > /dev/null || res error=block-put
	i=$j
done
end_phase block_put_pin 0
start_phase; n=$(cairn pin ls 2>/tmp/pinls.err | wc -l); end_phase pin_ls 0
res pin_ls_lines=$n pin_ls_error="$(head -c 80 /tmp/pinls.err | tr ' ' '_')"
start_phase; n=$(cairn refs local | wc -l); end_phase refs_local 0
res refs_local_blocks=$n
res vmhwm_kb=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\).*/\1/p' /proc/$pid/status)
res cgroup_memory_peak_bytes=$(cat /sys/fs/cgroup/cairn/memory.peak)
res cgroup_events="$(tr '\n' ',' < /sys/fs/cgroup/cairn/memory.events)"
res cgroup_stat_anon_bytes=$(sed -n 's/^anon \([0-9]*\)/\1/p' /sys/fs/cgroup/cairn/memory.stat)
cairn shutdown >/dev/null 2>&1
for i in $(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
kill -0 $pid 2>/dev/null && res daemon_exit=still-running || res daemon_exit=0
res done=1
sync; umount /mnt; poweroff -f
INIT
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1 >"$work/initrd.gz")

disk="$work/disk.img"
truncate -s $((size * 3 + 2048))M "$disk"
mkfs.ext4 -q -F "$disk"

# TCG emulation by default: the memory figures do not depend on speed and
# it works everywhere (nested KVM here fails on cmpxchg16b); with a working
# KVM use CAIRN_VM_ACCEL="-enable-kvm -cpu host". Speeds under TCG mean
# nothing; the memory figures are the point.
accel=${CAIRN_VM_ACCEL:-"-accel tcg,thread=multi -cpu max"}
echo "vm-bench: booting a ${vmmem} MiB VM ($kver) for $board, $size MiB file, $pins pins"
timeout 3600 qemu-system-x86_64 $accel -m "$vmmem" -smp 2 -nographic -no-reboot -nic none \
	-kernel "$vmlinuz" -initrd "$work/initrd.gz" \
	-append "console=ttyS0 quiet panic=-1 bench.board=$board bench.size=$size bench.pins=$pins" \
	-drive "file=$disk,if=virtio,format=raw" >"$work/console.log" 2>&1 || true
{ grep '^RESULT' "$work/console.log" || true; } | tr -d '\r' | tee "$cache/vm-bench-$board.txt"
grep -q '^RESULT done=1' "$work/console.log" || { echo "vm-bench: the VM did not finish; console:" >&2; tail -40 "$work/console.log" >&2; exit 1; }
