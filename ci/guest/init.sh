#!/bin/bash
# PID 1 of an rxecc guest after switch_root (the host root, read-only over
# 9p, under a tmpfs overlay). Sets the guest up, runs the command the host
# wrote to /mnt/out/guest.env, records its exit code and powers off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=${TERM:-linux} LANG=C.UTF-8
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
# The overlay root is writable already (its upper layer is a tmpfs), so /tmp
# stays as it is: the repository may well live under the host's /tmp.
mount -t tmpfs tmpfs /run
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t configfs configfs /sys/kernel/config 2>/dev/null
mkdir -p /mnt/out
modprobe -q 9pnet_virtio
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 rxeccout /mnt/out; then
	echo "rxecc-guest: cannot mount the output share"
	echo "RXECC-GUEST-RESULT 1"
	poweroff -f
fi
# shellcheck disable=SC1091 # written by ci/vm.sh at boot, not in the repository
. /mnt/out/guest.env
hostname "${RXECC_HOSTNAME:-rxecc-guest}"
# The host's own Python startup hooks (ci/vm.sh), hidden in the overlay.
for f in ${RXECC_HIDE_PTH:-}; do rm -f "$f"; done
# A kernel not from /boot (make kernel-debug): its modules, where modprobe looks.
if [ -n "${RXECC_KMODS:-}" ]; then
	mkdir -p "/lib/modules/$KVER"
	mount --bind "$RXECC_KMODS/lib/modules/$KVER" "/lib/modules/$KVER"
fi
ip link set lo up
# No udev here: load the NIC driver for the links the host gave us.
modprobe virtio_net
ulimit -l unlimited
# The same kernel messages the console gets, at warning level and above.
dmesg -n 5

# kmemleak (the debug kernel): forget what booting left, report what the
# command leaves once rxecc's modules are gone (kmemleak_report below).
kml=/sys/kernel/debug/kmemleak
if [ -w $kml ]; then
	echo scan >$kml
	echo clear >$kml
fi
kmemleak_report() {
	local d
	for d in /sys/class/infiniband/*; do [ -e "$d" ] && rdma link delete "${d##*/}" 2>/dev/null; done
	for m in rdma_rxecc sch_pfc rdma_rxe; do [ -d /sys/module/$m ] && rmmod $m; done
	# Objects younger than 5 s are not reported; two scans, as the
	# kmemleak documentation advises against transient false positives.
	sleep 6
	echo scan >$kml
	echo scan >$kml
	cat $kml >/mnt/out/kmemleak.txt
	echo "rxecc-guest: kmemleak scan after unload: $(grep -c '^unreferenced ' /mnt/out/kmemleak.txt) leak reports (kmemleak.txt)"
}

cd "${RXECC_TOP:-/}" || true
if [ "${RXECC_INTERACTIVE:-0}" = 1 ]; then
	setsid -c bash -c "$RXECC_CMD" </dev/ttyS0 >/dev/ttyS0 2>&1
	rc=$?
else
	echo "RXECC-GUEST-START $RXECC_CMD"
	bash -c "$RXECC_CMD" 2>&1 | tee /mnt/out/output.txt
	rc=${PIPESTATUS[0]}
fi
[ -w $kml ] && kmemleak_report
dmesg > /mnt/out/dmesg.txt
echo "$rc" > /mnt/out/rc
sync
umount /mnt/out
echo "RXECC-GUEST-RESULT $rc"
# Power off, then wait for it with builtins only, parsed before the trigger
# (one line): the root is 9p, and running a program (or reading more of
# this script) from it while the machine goes down can fail with EIO, and
# init exiting panics the kernel (seen once, after a clean bench run).
echo o > /proc/sysrq-trigger; while :; do read -r -t 1 _ 2>/dev/null || :; done
