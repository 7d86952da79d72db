#!/bin/bash
# Build the guest initramfs: static busybox, the modules needed to mount the
# host root over 9p (virtio-pci, 9p, overlay) and ci/guest/initramfs-init.
# Output: build/vm/initramfs-$KVER.cpio.gz, rebuilt when its inputs change.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
kver=$("$top/ci/kver.sh")
out="$top/build/vm/initramfs-$kver.cpio.gz"
busybox=/bin/busybox
want="virtio_pci 9pnet_virtio 9p overlay"

# RXECC_KMODS: the modules_install root of a kernel that is not in /boot
# (ci/kernel-debug.sh builds what the initramfs would load into the kernel).
base=()
[ -z "${RXECC_KMODS:-}" ] || base=(-d "$RXECC_KMODS")
stamp="$kver ${RXECC_KMODS:-} $(sha256sum "$0" "$top/ci/guest/initramfs-init" | cut -c1-16 | tr '\n' ' ') $(stat -c %Y "$busybox")"
if [ -f "$out" ] && [ "$(cat "$out.stamp" 2>/dev/null)" = "$stamp" ]; then
	echo "$out"
	exit 0
fi
"$busybox" --list | grep -x switch_root >/dev/null || { echo "mkinitramfs: $busybox is not a full busybox (install busybox-static)" >&2; exit 1; }

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,dev,proc,sys,mnt,modules}
cp "$busybox" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
cp "$top/ci/guest/initramfs-init" "$root/init"
chmod 755 "$root/init"

# Modules in dependency order, each once.
: > "$root/modules/load"
for m in $want; do
	modprobe "${base[@]}" -S "$kver" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
done | awk '!seen[$0]++' | while read -r ko; do
	cp "$ko" "$root/modules/"
	basename "$ko" >> "$root/modules/load"
done

mkdir -p "$(dirname "$out")"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$out.tmp"
mv "$out.tmp" "$out"
echo "$stamp" > "$out.stamp"
echo "$out"
