// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * rxecc: IEEE 802.1Qbb priority flow control at the endpoint.
 *
 * A real RNIC stops transmitting a priority when its link partner sends a
 * PFC frame for it. rxecc plays the RNIC: one packet_type handler takes the
 * MAC control frames (EtherType 0x8808) arriving on any netdev that carries
 * an rxecc device, and for every priority the frame enables (and the
 * device's pfc_enable allows) pauses that priority for time x 512 bit times
 * at the port speed, or resumes it at once for a time of 0 (XON). A new
 * XOFF restarts the countdown. While a priority is paused, QPs whose traffic
 * has that priority stop at the transmit gate (rxecc_tx_wait(), before a
 * packet is built) and wait on the device's list for the priority; the end
 * of the pause (XON, or the device's hrtimer at expiry) schedules them
 * again. QPs of other priorities keep sending.
 *
 * The device also sends PFC frames to its link partner when its own
 * receive backlog of a PFC priority grows. rxe 6.1 takes packets from the
 * CPU's input queue (netif_rx() put them there) and handles each at once,
 * so the backlog a software RNIC has is that queue; since 6.5 rxe queues
 * them to their QP's work item, and the backlog is both queues. rxecc
 * measures how long every packet of a priority (its DSCP through
 * dscp2prio) waited until it was taken (rxecc_pfc_rx()). When one
 * waited pfc_rx_xoff microseconds or more, a soft hrtimer sends XOFF out of
 * the netdev (past its queues, as a MAC control frame), refreshes it at half
 * its pause time (at most every 100 us) and sends XON when a packet
 * waited pfc_rx_xon or less, or when none came for pfc_rx_xoff since the
 * XOFF and the last packet.
 *
 * Pause-storm prevention (mlx5's stall prevention): a priority held in XOFF
 * for device_stall_critical_watermark gets its XON, and no XOFF until its
 * backlog is short again (a packet waited pfc_rx_xon or less, or none came
 * for pfc_rx_xoff): a receiver that cannot drain gives up being lossless
 * rather than freeze the fabric behind it.
 */
#include <linux/if_vlan.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>
#include <net/rxecc_pfc.h>
#include "rxe.h"
#include "rxe_loc.h"
#include "rxecc_qp.h"

/*
 * After an XOFF for a priority, its QPs ask for an ACK with every packet for
 * this long (as a rate-limited QP does): a paused fabric queues data, and a
 * whole message in those queues can outlast the transport timeout, whose
 * timer only an ACK restarts; the retransmission would then send the same
 * data into the same queues once more.
 */
#define RXECC_PFC_ACK_MS	100

static struct rxe_dev *rxe_of_pfc(struct rxecc_pfc *pfc)
{
	return container_of(pfc, struct rxe_dev, cc.pfc);
}

/* Run the send timer now (every start of it is under the lock). */
static void rxecc_pfc_tx_kick(struct rxecc_pfc *pfc)
{
	unsigned long flags;

	spin_lock_irqsave(&pfc->lock, flags);
	if (!pfc->tx_kick && !rxe_of_pfc(pfc)->cc.ndev_gone) {
		pfc->tx_kick = true;
		hrtimer_start(&pfc->tx_timer, 0, HRTIMER_MODE_REL_SOFT);
	}
	spin_unlock_irqrestore(&pfc->lock, flags);
}

/*
 * Every packet rxe accepted: when it arrived (@what RXECC_PFC_RX_ARRIVED,
 * rxe_rcv(): "none came" ends a stall) and how long it waited in the
 * receive backlog (RXECC_PFC_RX_TAKEN), from netif_rx() on the netdev
 * (which stamps it while any device sends PFC: net_enable_timestamp())
 * until it is taken. In rxe 6.1 rxe_rcv() takes it, after the CPU's input
 * queue held it; since 6.5 the QP's work item does (rxecc_np_taken()),
 * after the QP's queue held it too. It is the software counterpart of an
 * RNIC's receive buffer.
 */
void rxecc_pfc_rx(struct rxe_dev *rxe, const struct sk_buff *skb, u8 dsfield,
		  unsigned int what)
{
	struct rxecc_pfc *pfc = &rxe->cc.pfc;
	u8 on = READ_ONCE(pfc->rx_on);
	struct rxecc_dev_config *cfg;
	u64 limit;
	s64 wait;
	u8 prio;

	if (likely(!on) || !skb->tstamp || !rxecc_skb_tstamp_real(skb))
		return;
	rcu_read_lock();
	cfg = rcu_dereference(rxe->cc.cfg);
	if (!cfg)
		goto out;
	prio = cfg->dscp2prio[dsfield >> 2];
	if (!(on & BIT(prio)))
		goto out;
	if (what & RXECC_PFC_RX_ARRIVED)
		WRITE_ONCE(pfc->rx_last[prio], ktime_get_ns());
	if (!(what & RXECC_PFC_RX_TAKEN))
		goto out;
	wait = max_t(s64, ktime_get_real_ns() - ktime_to_ns(skb->tstamp), 0);
	WRITE_ONCE(pfc->rx_wait[prio], wait);
	if ((READ_ONCE(pfc->xoff_sent) | READ_ONCE(pfc->stalled)) & BIT(prio)) {
		limit = (u64)cfg->pfc_rx_xon * NSEC_PER_USEC;
		if (wait <= limit)
			rxecc_pfc_tx_kick(pfc);
	} else {
		limit = (u64)cfg->pfc_rx_xoff * NSEC_PER_USEC;
		if (wait >= limit) {
			set_bit(prio, &pfc->rx_over);
			rxecc_pfc_tx_kick(pfc);
		}
	}
out:
	rcu_read_unlock();
}

/*
 * The configuration changed (mutex held, @cfg installed; NULL: the device
 * goes, after rxecc_pfc_dev_exit()).
 */
void rxecc_pfc_cfg_changed(struct rxe_dev *rxe, const struct rxecc_dev_config *cfg)
{
	struct rxecc_pfc *pfc = &rxe->cc.pfc;
	u8 on = cfg && cfg->pfc_rx_xoff ? cfg->pfc_enable : 0;

	if (on && !pfc->rx_tstamp)
		net_enable_timestamp();
	else if (!on && pfc->rx_tstamp)
		net_disable_timestamp();
	pfc->rx_tstamp = on;
	WRITE_ONCE(pfc->rx_on, on);
	/* the timer sends XON for what is no longer on */
	if (cfg && (READ_ONCE(pfc->xoff_sent) || READ_ONCE(pfc->stalled)))
		rxecc_pfc_tx_kick(pfc);
}

/* Send one PFC frame out of the device's netdev (no lock held). */
static void rxecc_pfc_send(struct rxe_dev *rxe, u8 enable, u8 xoff)
{
	struct net_device *dev = rxe->cc.ndev;
	struct sk_buff *skb;
	int p;

	/* a MAC control frame: untagged, past the port's queues */
	if (is_vlan_dev(dev))
		dev = vlan_dev_real_dev(dev);
	skb = pfc_frame_build(dev, enable, xoff, PFC_QUANTA_MAX);
	if (!skb || __dev_direct_xmit(skb, 0) != NET_XMIT_SUCCESS) {
		rxe_counter_inc(rxe, RXECC_CNT_PFC_TX_ERR);
		return;
	}
	for (p = 0; p < PFC_NUM_PRIO; p++)
		if (enable & BIT(p))
			rxe_counter_inc(rxe, RXECC_PFC_TX_CNT(p, 0));
}

/* The warning watermark in ns: its own, or 85 % of the critical one (80 ms at least). */
static u64 rxecc_pfc_minor_ns(const struct rxecc_dev_config *cfg)
{
	u32 ms = cfg->pfc_stall_minor;

	if (!ms && cfg->pfc_stall_critical)
		ms = max_t(u32, RXECC_PFC_STALL_MIN_MS, cfg->pfc_stall_critical * 85 / 100);
	return (u64)ms * NSEC_PER_MSEC;
}

/*
 * Priority @p has been in XOFF since xoff_since[p] (lock held): count the
 * warning at @minor, and at @crit stop pausing (true: send its XON now).
 * *@next: when to look again.
 */
static bool rxecc_pfc_storm_check(struct rxe_dev *rxe, int p, u64 now, u64 minor,
				  u64 crit, u64 *next)
{
	struct rxecc_pfc *pfc = &rxe->cc.pfc;
	u64 held = now - pfc->xoff_since[p];

	if (minor && !(pfc->stall_warned & BIT(p))) {
		if (held >= minor) {
			pfc->stall_warned |= BIT(p);
			rxe_counter_inc(rxe, RXECC_CNT_PAUSE_STORM_WARN);
		} else {
			*next = min(*next, pfc->xoff_since[p] + minor);
		}
	}
	if (!crit)
		return false;
	if (held < crit) {
		*next = min(*next, pfc->xoff_since[p] + crit);
		return false;
	}
	WRITE_ONCE(pfc->stalled, pfc->stalled | BIT(p));
	rxe_counter_inc(rxe, RXECC_CNT_PAUSE_STORM_ERR);
	pr_warn_ratelimited("rxecc %s: PFC pause storm: priority %d held in XOFF for %llu ms, pauses stopped until its receive backlog is short\n",
			    dev_name(&rxe->ib_dev.dev), p, div_u64(held, NSEC_PER_MSEC));
	return true;
}

/*
 * Per priority: XOFF when a packet waited pfc_rx_xoff or longer since the
 * last run (and the latest did not wait pfc_rx_xon or less); then a refresh
 * at half the pause time (every 100 us at most) while it lasts; XON when a
 * packet waited pfc_rx_xon or less, or when none came for pfc_rx_xoff
 * since the XOFF and the last packet (the link partner holds them; nothing
 * of the priority is left here), or when sending is off. The XOFF a packet
 * asked for is sent however late this timer runs: a slow host runs it long
 * after the packet.
 */
static enum hrtimer_restart rxecc_pfc_tx_timer_fn(struct hrtimer *t)
{
	struct rxecc_pfc *pfc = container_of(t, struct rxecc_pfc, tx_timer);
	struct rxe_dev *rxe = rxe_of_pfc(pfc);
	u8 xoff = 0, xon = 0, refresh = 0, on = READ_ONCE(pfc->rx_on);
	u64 now, half = 0, xoff_ns = 0, xon_ns = 0, minor = 0, crit = 0, next;
	unsigned long over;
	struct rxecc_dev_config *cfg;
	unsigned long flags;
	int p;

	rcu_read_lock();
	cfg = rcu_dereference(rxe->cc.cfg);
	if (cfg) {
		/* not below 100 us, whatever the link speed (up to 1 Tbit/s) */
		half = pfc_endpoint_refresh_ns(rxecc_link_mbps(rxe, cfg));
		xoff_ns = (u64)cfg->pfc_rx_xoff * NSEC_PER_USEC;
		xon_ns = (u64)cfg->pfc_rx_xon * NSEC_PER_USEC;
		minor = rxecc_pfc_minor_ns(cfg);
		crit = (u64)cfg->pfc_stall_critical * NSEC_PER_MSEC;
	} else {
		on = 0;
	}
	rcu_read_unlock();
	spin_lock_irqsave(&pfc->lock, flags);
	pfc->tx_kick = false;
	now = ktime_get_ns();
	over = xchg(&pfc->rx_over, 0);
	next = U64_MAX;
	for (p = 0; p < PFC_NUM_PRIO; p++) {
		u64 wait = READ_ONCE(pfc->rx_wait[p]);
		u64 last = READ_ONCE(pfc->rx_last[p]);
		bool sent = pfc->xoff_sent & BIT(p);
		u64 quiet = max(last, sent ? pfc->xoff_since[p] : 0) + xoff_ns;
		bool healthy = !(on & BIT(p)) || wait <= xon_ns || now >= quiet;

		/*
		 * A stalled priority may pause again once its backlog is short,
		 * or once prevention is off.
		 */
		if ((pfc->stalled & BIT(p)) && (healthy || !crit))
			WRITE_ONCE(pfc->stalled, pfc->stalled & ~BIT(p));
		if (sent && (healthy ||
			     rxecc_pfc_storm_check(rxe, p, now, minor, crit, &next))) {
			xon |= BIT(p);
			pfc->xoff_sent &= ~BIT(p);
			atomic64_add(div_u64(now - pfc->xoff_since[p], NSEC_PER_USEC),
				     &rxe->stats_counters[RXECC_PFC_TX_CNT(p, 1)]);
		} else if (!sent && !(pfc->stalled & BIT(p)) && (on & BIT(p)) &&
			   (over & BIT(p)) && wait > xon_ns) {
			xoff |= BIT(p);
			pfc->xoff_sent |= BIT(p);
			pfc->stall_warned &= ~BIT(p);
			pfc->xoff_since[p] = now;
			quiet = max(last, now) + xoff_ns;
			if (minor)
				next = min(next, now + minor);
			if (crit)
				next = min(next, now + crit);
		} else if (sent && now >= pfc->refresh_at) {
			refresh |= BIT(p);
		}
		if ((pfc->xoff_sent | pfc->stalled) & BIT(p))
			next = min(next, quiet);
	}
	/*
	 * One refresh time for every priority: a new XOFF refreshes those
	 * already held too (else a run of new XOFFs on one priority would keep
	 * putting off the refresh of another, until its pause lapsed).
	 */
	if (xoff)
		refresh |= pfc->xoff_sent & ~xoff;
	if (xoff || refresh)
		pfc->refresh_at = now + half;
	if (pfc->xoff_sent)
		next = min(next, pfc->refresh_at);
	if ((pfc->xoff_sent || pfc->stalled) && !rxe->cc.ndev_gone)
		hrtimer_start(&pfc->tx_timer, ns_to_ktime(max(next, now)),
			      HRTIMER_MODE_ABS_SOFT);
	spin_unlock_irqrestore(&pfc->lock, flags);
	if (xoff | xon | refresh)
		rxecc_pfc_send(rxe, xoff | xon | refresh, xoff | refresh);
	return HRTIMER_NORESTART;
}

/*
 * Priority @p runs again (lock held); its waiting QPs move to the waking
 * list, which rxecc_pfc_wake() empties once the caller has released the
 * lock.
 */
static void rxecc_pfc_resume(struct rxe_dev *rxe, int p, u64 end)
{
	struct rxecc_pfc *pfc = &rxe->cc.pfc;

	pfc->paused &= ~BIT(p);
	atomic64_add(div_u64(end - pfc->since[p], NSEC_PER_USEC),
		     &rxe->stats_counters[RXECC_PFC_CNT(p, RXECC_PFC_RX_PAUSE_DURATION)]);
	list_splice_tail_init(&pfc->waiters[p], &pfc->waking);
}

/*
 * Schedule the QPs whose pause ended, one per hold of the lock: with
 * thousands waiting, scheduling them all in one hold kept interrupts off
 * for as long. A QP leaves either list (under the lock) at reset and at
 * cleanup, before it is freed, so it is scheduled under the lock; between
 * two QPs interrupts run.
 */
static void rxecc_pfc_wake(struct rxecc_pfc *pfc)
{
	struct rxecc_qp *cc;
	unsigned long flags;

	for (;;) {
		spin_lock_irqsave(&pfc->lock, flags);
		cc = list_first_entry_or_null(&pfc->waking, struct rxecc_qp, pfc_node);
		if (!cc) {
			spin_unlock_irqrestore(&pfc->lock, flags);
			return;
		}
		list_del_init(&cc->pfc_node);
		if (cc->pfc_wait & RXECC_WAIT_REQ)
			rxecc_qp_sched(cc->qp, false);
		if (cc->pfc_wait & RXECC_WAIT_RESP)
			rxecc_qp_sched(cc->qp, true);
		cc->pfc_wait = 0;
		spin_unlock_irqrestore(&pfc->lock, flags);
	}
}

/* Arm the timer for the earliest end of a pause (lock held). */
static void rxecc_pfc_arm(struct rxecc_pfc *pfc)
{
	u64 next = U64_MAX;
	int p;

	for (p = 0; p < PFC_NUM_PRIO; p++)
		if (pfc->paused & BIT(p))
			next = min(next, pfc->until[p]);
	if (next != U64_MAX)
		hrtimer_start(&pfc->timer, ns_to_ktime(next), HRTIMER_MODE_ABS_SOFT);
}

static enum hrtimer_restart rxecc_pfc_timer_fn(struct hrtimer *t)
{
	struct rxecc_pfc *pfc = container_of(t, struct rxecc_pfc, timer);
	struct rxe_dev *rxe = rxe_of_pfc(pfc);
	unsigned long flags;
	u64 now;
	int p;

	spin_lock_irqsave(&pfc->lock, flags);
	now = ktime_get_ns();
	for (p = 0; p < PFC_NUM_PRIO; p++)
		if ((pfc->paused & BIT(p)) && pfc->until[p] <= now)
			rxecc_pfc_resume(rxe, p, pfc->until[p]);
	rxecc_pfc_arm(pfc);
	spin_unlock_irqrestore(&pfc->lock, flags);
	rxecc_pfc_wake(pfc);
	return HRTIMER_NORESTART;
}

/* Apply a PFC frame to @rxe (softirq). */
static void rxecc_pfc_apply(struct rxe_dev *rxe, const struct pfc_frame *f)
{
	struct rxecc_pfc *pfc = &rxe->cc.pfc;
	struct rxecc_dev_config *cfg;
	unsigned long flags;
	int p, transition;
	u8 enabled;
	u32 mbps;
	u64 now;

	rcu_read_lock();
	cfg = rcu_dereference(rxe->cc.cfg);
	enabled = cfg ? cfg->pfc_enable : 0;
	mbps = rxecc_link_mbps(rxe, cfg);
	rcu_read_unlock();

	spin_lock_irqsave(&pfc->lock, flags);
	now = ktime_get_ns();
	for (p = 0; p < PFC_NUM_PRIO; p++) {
		if (!(f->enable & BIT(p)))
			continue;
		if (!(enabled & BIT(p))) {
			rxe_counter_inc(rxe, RXECC_CNT_PFC_RX_IGNORED);
			continue;
		}
		rxe_counter_inc(rxe, RXECC_PFC_CNT(p, RXECC_PFC_RX_PAUSE));
		transition = RXECC_PFC_CNT(p, RXECC_PFC_RX_PAUSE_TRANSITION);
		if (f->time[p]) {
			unsigned long ack = jiffies + msecs_to_jiffies(RXECC_PFC_ACK_MS);

			WRITE_ONCE(pfc->ack_until[p], ack);
			WRITE_ONCE(pfc->ack_until_any, ack);
			if (!(pfc->paused & BIT(p))) {
				pfc->paused |= BIT(p);
				pfc->since[p] = now;
				rxe_counter_inc(rxe, transition);
			}
			pfc->until[p] = now + pfc_quanta_ns(f->time[p], mbps);
		} else if (pfc->paused & BIT(p)) {
			rxecc_pfc_resume(rxe, p, now);
		}
	}
	rxecc_pfc_arm(pfc);
	spin_unlock_irqrestore(&pfc->lock, flags);
	rxecc_pfc_wake(pfc);
}

/* The parsed frame @f (@err: pfc_frame_parse()'s), for @dev's rxecc device if any. */
static void rxecc_pfc_rcv_dev(struct net_device *dev, const struct pfc_frame *f, int err)
{
	struct ib_device *ibdev;

	ibdev = ib_device_get_by_netdev(dev, RDMA_DRIVER_RXE);
	if (!ibdev)
		return;
	if (rxecc_owns(ibdev)) {
		struct rxe_dev *rxe = container_of(ibdev, struct rxe_dev, ib_dev);

		if (!err)
			rxecc_pfc_apply(rxe, f);
		else if (err == -EINVAL)
			rxe_counter_inc(rxe, RXECC_CNT_PFC_RX_MALFORMED);
		else if (err == -EPERM)
			rxe_counter_inc(rxe, RXECC_CNT_PFC_RX_REJECTED);
	}
	ib_device_put(ibdev);
}

/*
 * A MAC control frame received on @dev. It is the link partner's for the
 * device on @dev and for those on the macvlan and ipvlan devices above it
 * (their link is @dev's). What reaches a macvlan or ipvlan device itself is
 * not taken, and is counted as rejected: those keep back frames whose
 * skb->protocol is ETH_P_PAUSE, so it is a sibling's multicast looped back
 * (bridge mode) with another protocol set by a raw socket, by which a
 * co-tenant with CAP_NET_RAW could pause the device at will.
 */
static int rxecc_pfc_rcv(struct sk_buff *skb, struct net_device *dev,
			 struct packet_type *pt, struct net_device *orig_dev)
{
	struct net_device *upper;
	struct list_head *iter;
	struct pfc_frame f;
	int err;

	if (pfc_dev_is_link_child(dev)) {
		rxecc_pfc_rcv_dev(dev, &f, -EPERM);
		goto out;
	}
	err = pfc_frame_parse(skb, &f);
	rxecc_pfc_rcv_dev(dev, &f, err);
	if (!err)
		netdev_for_each_upper_dev_rcu(dev, upper, iter)
			if (pfc_dev_is_link_child(upper))
				rxecc_pfc_rcv_dev(upper, &f, err);
out:
	consume_skb(skb);
	return NET_RX_SUCCESS;
}

static struct packet_type rxecc_pfc_packet_type __read_mostly = {
	.type = cpu_to_be16(ETH_P_PAUSE),
	.func = rxecc_pfc_rcv,
};

int rxecc_pfc_init(void)
{
	/* the per-priority blocks of rxecc_counters.h, as these macros count */
	BUILD_BUG_ON(RXECC_CNT_PFC_RX_PRIO7_PAUSE_TRANSITION !=
		     RXECC_PFC_CNT(PFC_NUM_PRIO - 1, RXECC_PFC_RX_PAUSE_TRANSITION));
	BUILD_BUG_ON(RXECC_CNT_PFC_TX_PRIO7_PAUSE_DURATION !=
		     RXECC_PFC_TX_CNT(PFC_NUM_PRIO - 1, 1));
	dev_add_pack(&rxecc_pfc_packet_type);
	return 0;
}

void rxecc_pfc_exit(void)
{
	dev_remove_pack(&rxecc_pfc_packet_type);
}

void rxecc_pfc_dev_init(struct rxe_dev *rxe)
{
	struct rxecc_pfc *pfc = &rxe->cc.pfc;
	int p;

	spin_lock_init(&pfc->lock);
	pfc->ack_until_any = jiffies;
	for (p = 0; p < PFC_NUM_PRIO; p++)
		pfc->ack_until[p] = jiffies;
	hrtimer_init(&pfc->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	pfc->timer.function = rxecc_pfc_timer_fn;
	hrtimer_init(&pfc->tx_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	pfc->tx_timer.function = rxecc_pfc_tx_timer_fn;
	for (p = 0; p < PFC_NUM_PRIO; p++)
		INIT_LIST_HEAD(&pfc->waiters[p]);
	INIT_LIST_HEAD(&pfc->waking);
}

/*
 * NETDEV_UNREGISTER (RTNL held): the device is on its way out; it sends no
 * more PFC frames. A pause it sent lapses at the link partner by itself.
 */
void rxecc_pfc_netdev_gone(struct rxe_dev *rxe)
{
	struct rxecc_pfc *pfc = &rxe->cc.pfc;
	unsigned long flags;

	spin_lock_irqsave(&pfc->lock, flags);
	rxe->cc.ndev_gone = true;
	spin_unlock_irqrestore(&pfc->lock, flags);
	WRITE_ONCE(pfc->rx_on, 0);
	hrtimer_cancel(&pfc->tx_timer);
}

/*
 * Deallocation: no QP, no PFC frame handler and no received packet uses the
 * device any more. A pause it sent lapses at the link partner by itself.
 */
void rxecc_pfc_dev_exit(struct rxe_dev *rxe)
{
	WRITE_ONCE(rxe->cc.pfc.rx_on, 0);
	hrtimer_cancel(&rxe->cc.pfc.timer);
	hrtimer_cancel(&rxe->cc.pfc.tx_timer);
}

/* Reset, destroy or cleanup: the QP no longer waits for a pause to end. */
void rxecc_pfc_qp_forget(struct rxe_qp *qp, struct rxecc_qp *cc)
{
	struct rxecc_pfc *pfc = &to_rdev(qp->ibqp.device)->cc.pfc;
	unsigned long flags;

	spin_lock_irqsave(&pfc->lock, flags);
	list_del_init(&cc->pfc_node);
	cc->pfc_wait = 0;
	spin_unlock_irqrestore(&pfc->lock, flags);
}

/* True if @qp should ask for an ACK with every packet (RXECC_PFC_ACK_MS). */
bool rxecc_pfc_ack_req(struct rxe_qp *qp)
{
	struct rxe_dev *rxe = to_rdev(qp->ibqp.device);
	struct rxecc_pfc *pfc = &rxe->cc.pfc;
	u8 prio;

	if (likely(!time_before(jiffies, READ_ONCE(pfc->ack_until_any))))
		return false;
	rcu_read_lock();
	prio = rxecc_qp_prio(qp, rcu_dereference(rxe->cc.cfg));
	rcu_read_unlock();
	return time_before(jiffies, READ_ONCE(pfc->ack_until[prio]));
}

/*
 * True if the priority of @qp's traffic is paused: the QP is put on the
 * priority's list and scheduled when the pause ends. One read while nothing
 * is paused.
 */
bool rxecc_pfc_wait(struct rxe_qp *qp, bool resp)
{
	struct rxe_dev *rxe = to_rdev(qp->ibqp.device);
	struct rxecc_pfc *pfc = &rxe->cc.pfc;
	struct rxecc_qp *cc;
	unsigned long flags;
	bool paused;
	u8 prio;

	if (likely(!READ_ONCE(pfc->paused)))
		return false;
	rcu_read_lock();
	prio = rxecc_qp_prio(qp, rcu_dereference(rxe->cc.cfg));
	rcu_read_unlock();
	if (!(READ_ONCE(pfc->paused) & BIT(prio)))
		return false;
	/* the QP waits on a list: it needs its state for that */
	cc = rxecc_qp_state(qp);
	if (!cc)
		return false;
	spin_lock_irqsave(&pfc->lock, flags);
	/* a QP being cleaned up no longer waits (rxecc_qp_stop_timers()) */
	paused = (pfc->paused & BIT(prio)) && !READ_ONCE(cc->stopped);
	if (paused) {
		cc->pfc_wait |= resp ? RXECC_WAIT_RESP : RXECC_WAIT_REQ;
		if (list_empty(&cc->pfc_node))
			list_add_tail(&cc->pfc_node, &pfc->waiters[prio]);
	}
	spin_unlock_irqrestore(&pfc->lock, flags);
	if (paused)
		rxe_counter_inc(rxe, RXECC_CNT_PFC_TX_DEFERRED);
	return paused;
}
