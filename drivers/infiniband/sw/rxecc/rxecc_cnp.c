// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DCQCN's notification point and reaction point, on the fixed-point core in
 * rxecc_dcqcn.c. Notification point: a CE-marked packet that the responder
 * or completer found in sequence earns its sender a CNP (RoCEv2 opcode 0x81,
 * at most one per np_min_time_between_cnps per QP; one due sooner is sent
 * at the end of the gap by the QP's CNP timer). Reaction point: a CNP
 * received for a QP cuts its rate (rxecc_rcv_cnp()); the transmit gate
 * (rxecc_gate.c) paces the QP at that rate and raises it over time.
 */
#include <net/inet_ecn.h>
#include <net/ipv6.h>
#include "rxe.h"
#include "rxe_loc.h"
#include "rxecc_qp.h"

#define CREATE_TRACE_POINTS
#include "rxecc_trace.h"

void rxecc_trace_rate(struct rxe_qp *qp, const struct rxecc_dcqcn_rp *rp)
{
	trace_rxecc_rate(dev_name(&qp->ibqp.device->dev), qp_num(qp),
			 rp->last_event, rp->rc, rp->rt, rp->alpha,
			 rp->t_stage, rp->bc_stage);
}

static int rxecc_send_cnp(struct rxe_qp *qp, struct rxecc_qp *cc);

enum hrtimer_restart rxecc_np_timer_fn(struct hrtimer *t)
{
	struct rxecc_qp *cc = container_of(t, struct rxecc_qp, np_timer);
	struct rxe_qp *qp = cc->qp;
	unsigned long flags;
	bool send;

	/* A QP on its way out has no references left: nothing to send. */
	if (!rxe_get(qp))
		return HRTIMER_NORESTART;
	spin_lock_irqsave(&cc->lock, flags);
	send = rxecc_dcqcn_np_timer(&cc->np, ktime_get_ns());
	spin_unlock_irqrestore(&cc->lock, flags);
	if (send && qp->valid)
		rxecc_send_cnp(qp, cc);
	rxe_put(qp);
	return HRTIMER_NORESTART;
}

/* Build and send a CNP to the peer of @qp (its sender of CE-marked data). */
static int rxecc_send_cnp(struct rxe_qp *qp, struct rxecc_qp *cc)
{
	struct rxe_dev *rxe = to_rdev(qp->ibqp.device);
	int paylen = RXE_BTH_BYTES + RXECC_CNP_RESERVED + RXE_ICRC_SIZE;
	struct rxe_pkt_info pkt = {};
	struct sk_buff *skb;
	unsigned long flags;
	int err = -ENOMEM;

	if (!rxecc_resp_ready(qp)) {
		err = -EINVAL;
		goto fail;
	}
	skb = rxe_init_packet(rxe, &qp->pri_av, paylen, &pkt);
	if (!skb)
		goto fail;
	pkt.rxe = rxe;
	pkt.qp = qp;
	pkt.opcode = RXECC_OPCODE_CNP;
	pkt.mask |= rxe_opcode[RXECC_OPCODE_CNP].mask;
	pkt.paylen = paylen;
	pkt.psn = 0;
	bth_init(&pkt, RXECC_OPCODE_CNP, 0, 0, 0, IB_DEFAULT_PKEY_FULL,
		 qp->attr.dest_qp_num, 0, 0);
	bth_set_becn(&pkt, 1);
	memset(pkt.hdr + RXE_BTH_BYTES, 0, RXECC_CNP_RESERVED);
	err = rxe_prepare(&qp->pri_av, &pkt, skb);
	if (err) {
		kfree_skb(skb);
		goto fail;
	}
	err = rxe_xmit_packet(qp, &pkt, skb);
	err = net_xmit_eval(err);	/* NET_XMIT_CN (6.5+ passes it up): queued */
	if (err)
		goto fail;
	rxe_counter_inc(rxe, RXECC_CNT_NP_CNP_SENT);
	spin_lock_irqsave(&cc->lock, flags);
	cc->cnp_sent++;
	spin_unlock_irqrestore(&cc->lock, flags);
	trace_rxecc_cnp_sent(dev_name(&rxe->ib_dev.dev), qp_num(qp),
			     qp->attr.dest_qp_num);
	return 0;
fail:
	rxe_counter_inc(rxe, RXECC_CNT_NP_CNP_SEND_ERR);
	return err;
}

static u8 rxecc_rcv_dsfield(struct sk_buff *skb)
{
	if (skb->protocol == htons(ETH_P_IP))
		return ip_hdr(skb)->tos;
	return ipv6_get_dsfield(ipv6_hdr(skb));
}

/*
 * Every packet rxe accepted (header and ICRC checked) passes here before it
 * is queued to the responder or the completer: the count of CE marks, its
 * arrival for PFC and, where the receive path runs the responder and the
 * completer itself (rxe 6.1's tasklets), its wait in the receive backlog.
 */
void rxecc_np_rcv(struct rxe_pkt_info *pkt, struct sk_buff *skb)
{
	u8 ds = rxecc_rcv_dsfield(skb);

	rxecc_pfc_rx(pkt->rxe, skb, ds, RXECC_RX_IN_TASK ? RXECC_PFC_RX_ARRIVED :
		     RXECC_PFC_RX_ARRIVED | RXECC_PFC_RX_TAKEN);
	if (unlikely(INET_ECN_is_ce(ds)))
		rxe_counter_inc(pkt->rxe, RXECC_CNT_NP_ECN_MARKED);
}

/*
 * rxe 6.5 and later: the responder or the completer, in its work item,
 * takes a received packet from its QP's queue for the first time. Its wait
 * in the receive backlog (PFC) ends here, not where the receive path queued
 * it: that path only queues, and a receiver that cannot keep up holds its
 * packets in the QP's queues, as an RNIC holds them in its buffer.
 */
void rxecc_np_taken(struct rxe_pkt_info *pkt)
{
	struct sk_buff *skb = PKT_TO_SKB(pkt);

	if (RXECC_RX_IN_TASK)
		rxecc_pfc_rx(pkt->rxe, skb, rxecc_rcv_dsfield(skb), RXECC_PFC_RX_TAKEN);
}

/*
 * Notification point: a packet the responder or the completer found in
 * sequence (its PSN the one expected). Only then does a CE mark earn the
 * sender a CNP: a forged packet with a guessed QPN and the wrong PSN, CE
 * marked, must not make this host send CNPs to its peer.
 */
void rxecc_np_in_seq(struct rxe_qp *qp, struct rxe_pkt_info *pkt)
{
	u8 ds = rxecc_rcv_dsfield(PKT_TO_SKB(pkt));
	enum rxecc_dcqcn_np_action act = RXECC_NP_PENDING;
	struct rxecc_dev_config *cfg;
	struct rxecc_qp *cc = NULL;
	unsigned long flags;
	u64 when = 0;

	if (likely(!INET_ECN_is_ce(ds)))
		return;
	/*
	 * CNPs go to the data sender: for requests, the requester; for RDMA
	 * READ responses (ACKs with payload), the responder. Plain ACKs and
	 * multicast get none.
	 */
	if (!qp || !rxecc_qp_connected(qp) ||
	    !((pkt->mask & RXE_REQ_MASK) ||
	      ((pkt->mask & RXE_ACK_MASK) && (pkt->mask & RXE_PAYLOAD_MASK))))
		return;

	rcu_read_lock();
	cfg = rxecc_qp_cfg(qp);
	if (cfg->np_enable & BIT(cfg->dscp2prio[ds >> 2]))
		cc = rxecc_qp_state(qp);
	if (cc) {
		spin_lock_irqsave(&cc->lock, flags);
		act = cc->stopped ? RXECC_NP_PENDING :
		      rxecc_dcqcn_np_ce(&cc->np, &cfg->dcqcn, ktime_get_ns(), &when);
		if (act == RXECC_NP_DEFER)
			hrtimer_start(&cc->np_timer, ns_to_ktime(when),
				      HRTIMER_MODE_ABS_SOFT);
		spin_unlock_irqrestore(&cc->lock, flags);
	}
	rcu_read_unlock();
	if (act == RXECC_NP_SEND)
		rxecc_send_cnp(qp, cc);
}

/*
 * The CNP came from the QP's peer (its destination address) to the QP's own
 * address (its source address), the path the QP's packets take.
 */
static bool rxecc_cnp_on_path(struct rxe_qp *qp, struct sk_buff *skb)
{
	struct rxe_av *av = &qp->pri_av;

	if (skb->protocol == htons(ETH_P_IP))
		return av->network_type == RXE_NETWORK_TYPE_IPV4 &&
		       ip_hdr(skb)->saddr == av->dgid_addr._sockaddr_in.sin_addr.s_addr &&
		       ip_hdr(skb)->daddr == av->sgid_addr._sockaddr_in.sin_addr.s_addr;
	return av->network_type == RXE_NETWORK_TYPE_IPV6 &&
	       ipv6_addr_equal(&ipv6_hdr(skb)->saddr,
			       &av->dgid_addr._sockaddr_in6.sin6_addr) &&
	       ipv6_addr_equal(&ipv6_hdr(skb)->daddr,
			       &av->sgid_addr._sockaddr_in6.sin6_addr);
}

/*
 * The CNP's P_Key is the QP's: rxe has the default partition only, as
 * rxe_rcv() checks for every other packet.
 */
static bool rxecc_cnp_pkey_ok(struct rxe_pkt_info *pkt)
{
	return (bth_pkey(pkt) & 0x7fff) == (IB_DEFAULT_PKEY_FULL & 0x7fff);
}

/*
 * Reaction point: a packet with opcode 0x81. It consumes the packet and the
 * device reference rxe's receive path took, like rxe_rcv() does.
 */
void rxecc_rcv_cnp(struct rxe_pkt_info *pkt, struct sk_buff *skb)
{
	struct rxe_dev *rxe = pkt->rxe;
	struct rxe_qp *qp = NULL;
	struct rxecc_dev_config *cfg;
	struct rxecc_qp *cc;
	enum rxecc_dcqcn_cnp_result res;
	struct rxecc_dcqcn_rp snap;
	enum rxe_counters drop;
	enum ib_qp_state state;
	unsigned long flags;
	bool changed;
	u32 qpn = bth_qpn(pkt);

	if (pkt->paylen != RXE_BTH_BYTES + RXECC_CNP_RESERVED + RXE_ICRC_SIZE ||
	    bth_tver(pkt) != BTH_TVER || rxe_icrc_check(skb, pkt)) {
		drop = RXECC_CNT_RP_CNP_DROP_MALFORMED;
		goto drop;
	}
	if (!rxecc_cnp_pkey_ok(pkt)) {
		drop = RXECC_CNT_RP_CNP_DROP_PKEY;
		goto drop;
	}
	if (qpn <= 1 || qpn == IB_MULTICAST_QPN) {
		drop = RXECC_CNT_RP_CNP_DROP_UNKNOWN_QP;
		goto drop;
	}
	qp = rxe_pool_get_index(&rxe->qp_pool, qpn);
	if (!qp) {
		drop = RXECC_CNT_RP_CNP_DROP_UNKNOWN_QP;
		goto drop;
	}
	/*
	 * A QP sends data in RTS (requests) and from RTR on (RDMA READ
	 * responses: a perftest server stays in RTR).
	 */
	state = READ_ONCE(qp->attr.qp_state);
	if (!qp->valid || !rxecc_qp_connected(qp) ||
	    (state != IB_QPS_RTR && state != IB_QPS_RTS && state != IB_QPS_SQD)) {
		drop = RXECC_CNT_RP_CNP_DROP_QP_STATE;
		goto drop;
	}
	if (!rxecc_cnp_on_path(qp, skb)) {
		drop = RXECC_CNT_RP_CNP_DROP_SRC;
		goto drop;
	}

	rcu_read_lock();
	cfg = rxecc_qp_cfg(qp);
	if (!(cfg->rp_enable & BIT(rxecc_qp_prio(qp, cfg)))) {
		rcu_read_unlock();
		rxe_counter_inc(rxe, RXECC_CNT_RP_CNP_IGNORED);
		goto out;
	}
	/* the QP's first CNP gives it its state (no memory: not handled) */
	cc = rxecc_qp_state(qp);
	if (!cc) {
		rcu_read_unlock();
		rxe_counter_inc(rxe, RXECC_CNT_RP_CNP_IGNORED);
		goto out;
	}
	spin_lock_irqsave(&cc->lock, flags);
	changed = !cc->rp.active;
	/* a limiter that starts again starts its pacer afresh: no credit */
	if (changed)
		memset(&cc->pace, 0, sizeof(cc->pace));
	res = rxecc_dcqcn_rp_cnp(&cc->rp, &cfg->dcqcn, rxecc_line_kbps(qp, cfg),
				 ktime_get_ns());
	changed |= res != RXECC_CNP_COALESCED;
	cc->cnp_handled++;
	snap = cc->rp;
	spin_unlock_irqrestore(&cc->lock, flags);
	rcu_read_unlock();

	rxe_counter_inc(rxe, RXECC_CNT_RP_CNP_HANDLED);
	trace_rxecc_cnp_handled(dev_name(&rxe->ib_dev.dev), qpn, res, snap.rc,
				snap.rt, snap.alpha);
	if (changed)
		rxecc_trace_rate(qp, &snap);
	goto out;

drop:
	rxe_counter_inc(rxe, drop);
	rxe_counter_inc(rxe, RXECC_CNT_RP_CNP_IGNORED);
out:
	if (qp)
		rxe_put(qp);
	kfree_skb(skb);
	ib_device_put(&rxe->ib_dev);
}
