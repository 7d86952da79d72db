// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The ICRC of loopback packets.
 *
 * rxe sends a packet to its own device (the destination MAC is the
 * netdev's own: two QPs of one device) by handing the socket buffer to
 * its receive path, rxe_loopback(): the packet never reaches a wire, a
 * switch or another host, and rxe's receive path already trusts it for
 * what the network would have to prove (rxe_chk_dgid() skips it). Its
 * ICRC, a CRC-32 of every byte, cost a quarter of the loopback datapath's
 * busy time under TCG (docs/performance.md), protecting nothing. rxecc
 * neither computes nor checks it there, as Linux's loopback netdev never
 * computes a checksum. The mark cannot come from the network: the UDP
 * receive path sets a received packet's mask afresh.
 */
#include "rxe.h"
#include "rxe_loc.h"
#include "rxecc.h"

bool rxecc_icrc_skip(const struct rxe_pkt_info *pkt)
{
	return pkt->mask & RXE_LOOPBACK_MASK;
}
