// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The UDP source port of RoCEv2 packets: the only field of a QP's packets
 * that an ECMP hash (fib_multipath_hash_policy 1, a switch's 5-tuple hash)
 * can tell apart between two QPs of the same pair of hosts. The device's
 * udp_sport policy (enum rxecc_udp_sport) chooses it:
 *   - flow_label (the default): rdma_get_udp_sport(flow label, local QPN,
 *     remote QPN), mlx5's rule for connected QPs. The flow label comes from
 *     the address vector (the application's ah_attr, or rdma_cm: the
 *     source address' IPv6 flow label, else a hash of the rdma_cm ports);
 *     when it is 0, one is computed from both QP numbers, the same on both
 *     ends. A connected QP takes its port when it is given an address
 *     vector (to RTR, or a new path); a UD QP per packet, from the address
 *     handle and the remote QPN of the work request. For UD with a label
 *     that is mlx5's port too; with label 0 mlx5 uses one fixed port, while
 *     rxecc computes one per destination QP, so that datagrams to
 *     different QPs may take different paths.
 *   - qpn: rxe's own choice, 0xC000 | hash_32(local QPN, 14): one port per
 *     QP whatever its destination or flow label, which an application
 *     cannot steer.
 * A connected QP keeps its port until it is given another address vector:
 * a policy change applies to QPs connected after it, so no live connection
 * changes path (and order).
 *
 * Over IPv6 the header's flow label is the address vector's (RoCEv2's IPv6
 * header is the GRH), which an L3 ECMP hash of IPv6 reads; 0 unless the
 * application or rdma_cm set one.
 */
#include <net/ipv6.h>
#include "rxe.h"
#include "rxe_loc.h"
#include "rxecc_qp.h"

static u16 rxecc_qpn_sport(u32 qpn)
{
	return RXE_ROCE_V2_SPORT + (hash_32(qpn, 14) & 0x3fff);
}

static u8 rxecc_sport_policy(struct rxe_qp *qp)
{
	u8 policy;

	rcu_read_lock();
	policy = rxecc_qp_cfg(qp)->udp_sport;
	rcu_read_unlock();
	return policy;
}

/*
 * rxe_modify_qp(), once the attributes are applied: a connected QP given
 * an address vector takes its port (its destination QPN is set by the same
 * modify, to RTR).
 */
void rxecc_qp_set_sport(struct rxe_qp *qp, const struct ib_qp_attr *attr,
			int mask)
{
	if (!(mask & IB_QP_AV))
		return;
	if (rxecc_sport_policy(qp) == RXECC_UDP_SPORT_QPN)
		qp->src_port = rxecc_qpn_sport(qp_num(qp));
	else if (attr->ah_attr.ah_flags & IB_AH_GRH)
		qp->src_port = rdma_get_udp_sport(attr->ah_attr.grh.flow_label &
						  IB_GRH_FLOWLABEL_MASK,
						  qp_num(qp),
						  qp->attr.dest_qp_num);
}

/*
 * prepare4()/prepare6(): the source port of a packet whose BTH is written.
 * Connected QPs (data, acknowledgements, read responses, CNPs) use the
 * QP's; a UD or GSI QP's datagram under flow_label one from its
 * destination, under qpn the QP's.
 */
__be16 rxecc_udp_sport(struct rxe_pkt_info *pkt, const struct rxe_av *av)
{
	struct rxe_qp *qp = pkt->qp;

	if ((qp_type(qp) == IB_QPT_UD || qp_type(qp) == IB_QPT_GSI) &&
	    rxecc_sport_policy(qp) == RXECC_UDP_SPORT_FLOW_LABEL)
		return cpu_to_be16(rdma_get_udp_sport(av->grh.flow_label &
						      IB_GRH_FLOWLABEL_MASK,
						      qp_num(qp),
						      bth_qpn(pkt)));
	return cpu_to_be16(qp->src_port);
}

/* prepare6(), the IPv6 header written with a zero flow label: set it. */
void rxecc_ipv6_flow_label(struct sk_buff *skb, const struct rxe_av *av)
{
	*(__be32 *)ipv6_hdr(skb) |= cpu_to_be32(av->grh.flow_label) &
				    IPV6_FLOWLABEL_MASK;
}
