#!/bin/bash
# Derive the rdma_rxecc source tree from a kernel source:
#   1. extract drivers/infiniband/sw/rxe from KSRC (an unpacked tree) or from
#      the linux-source tarball of the kernel line (/usr/src/linux-source-X.Y.tar.xz);
#   2. apply the kernel line's quilt series, drivers/infiniband/sw/rxecc/patches/X.Y
#      (fuzz 0);
#   3. link rxecc's own files (*.c, *.h, Kbuild) into the tree.
# The result lives in build/kernel/rxecc. It is redone only when the source,
# the series or the set of own files changes. Edits made in the derived tree
# and not yet captured by 'quilt refresh' are never thrown away: the script
# stops and says which files hold them. RXECC_DERIVED: another place for the
# result; RXECC_DKMS=1 (dkms.mk): a missing source names only its package.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
own="$top/drivers/infiniband/sw/rxecc"
out="${RXECC_DERIVED:-$top/build/kernel/rxecc}"
ksrc="${KSRC:-}"

die() { echo "derive: $*" >&2; exit 1; }

# The kernel line (X.Y) picks the series and the default source: from KSRC's
# Makefile, else from the kernel rxecc is built for (KVER, as ci/kver.sh
# resolves it: 6.1.0-57-amd64 and 6.12.118+deb12-amd64 are lines 6.1 and 6.12).
if [ -n "$ksrc" ]; then
	line=$(sed -n -e 's/^VERSION = \([0-9]*\)$/\1/p' -e 's/^PATCHLEVEL = \([0-9]*\)$/.\1/p' \
		"$ksrc/Makefile" 2>/dev/null | tr -d '\n')
	[[ "$line" =~ ^[0-9]+\.[0-9]+$ ]] || die "KSRC=$ksrc: no VERSION and PATCHLEVEL in its Makefile"
else
	kver=$("$top/ci/kver.sh") || exit 1
	line=$(echo "$kver" | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p')
	[ -n "$line" ] || die "cannot tell the kernel line of KVER=$kver"
fi
tarball="${KSRC_TARBALL:-/usr/src/linux-source-$line.tar.xz}"
series_dir="$own/patches/$line"
if [ ! -f "$series_dir/series" ]; then
	have=$(cd "$own/patches" && find . -mindepth 2 -maxdepth 2 -name series -printf '%h\n' | sed 's|^\./||' | sort -V | tr '\n' ' ')
	die "rxecc has no patch series for Linux $line (it is built for: ${have% })"
fi

if [ -n "$ksrc" ]; then
	[ -d "$ksrc/drivers/infiniband/sw/rxe" ] ||
		die "KSRC=$ksrc has no drivers/infiniband/sw/rxe"
	src_id="tree $(cd "$ksrc" && realpath .) $(cat "$ksrc"/drivers/infiniband/sw/rxe/* | sha256sum | cut -c1-16)"
else
	if [ ! -f "$tarball" ]; then
		[ -n "${RXECC_DKMS:-}" ] && die "$tarball not found: install the package linux-source-$line"
		die "$tarball not found (install linux-source-$line: 'make deps KVER=$line', or set KSRC=)"
	fi
	src_id="tarball $tarball $(stat -c '%s %Y' "$tarball")"
fi
own_files=$(cd "$own" && for f in Kbuild ./*.c ./*.h; do [ ! -e "$f" ] || echo "${f#./}"; done | sort)
# shellcheck disable=SC2046 # the series names one patch per line (no spaces): split on purpose
series_id=$(cd "$series_dir" && cat series $(sed -e 's/#.*//' series) | sha256sum | cut -c1-16)
stamp="$src_id|series $line $series_id|own $(echo "$own_files" | tr '\n' ' ')|uapi|include"

if [ -f "$out/.rxecc-stamp" ] && [ "$(cat "$out/.rxecc-stamp")" = "$stamp" ]; then
	exit 0
fi

new="$out.new"
rm -rf "$new"
mkdir -p "$new"
echo "derive: extracting rxe from ${ksrc:-$tarball}"
# checkpatch.pl and its data files come along, for `make lint`.
tools="$(dirname "$out")/checkpatch"
cp_files="scripts/checkpatch.pl scripts/spelling.txt scripts/const_structs.checkpatch"
if [ -n "$ksrc" ]; then
	cp -p "$ksrc"/drivers/infiniband/sw/rxe/* "$new/"
	mkdir -p "$new/.scripts/scripts"
	for f in $cp_files; do cp -p "$ksrc/$f" "$new/.scripts/scripts/" 2>/dev/null || true; done
else
	mkdir -p "$new/.src"
	pats=()
	for f in $cp_files; do pats+=("*/$f"); done
	tar -xJf "$tarball" -C "$new/.src" --wildcards --strip-components=1 \
		'*/drivers/infiniband/sw/rxe/*' "${pats[@]}"
	mv "$new"/.src/drivers/infiniband/sw/rxe/* "$new/"
	mkdir -p "$new/.scripts"
	mv "$new/.src/scripts" "$new/.scripts/"
	rm -rf "$new/.src"
fi
[ -f "$new/rxe.c" ] || die "no rxe sources found in ${ksrc:-$tarball}"
rm -f "$new/Kconfig"
rm -rf "$tools"
mv "$new/.scripts" "$tools"

echo "derive: applying the $line series, $(sed -e 's/#.*//' -e '/^$/d' "$series_dir/series" | wc -l) patches"
ln -s "$series_dir" "$new/patches"
if ! (cd "$new" && QUILTRC="$top/ci/quiltrc" quilt push -a -q --fuzz=0 >"$new/.quilt.log" 2>&1); then
	cat "$new/.quilt.log" >&2
	die "the quilt series does not apply to ${ksrc:-$tarball}"
fi

for f in $own_files; do
	ln -s "$own/$f" "$new/$f"
done
ln -s "$top/include/uapi" "$new/uapi"
ln -s "$top/include" "$new/rxecc_include"
(cd "$new" && find . -maxdepth 1 -type f ! -name '.*' -printf '%f\n' | sort | xargs sha256sum) \
	> "$new/.rxecc-sums.tmp"
mv "$new/.rxecc-sums.tmp" "$new/.rxecc-sums"

# Keep edits that were made in the old derived tree but never refreshed into
# a patch: a file that changed since it was derived and differs from what the
# series now produces.
if [ -f "$out/.rxecc-sums" ]; then
	lost=()
	while read -r sum f; do
		[ -f "$out/$f" ] || continue
		now=$(sha256sum "$out/$f" | cut -d' ' -f1)
		[ "$now" = "$sum" ] && continue
		cmp -s "$out/$f" "$new/$f" || lost+=("$f")
	done < "$out/.rxecc-sums"
	if [ ${#lost[@]} -gt 0 ]; then
		rm -rf "$new"
		die "build/kernel/rxecc has edits not captured in a patch: ${lost[*]}
  capture them with 'cd build/kernel/rxecc && quilt refresh' (see docs/developing.md, 'Changing rxe'),
  or drop them with 'make distclean'"
	fi
fi

echo "$stamp" > "$new/.rxecc-stamp"
rm -rf "$out"
mv "$new" "$out"
echo "derive: $out is ready"
