#!/bin/bash
# Build the debug guest kernel (make kernel-debug [KVER=6.12]): the same
# linux-source as the module is derived from (KVER's line; without KVER the
# default guest kernel's, Debian 12's 6.1), x86_64 defconfig +
# kvm_guest.config + the fragment ci/kernel-debug.config (KASAN, UBSAN,
# lockdep, kmemleak, debug objects, fault injection; what the harness
# needs). Cached outside the repo,
# under ${RXECC_CACHE:-~/.cache/rxecc}/kernel-debug/:
#   tree-LINE/src, tree-LINE/obj
#                        the unpacked source of a line (tree/ for 6.1) and its
#                        build tree (O=), reused: a changed fragment rebuilds
#                        only what it changes
#   KEY/                 one finished kernel, KEY hashing the source's
#                        identity, the fragment and the build recipe below:
#     bzImage, release (uname -r), mods/ (modules_install root), config,
#     build.log, build-seconds
# A run whose KEY/ is complete, and whose tree still holds that config (the
# modules are built against it), only prints the directory. Prints KEY/ on
# its last line of stdout. KSRC= an unpacked tree to build instead of
# /usr/src/linux-source-LINE.tar.xz (it is built in place, O=tree-LINE/obj).
# JOBS= parallel jobs (default nproc).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
frag="$top/ci/kernel-debug.config"
# The line: KSRC's, else KVER's (a line such as 6.12, or a version), else
# the default guest kernel's (ci/kver.sh: Debian 12's 6.1), else 6.1.
if [ -n "${KSRC:-}" ]; then
	line=$(make -s -C "$KSRC" kernelversion 2>/dev/null | cut -d. -f1,2) || line=''
elif [ -n "${KVER:-}" ]; then
	line=$(echo "$KVER" | cut -d. -f1,2)
else
	line=$("$top/ci/kver.sh" 2>/dev/null | cut -d. -f1,2) || line=''
	[ -n "$line" ] || line=6.1
fi
[[ "$line" =~ ^[0-9]+\.[0-9]+$ ]] || { echo "kernel-debug: cannot tell the kernel line" >&2; exit 1; }
tarball=/usr/src/linux-source-$line.tar.xz
jobs=${JOBS:-$(nproc)}
base=${RXECC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rxecc}/kernel-debug
# one build tree per line (6.1's keeps the name it had)
tree=$base/tree
[ "$line" = 6.1 ] || tree=$base/tree-$line
recipe="defconfig kvm_guest.config merge_config olddefconfig bzImage modules modules_install-strip"

for t in gcc make flex bison bc; do
	command -v "$t" >/dev/null || { echo "kernel-debug: $t is missing (run 'make deps')" >&2; exit 1; }
done
[ -f /usr/include/libelf.h ] || { echo "kernel-debug: libelf-dev is missing (run 'make deps')" >&2; exit 1; }

if [ -n "${KSRC:-}" ]; then
	[ -f "$KSRC/Makefile" ] || { echo "kernel-debug: KSRC=$KSRC is not a kernel tree" >&2; exit 1; }
	ksrc=$(cd "$KSRC" && pwd)
	src_id="tree $ksrc $(make -s -C "$ksrc" kernelversion)"
else
	[ -f "$tarball" ] ||
		{ echo "kernel-debug: $tarball not found (run 'make deps KVER=$line')" >&2; exit 1; }
	src_id="tarball $(dpkg-query -W -f='${Version}' "linux-source-$line" 2>/dev/null) $(stat -c '%s %Y' "$tarball")"
	ksrc="$tree/src"
fi
obj="$tree/obj"
key=$( (echo "$src_id"; echo "$recipe"; cat "$frag") | sha256sum | cut -c1-16)
dir="$base/$key"
if [ -f "$dir/release" ] && cmp -s "$dir/config" "$obj/.config"; then
	echo "kernel-debug: cached $(cat "$dir/release") (built in $(cat "$dir/build-seconds") s)"
	echo "$dir"
	exit 0
fi

rm -rf "$dir"
mkdir -p "$dir" "$obj"
log="$dir/build.log"
start=$SECONDS
if [ -z "${KSRC:-}" ] && [ "$(cat "$tree/src.id" 2>/dev/null)" != "$src_id" ]; then
	echo "kernel-debug: unpacking $tarball"
	rm -rf "$ksrc" "$obj" "$tree/src.id" "$tree/unpack"
	mkdir -p "$tree/unpack" "$obj"
	tar -xJf "$tarball" -C "$tree/unpack"
	mv "$tree/unpack/linux-source-$line" "$ksrc"
	rmdir "$tree/unpack"
	echo "$src_id" >"$tree/src.id"
fi
kmake() { make -C "$ksrc" O="$obj" -j"$jobs" "$@"; }

echo "kernel-debug: configuring (defconfig, kvm_guest.config, $frag)"
{
	kmake defconfig
	kmake kvm_guest.config
	"$ksrc/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$frag"
	kmake olddefconfig
} >"$log" 2>&1 || { echo "kernel-debug: configuration failed (see $log)" >&2; exit 1; }

# Every setting of the fragment must have made it into the .config.
missing=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=* | "# CONFIG_"*" is not set") want=$line ;;
	*) continue ;;
	esac
	opt=$(echo "$want" | grep -oE 'CONFIG_[A-Z0-9_]+')
	have=$(grep -E "^(# )?${opt}[= ]" "$obj/.config" || echo "# $opt is not set")
	if [ "$have" != "$want" ]; then
		echo "kernel-debug: $frag asks for '$want', the config has '$have'" >&2
		missing=1
	fi
done <"$frag"
[ $missing -eq 0 ] || exit 1

echo "kernel-debug: building with $jobs jobs (log: $log); a first build takes about 30 min on 2 cores"
rm -rf "$dir/mods"
{
	kmake bzImage modules
	kmake INSTALL_MOD_PATH="$dir/mods" INSTALL_MOD_STRIP=1 modules_install
} >>"$log" 2>&1 || { echo "kernel-debug: build failed (see $log)" >&2; tail -n 20 "$log" >&2; exit 1; }
cp "$obj/arch/x86/boot/bzImage" "$dir/bzImage"
cp "$obj/.config" "$dir/config"
echo $((SECONDS - start)) >"$dir/build-seconds"
ln -sfn "$obj" "$dir/obj"	# what the modules are built against (check-debug)
kmake -s kernelrelease >"$dir/release"	# last: its presence marks a finished build
echo "kernel-debug: built $(cat "$dir/release") in $(cat "$dir/build-seconds") s"
echo "$dir"
