// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The transmit gate: before rxe's requester (rxe_requester()) or responder
 * (read_reply(), RDMA READ responses) builds a packet, rxecc_tx_wait() asks,
 * in this order, whether the QP waits for a timer after a local drop, a
 * failed buffer or a full egress queue (rxecc_retry_hold()), whether the
 * QP's priority is paused by PFC (rxecc_pfc.c),
 * whether the host's own egress queue is over tx_qlimit, and whether the
 * DCQCN rate limiter holds the QP back (the pacer: a packet is due when the
 * previous ones have taken their time at the QP's rate Rc). A QP that must
 * wait is scheduled again by its timer, or by the end of the pause. Also
 * here: the ECN, DSCP and priority of every packet sent (rxecc_tx_tos())
 * and how often a paced QP asks for an ACK (rxecc_rp_ack_req()).
 */
#include <linux/if_vlan.h>
#include <net/inet_ecn.h>
#include <net/sch_generic.h>
#include "rxe.h"
#include "rxe_loc.h"
#include "rxecc_qp.h"

u8 rxecc_tx_tos(struct rxe_pkt_info *pkt, struct sk_buff *skb, u8 tclass)
{
	struct rxecc_dev_config *cfg;
	u8 tos;

	rcu_read_lock();
	cfg = rxecc_qp_cfg(pkt->qp);
	if (pkt->mask & RXECC_CNP_MASK) {
		/* CNPs: their own DSCP and priority, never ECN-capable. */
		tos = cfg->dcqcn.np_cnp_dscp << 2;
		skb->priority = cfg->dcqcn.np_cnp_prio;
	} else {
		tos = cfg->ecn ? (tclass & ~INET_ECN_MASK) | cfg->ecn : tclass;
		skb->priority = rxecc_cfg_prio(cfg, tclass);
	}
	rcu_read_unlock();
	return tos;
}

enum hrtimer_restart rxecc_rl_timer_fn(struct hrtimer *t)
{
	struct rxecc_qp *cc = container_of(t, struct rxecc_qp, rl_timer);
	struct rxe_qp *qp = cc->qp;
	unsigned long flags;
	bool req, resp;

	spin_lock_irqsave(&cc->lock, flags);
	req = cc->wait_req;
	resp = cc->wait_resp;
	cc->wait_req = 0;
	cc->wait_resp = 0;
	WRITE_ONCE(cc->hold, 0);
	spin_unlock_irqrestore(&cc->lock, flags);
	if (req)
		rxecc_qp_sched(qp, false);
	if (resp)
		rxecc_qp_sched(qp, true);
	return HRTIMER_NORESTART;
}

/*
 * The reaction point's gate: true if the QP must wait before it sends a
 * packet of @payload bytes (the limiter timer is armed and will schedule the
 * requester or, with @resp, the responder). Called before anything of the
 * packet is built or committed. A QP that never saw a CNP, or whose rate has
 * recovered to the maximum, costs two reads here.
 */
bool rxecc_rp_wait(struct rxe_qp *qp, int opcode, u32 payload, bool resp)
{
	struct rxecc_qp *cc = rxecc_qp_peek(qp);
	struct rxecc_dev_config *cfg;
	struct rxecc_dcqcn_rp snap;
	unsigned long flags;
	bool changed, wait = false;
	u64 now, bytes, line, due, late = 0, idle = 0;

	if (likely(!cc || !READ_ONCE(cc->rp.active)))
		return false;

	bytes = payload + RXECC_WIRE_OVERHEAD + rxe_opcode[opcode].length;
	rcu_read_lock();
	cfg = rxecc_qp_cfg(qp);
	line = rxecc_line_kbps(qp, cfg);
	spin_lock_irqsave(&cc->lock, flags);
	now = ktime_get_ns();
	if (!(cfg->rp_enable & BIT(rxecc_qp_prio(qp, cfg)))) {
		/* The reaction point was switched off for this priority. */
		changed = cc->rp.active;
		memset(&cc->rp, 0, sizeof(cc->rp));
		memset(&cc->pace, 0, sizeof(cc->pace));
		goto out;
	}
	changed = rxecc_dcqcn_rp_advance(&cc->rp, &cfg->dcqcn, line, now);
	if (!cc->rp.active)
		goto out;
	due = rxecc_dcqcn_pace_start(&cc->pace, cc->rp.rc);
	if (now < due && !cc->stopped) {
		if (resp)
			cc->wait_resp = 1;
		else
			cc->wait_req = 1;
		cc->rp_tx_deferred++;
		rxecc_dcqcn_pace_hold(&cc->pace);
		/*
		 * The next timer increase event may raise the rate and make the
		 * packet due sooner: look again then.
		 */
		if (cc->rp.t_next_inc > now && cc->rp.t_next_inc < due)
			due = cc->rp.t_next_inc;
		/* never later than a wake-up already due (rxecc_tx_defer()) */
		if (!hrtimer_is_queued(&cc->rl_timer) ||
		    ktime_before(ns_to_ktime(due), hrtimer_get_expires(&cc->rl_timer)))
			hrtimer_start(&cc->rl_timer, ns_to_ktime(due), HRTIMER_MODE_ABS_SOFT);
		wait = true;
		goto out;
	}
	late = cc->pace.late_ns;
	idle = cc->pace.idle_ns;
	rxecc_dcqcn_pace_sent(&cc->pace, cc->rp.rc, bytes, now);
	/* whole microseconds of the QP's running sums, carried exactly */
	late = div_u64(cc->pace.late_ns, NSEC_PER_USEC) - div_u64(late, NSEC_PER_USEC);
	idle = div_u64(cc->pace.idle_ns, NSEC_PER_USEC) - div_u64(idle, NSEC_PER_USEC);
	changed |= rxecc_dcqcn_rp_sent(&cc->rp, &cfg->dcqcn, line, bytes, now);
out:
	snap = cc->rp;
	spin_unlock_irqrestore(&cc->lock, flags);
	rcu_read_unlock();
	if (wait)
		rxe_counter_inc(to_rdev(qp->ibqp.device), RXECC_CNT_RP_TX_DEFERRED);
	if (late || idle) {
		struct rxe_dev *rxe = to_rdev(qp->ibqp.device);

		atomic64_add(late, &rxe->stats_counters[RXECC_CNT_RP_PACE_LATE_US]);
		atomic64_add(idle, &rxe->stats_counters[RXECC_CNT_RP_PACE_IDLE_US]);
	}
	if (changed)
		rxecc_trace_rate(qp, &snap);
	return wait;
}

/*
 * The QP waits for the time one MTU-sized packet takes on the link, at least
 * @min_ns: its timer schedules the requester or, with @resp, the responder
 * then, never later than a wake-up already due. False if the QP is being
 * cleaned up or reset (nothing arms its timer), or has no state and can
 * get none: it must not wait then.
 */
bool rxecc_tx_defer(struct rxe_qp *qp, const struct rxecc_dev_config *cfg,
		    bool resp, u64 min_ns)
{
	u64 mbps = rxecc_link_mbps(to_rdev(qp->ibqp.device), cfg);
	struct rxecc_qp *cc = rxecc_qp_state(qp);
	bool armed = false;
	unsigned long flags;
	ktime_t when;
	u64 wait;

	wait = max_t(u64, div64_u64((u64)(qp->mtu + RXECC_WIRE_OVERHEAD) * 8000, mbps),
		     min_ns);

	if (!cc)
		return false;
	spin_lock_irqsave(&cc->lock, flags);
	if (cc->stopped)
		goto out;
	armed = true;
	if (resp)
		cc->wait_resp = 1;
	else
		cc->wait_req = 1;
	WRITE_ONCE(cc->hold, cc->hold | (resp ? RXECC_WAIT_RESP : RXECC_WAIT_REQ));
	when = ns_to_ktime(ktime_get_ns() + wait);
	if (!hrtimer_is_queued(&cc->rl_timer) ||
	    ktime_before(when, hrtimer_get_expires(&cc->rl_timer)))
		hrtimer_start(&cc->rl_timer, when, HRTIMER_MODE_ABS_SOFT);
out:
	spin_unlock_irqrestore(&cc->lock, flags);
	return armed;
}

/*
 * Bytes queued in the host's own egress qdisc that packets of priority @prio
 * leaving @dev enter: the root qdisc's backlog, or on a multiqueue root (mq,
 * mqprio) the backlog of the transmit queues of @prio's traffic class (all
 * of them without classes). RCU read side held.
 */
static u32 rxecc_egress_backlog(struct net_device *dev, u8 prio)
{
	struct Qdisc *q = rcu_dereference(dev->qdisc);
	unsigned int first = 0, n, i;
	u32 qlen, backlog, sum = 0;

	if (!(q->flags & TCQ_F_MQROOT)) {
		qdisc_qstats_qlen_backlog(q, &qlen, &backlog);
		return backlog;
	}
	n = dev->real_num_tx_queues;
	if (netdev_get_num_tc(dev)) {
		int tc = netdev_get_prio_tc_map(dev, prio);

		first = dev->tc_to_txq[tc].offset;
		n = dev->tc_to_txq[tc].count;
	}
	for (i = first; i < first + n && i < dev->real_num_tx_queues; i++) {
		q = rcu_dereference(netdev_get_tx_queue(dev, i)->qdisc);
		qdisc_qstats_qlen_backlog(q, &qlen, &backlog);
		sum += backlog;
	}
	return sum;
}

/*
 * The local egress queue: while the qdisc the QP's packets enter holds
 * tx_qlimit bytes or more, the QP waits a packet time instead of adding to
 * it (and, when it fills, being dropped there).
 */
static bool rxecc_egress_wait(struct rxe_qp *qp, bool resp)
{
	struct rxe_dev *rxe = to_rdev(qp->ibqp.device);
	struct net_device *dev = rxe->cc.ndev;
	struct rxecc_dev_config *cfg;
	bool wait = false;

	rcu_read_lock();
	cfg = rxecc_qp_cfg(qp);
	if (likely(!cfg->tx_qlimit))
		goto out;
	if (is_vlan_dev(dev))
		dev = vlan_dev_real_dev(dev);
	if (rxecc_egress_backlog(dev, rxecc_qp_prio(qp, cfg)) >= cfg->tx_qlimit)
		wait = rxecc_tx_defer(qp, cfg, resp, RXECC_TX_RETRY_MIN_NS);
out:
	rcu_read_unlock();
	if (wait)
		rxe_counter_inc(rxe, RXECC_CNT_TX_QUEUE_DEFERRED);
	return wait;
}

/*
 * The gate before a packet is built: a QP being destroyed sends nothing more
 * (no timer wakes it: its cleanup follows), a QP that waits after a local
 * drop waits for its timer, a paused priority waits, then the egress queue,
 * then the rate limiter.
 */
bool rxecc_tx_wait(struct rxe_qp *qp, int opcode, u32 payload, bool resp)
{
	return rxecc_qp_destroyed(qp) || rxecc_retry_hold(qp, resp) ||
	       rxecc_pfc_wait(qp, resp) || rxecc_egress_wait(qp, resp) ||
	       rxecc_rp_wait(qp, opcode, payload, resp);
}

/*
 * rxe asks for an ACK at the end of a message and every RXE_MAX_PKT_PER_ACK
 * packets. A paced RC QP asks more often when that many packets take a
 * quarter of its transport timeout or more at its rate: otherwise a long
 * message at a low rate outlasts the timeout, which then retransmits data
 * that was only held back by the limiter. It asks every n packets, n the
 * packets that fit in a quarter of the timeout at Rc (at least 1), so the
 * ACKs, each a packet to build, send and take, stay few at high rates. n
 * follows Rc, not what the fabric drains: a QP whose Rc is still far above
 * its share asks as rarely as rxe does, as it would without DCQCN. A QP whose
 * priority PFC paused a moment ago asks with every packet
 * (rxecc_pfc_ack_req()). Called with qp->req.noack_pkts already counting
 * this packet.
 */
#define RXECC_ACK_TIMEOUT_SHARE	4

bool rxecc_rp_ack_req(struct rxe_qp *qp)
{
	struct rxecc_qp *cc;
	u64 rc, pkt_ns, budget_ns, n;

	if (rxecc_pfc_ack_req(qp))
		return true;
	cc = rxecc_qp_peek(qp);
	if (!cc || !READ_ONCE(cc->rp.active) || !qp->qp_timeout_jiffies)
		return false;
	rc = READ_ONCE(cc->rp.rc);
	pkt_ns = rxecc_dcqcn_tx_ns(qp->mtu + RXECC_WIRE_OVERHEAD, rc);
	budget_ns = (u64)jiffies_to_msecs(qp->qp_timeout_jiffies) * NSEC_PER_MSEC /
		    RXECC_ACK_TIMEOUT_SHARE;
	n = pkt_ns ? div64_u64(budget_ns, pkt_ns) : RXE_MAX_PKT_PER_ACK;
	return qp->req.noack_pkts >= max_t(u64, n, 1);
}
