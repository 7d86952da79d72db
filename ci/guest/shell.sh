#!/bin/bash
# `make shell`: a guest with rdma_rxecc loaded and an rxecc device x0 up on a
# veth (10.0.0.1/24, fd00::1/64), then an interactive shell. Leave with 'exit'.
# shellcheck source=../../lib/shell/lib.sh
source "$RXECC_TOP/lib/shell/lib.sh"
veth_up d0 10.0.0.1/24 fd00::1/64
rxecc_load && rdma_link_add x0 rxecc d0 || echo "shell: could not set up x0 (see dmesg)"
cat <<'TXT'

rxecc guest shell: rdma_rxecc is loaded and x0 is up on d0 (10.0.0.1, fd00::1).
Things to try:
  rdma link; ibv_devinfo -d x0; rdma statistic show link x0/1
  ib_write_bw -d x0 -x 1 -F & sleep 1; ib_write_bw -d x0 -x 1 -F 10.0.0.1
  rping -s -a 10.0.0.1 -C 5 -V & rping -c -a 10.0.0.1 -C 5 -V -v
  dmesg | tail
The host root is mounted read-only under a tmpfs overlay: changes vanish on exit.
Type 'exit' to power the guest off.
TXT
cd "$RXECC_TOP" && exec bash -i
