#!/bin/bash
# Print the version of the kernel rxecc is built and tested for, e.g. 6.1.0-57-amd64.
# KVER in the environment chooses it: a full version is printed as it is; a kernel
# line (6.1, 6.12) is the newest Debian amd64 kernel of that line in /boot. Without
# KVER: the one linux-image-amd64 depends on (Debian 12's 6.1), else the newest in /boot.
set -eu
newest() {	# [LINE]
	find /boot -maxdepth 1 -name "vmlinuz-${1:+$1.}*-amd64" -printf '%f\n' 2>/dev/null |
		sed 's/^vmlinuz-//' | sort -V | tail -n 1
}
if [ -n "${KVER:-}" ]; then
	if [[ "$KVER" =~ ^[0-9]+\.[0-9]+$ ]]; then
		v=$(newest "$KVER")
		if [ -z "$v" ]; then
			echo "kver: no Linux $KVER kernel installed in /boot (run 'make deps KVER=$KVER')" >&2
			exit 1
		fi
		echo "$v"
	else
		echo "$KVER"
	fi
	exit 0
fi
v=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null |
	sed -n 's/^linux-image-\([^ ,]*\).*/\1/p')
if [ -z "$v" ] || [ ! -e "/boot/vmlinuz-$v" ]; then
	# No metapackage: take the newest installed Debian amd64 kernel image.
	v=$(newest)
fi
if [ -z "$v" ]; then
	echo "kver: no guest kernel installed in /boot (run 'make deps')" >&2
	exit 1
fi
echo "$v"
