#!/bin/bash
# Install, idempotently, every Debian package the build, the guests and the
# tests need (listed in ci/packages.txt). Does nothing when all are present.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
mapfile -t pkgs < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/packages.txt")

# Peers the guest tests run but the host must not install (a daemon that would
# start on the host): fetched from the package registry and unpacked under
# build/peers/NAME, where the guests see them over the shared root.
peers=(prometheus-node-exporter)
fetch_peers() {
	local p dir
	for p in "${peers[@]}"; do
		dir=$here/../build/peers/$p
		[ -e "$dir/.unpacked" ] && continue
		mkdir -p "$dir"
		(cd "$dir" && rm -f ./*.deb && apt-get download -q "$p" >/dev/null 2>&1) ||
			{ echo "deps: cannot download $p (apt-get download; run 'apt-get update' as root)" >&2; return 1; }
		dpkg-deb -x "$dir"/*.deb "$dir/root" && touch "$dir/.unpacked"
	done
}

missing=()
for p in "${pkgs[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all ${#pkgs[@]} packages are installed"
	fetch_peers
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages (${missing[*]}); run 'make deps' as root" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
"$here/kver.sh" >/dev/null
fetch_peers
echo "deps: done (guest kernel $("$here/kver.sh"))"
