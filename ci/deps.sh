#!/bin/bash
# Install, idempotently, every Debian package the build, the guests and the
# tests need (listed in ci/packages.txt). Does nothing when all are present.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
mapfile -t pkgs < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/packages.txt")

missing=()
for p in "${pkgs[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all ${#pkgs[@]} packages are installed"
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
echo "deps: done (guest kernel $("$here/kver.sh"))"
