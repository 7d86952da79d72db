#!/bin/bash
# Print the version of the guest kernel that `make deps` installed (the one
# linux-image-amd64 depends on), e.g. 6.1.0-56-amd64. KVER in the environment wins.
set -eu
if [ -n "${KVER:-}" ]; then
	echo "$KVER"
	exit 0
fi
v=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null |
	sed -n 's/^linux-image-\([^ ,]*\).*/\1/p')
if [ -z "$v" ] || [ ! -e "/boot/vmlinuz-$v" ]; then
	# No metapackage: take the newest installed Debian amd64 kernel image.
	v=$(find /boot -maxdepth 1 -name 'vmlinuz-*-amd64' -printf '%f\n' 2>/dev/null |
		sed 's/^vmlinuz-//' | sort -V | tail -n 1)
fi
if [ -z "$v" ]; then
	echo "kver: no guest kernel installed in /boot (run 'make deps')" >&2
	exit 1
fi
echo "$v"
