#!/bin/bash
# Install, idempotently, every Debian package the build, the guests and the
# tests need (listed in ci/packages.txt). Does nothing when all are present.
# KVER (make deps KVER=...) adds another kernel to build for and boot: a line
# (6.12: Debian's newest of it, by its metapackages) or a version
# (6.12.118+deb12-amd64), with its headers and its linux-source-X.Y.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
mapfile -t pkgs < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/packages.txt")
default_line=6.1	# linux-image-amd64 and linux-source-6.1 in packages.txt

kernel_pkgs() {	# KVER
	local k=$1 line
	line=$(echo "$k" | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p')
	if [ -z "$line" ]; then
		echo "deps: KVER=$k is neither a kernel line (6.12) nor a Debian kernel version (6.12.118+deb12-amd64)" >&2
		return 1
	fi
	if [ "$k" = "$line" ]; then
		[ "$line" = "$default_line" ] ||
			echo "linux-image-$line-amd64 linux-headers-$line-amd64 linux-source-$line"
	elif apt-cache show "linux-image-$k" >/dev/null 2>&1 || [ -e "/boot/vmlinuz-$k" ]; then
		echo "linux-image-$k linux-headers-$k linux-source-$line"
	else
		echo "linux-image-$k-unsigned linux-headers-$k linux-source-$line"
	fi
}
if [ -n "${KVER:-}" ]; then
	extra=$(kernel_pkgs "$KVER") || exit 1
	# shellcheck disable=SC2206 # one package name per word: split on purpose
	pkgs+=($extra)
fi

# Peers the guest tests run but the host must not install (a daemon that would
# start on the host): fetched from the package registry and unpacked under
# build/peers/NAME, where the guests see them over the shared root; as the
# user who ran sudo, so that build/ stays theirs. A failure is a warning: the
# test that needs the peer fails and says so.
peers=(prometheus-node-exporter)
as_user() {
	if [ "$(id -u)" -eq 0 ] && [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then
		runuser -u "$SUDO_USER" -- "$@"
	else
		"$@"
	fi
}
fetch_peer() {	# NAME
	local dir=$here/../build/peers/$1
	[ -e "$dir/.unpacked" ] && return 0
	as_user mkdir -p "$dir" || return 1
	rm -rf "$dir/root" "$dir"/*.deb
	(cd "$dir" && as_user apt-get download -q "$1" >/dev/null 2>&1) || return 1
	as_user dpkg-deb -x "$dir"/*.deb "$dir/root" && as_user touch "$dir/.unpacked"
}
fetch_peers() {
	local p
	for p in "${peers[@]}"; do
		fetch_peer "$p" ||
			echo "deps: warning: could not fetch $p into build/peers (apt-get download; needs the package lists: apt-get update)" >&2
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
