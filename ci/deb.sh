#!/bin/bash
# make deb: rxecc's Debian source package and binary packages, rxecc-dkms and
# rxecc-utils (debian/), with dpkg-buildpackage, into build/deb/. The build
# runs in a copy of the files git tracks, build/deb/rxecc-VERSION, so that the
# repository's own tree is never written and what is packaged is what a clean
# clone holds (with the work tree's edits of those files). Missing tools
# (ci/packages-deb.txt) and Build-Depends (apt-get build-dep) are installed
# first, as root, as ci/deps.sh does for the rest; lintian checks the result
# and fails on an error.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/deb
export DEBIAN_FRONTEND=noninteractive

need_root() {	# WHAT
	if [ "$(id -u)" -ne 0 ]; then
		echo "deb: missing $1; run 'make deb' as root" >&2
		exit 1
	fi
}
# As the user who ran sudo, so that build/ stays theirs (as in ci/deps.sh).
as_user() {
	if [ "$(id -u)" -eq 0 ] && [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then
		runuser -u "$SUDO_USER" -- "$@"
	else
		"$@"
	fi
}

mapfile -t tools < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$top/ci/packages-deb.txt")
missing=()
for p in "${tools[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	need_root "packages (${missing[*]})"
	echo "deb: installing ${missing[*]}"
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
src=$out/rxecc-$version
rm -rf "$src"
as_user mkdir -p "$src"
# The index's files as the work tree has them; one deleted from the work
# tree but not from the index is left out.
(cd "$top" && git ls-files -z | while IFS= read -r -d '' f; do
	if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi
done | tar --null -T - -cf -) | as_user tar -C "$src" -xf -

if ! (cd "$src" && dpkg-checkbuilddeps 2>/dev/null); then
	need_root "build dependencies ($(cd "$src" && dpkg-checkbuilddeps 2>&1 | sed 's/.*dependencies: //'))"
	echo "deb: installing the build dependencies of debian/control"
	apt-get update -q
	apt-get build-dep -y -q --no-install-recommends "$src"
fi

# Unsigned (-us -uc): a local build. The results land beside the copy.
(cd "$src" && as_user dpkg-buildpackage -us -uc)
changes=$out/rxecc_${version}_$(dpkg --print-architecture).changes
echo "deb: lintian $changes"
as_user lintian --fail-on error "$changes"
echo "deb: built in build/deb/:"
(cd "$out" && ls -1 ./*"_$version"*)
