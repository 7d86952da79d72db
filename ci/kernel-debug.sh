#!/bin/bash
# Build the debug guest kernel (make kernel-debug): the same linux-source as
# the module is derived from, x86_64 defconfig + kvm_guest.config + the
# fragment ci/kernel-debug.config (KASAN, UBSAN, lockdep, kmemleak, debug
# objects, fault injection; what the harness needs). The result is cached
# outside the repo, under ${RXECC_CACHE:-~/.cache/rxecc}/kernel-debug/KEY,
# where KEY hashes the fragment, this script and the source's identity: a
# second run with nothing changed only prints the directory.
#
# The directory holds:
#   bzImage        the kernel
#   release        its version (uname -r)
#   mods/          modules_install root (mods/lib/modules/RELEASE)
#   obj/           the build tree, to build rdma_rxecc and sch_pfc against
#   build.log, build-seconds
# Prints the directory on its last line of stdout. KSRC= an unpacked tree
# instead of /usr/src/linux-source-6.1.tar.xz. JOBS= parallel jobs (nproc).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
frag="$top/ci/kernel-debug.config"
tarball=/usr/src/linux-source-6.1.tar.xz
jobs=${JOBS:-$(nproc)}
cache=${RXECC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rxecc}

for t in gcc make flex bison bc; do
	command -v "$t" >/dev/null || { echo "kernel-debug: $t is missing (run 'make deps')" >&2; exit 1; }
done
[ -f /usr/include/libelf.h ] || { echo "kernel-debug: libelf-dev is missing (run 'make deps')" >&2; exit 1; }

if [ -n "${KSRC:-}" ]; then
	[ -f "$KSRC/Makefile" ] || { echo "kernel-debug: KSRC=$KSRC is not a kernel tree" >&2; exit 1; }
	src_id="tree $(cd "$KSRC" && pwd) $(make -s -C "$KSRC" kernelversion)"
else
	[ -f "$tarball" ] || { echo "kernel-debug: $tarball not found (run 'make deps')" >&2; exit 1; }
	src_id="tarball $(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null) $(stat -c '%s %Y' "$tarball")"
fi
key=$( (echo "$src_id"; cat "$frag" "$0") | sha256sum | cut -c1-16)
dir="$cache/kernel-debug/$key"
if [ -f "$dir/bzImage" ] && [ -f "$dir/release" ]; then
	echo "kernel-debug: cached $(cat "$dir/release"), built in $(cat "$dir/build-seconds" 2>/dev/null || echo '?') s"
	echo "$dir"
	exit 0
fi

rm -rf "$dir.tmp" "$dir"	# an interrupted build's leftovers
mkdir -p "$dir.tmp/obj"
log="$dir.tmp/build.log"
start=$SECONDS
if [ -n "${KSRC:-}" ]; then
	ksrc=$(cd "$KSRC" && pwd)
else
	echo "kernel-debug: unpacking $tarball"
	tar -xJf "$tarball" -C "$dir.tmp"
	ksrc="$dir.tmp/linux-source-6.1"
	mv "$ksrc" "$dir.tmp/src"
	ksrc="$dir/src"	# where it will be after the final rename
fi
# Build from the final location's path: obj/'s Makefile and the modules'
# build link record it. Until the rename, a symlink stands in for it.
ln -sfn "$dir.tmp" "$dir"
kmake() { make -C "$ksrc" O="$dir/obj" -j"$jobs" "$@"; }

echo "kernel-debug: configuring (defconfig, kvm_guest.config, $frag)"
{
	kmake defconfig
	kmake kvm_guest.config
	"$ksrc/scripts/kconfig/merge_config.sh" -m -O "$dir/obj" "$dir/obj/.config" "$frag"
	kmake olddefconfig
} >"$log" 2>&1 || { rm -f "$dir"; echo "kernel-debug: configuration failed (see $log)" >&2; exit 1; }

# Every setting of the fragment must have made it into the .config.
missing=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*) want=$line ;;
	"# CONFIG_"*" is not set") want=$line ;;
	*) continue ;;
	esac
	opt=$(echo "$want" | grep -oE 'CONFIG_[A-Z0-9_]+')
	have=$(grep -E "^(# )?$opt[= ]" "$dir/obj/.config" || echo "# $opt is not set")
	if [ "$have" != "$want" ]; then
		echo "kernel-debug: $frag asks for '$want', the config has '$have'" >&2
		missing=1
	fi
done <"$frag"
[ $missing -eq 0 ] || { rm -f "$dir"; exit 1; }

echo "kernel-debug: building with $jobs jobs (log: $log); about 40 min on 2 cores"
{
	kmake bzImage modules
	kmake INSTALL_MOD_PATH="$dir/mods" INSTALL_MOD_STRIP=1 modules_install
} >>"$log" 2>&1 || { rm -f "$dir"; echo "kernel-debug: build failed (see $log)" >&2; tail -n 20 "$log" >&2; exit 1; }
cp "$dir/obj/arch/x86/boot/bzImage" "$dir.tmp/bzImage"
kmake -s kernelrelease >"$dir.tmp/release"
echo $((SECONDS - start)) >"$dir.tmp/build-seconds"
rm -f "$dir"
mv "$dir.tmp" "$dir"
echo "kernel-debug: built $(cat "$dir/release") in $(cat "$dir/build-seconds") s"
echo "$dir"
