// SPDX-License-Identifier: GPL-2.0
/*
 * sch_pfc: a lossless switch port for the rxecc fabric.
 *
 * Eight priority queues, classified by DSCP (or by the VLAN PCP /
 * skb->priority), dequeued at an optional port rate: priorities 7 and 6
 * (network control, CNPs) strictly first, then 5..0 in packet round robin,
 * so that no class starves another (a switch's ETS with equal weights). Every queue
 * accounts its bytes per ingress port (skb->skb_iif), as a switch's ingress
 * buffer accounting does: when one port's bytes of a PFC-enabled priority
 * pass XOFF, a PFC frame pausing that priority goes out of that port; it is
 * refreshed at half its pause time while the bytes stay above XON (never
 * more often than pfc_refresh_ns() allows, whatever the options), and an
 * XON frame follows when they fall to XON. A priority accounts up to
 * PFC_PORTS ingress ports at once; traffic from more is counted
 * (pfc_untracked) and never paused. What a port sends past its XOFF
 * (in flight when the frame left) goes to its headroom, reserved apart from
 * the queue's limit (the shared buffer): a PFC-enabled priority drops a
 * packet only when its port's headroom is full. Other priorities drop at the
 * limit. PFC frames received
 * on the qdisc's own port stop the dequeue of the paused priorities. ECT
 * packets are marked CE with a probability rising linearly from 0 at Kmin
 * to Pmax at Kmax on the instantaneous queue, and always above Kmax.
 *
 * PFC frames are sent from a soft hrtimer, outside the qdisc lock, with
 * __dev_direct_xmit(): like a MAC's control frames they bypass the queues of
 * the port they leave from.
 *
 * The PFC watchdog (SONiC's pfcwd, Junos's PFC watchdog) polls every PFC
 * priority: a queue that held packets at every poll of a detection time and
 * was paused by received PFC frames for PFC_WD_PAUSED_PCT of it or more is
 * in a PFC storm (a partner that lets the queue run for a moment now and
 * then is one too: Mellanox's criterion, over windows of the detection time
 * judged every half detection time). The action then drops what the queue holds and what
 * arrives for it and ignores received pauses (drop), only ignores them
 * (forward: the queue sends as a lossy one), or only counts and logs
 * (alert). The storm ends when no XOFF for the priority has arrived for the
 * restoration time (with alert, whose queue still honours pauses, and no
 * pause holds it).
 */
#include <linux/hrtimer.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/pkt_sched.h>
#include <linux/prandom.h>
#include <linux/skbuff.h>
#include <net/dsfield.h>
#include <net/inet_ecn.h>
#include <net/netlink.h>
#include <net/netns/generic.h>
#include <net/pkt_sched.h>
#include <net/rxecc_pfc.h>
#include <net/sch_generic.h>
#include <linux/sch_pfc.h>

#define CREATE_TRACE_POINTS
#include "sch_pfc_trace.h"

#define PFC_PORTS	32	/* ingress ports accounted per priority */
#define PFC_NO_PORT	0xff	/* more ports than slots: not accounted */

/* The XOFF refresh: at half the pause time (what switches do), but at most
 * once a millisecond and every 4 packet times at the port's rate, and for
 * every port of the qdisc at once (pfc_port_refresh_ns(), in
 * <net/rxecc_pfc_refresh.h>). Without the bound, `quanta 1 link_speed 1000000`
 * made the refresh 0 ns and the timer re-armed at once for as long as a
 * port stayed above XON (thousands of frames a second and a tenth of a
 * 2-CPU guest in softirq, open to a user namespace's root on its own veth).
 */

#define PFC_DEF_LIMIT		(1024 * 1024)
#define PFC_DEF_XOFF		(64 * 1024)
#define PFC_DEF_XON		(32 * 1024)
#define PFC_DEF_HEADROOM	(160 * 1024)
#define PFC_DEF_PMAX		20
#define PFC_DEF_LINK_SPEED	10000
#define PFC_DEF_DELAY_NS	100000
#define PFC_DEF_QUANTA		0xffff
/* Watchdog: off until a detection time is set; restoration 0 means twice
 * the detection time (SONiC), polling 0 half of it (Junos: polls of 100 ms,
 * detection after two).
 */
#define PFC_WD_MIN_MS		10	/* detection and polling, when set (SONiC: 100) */
#define PFC_WD_MAX_MS		5000	/* SONiC's largest detection time */
#define PFC_WD_MAX_RESTORE_MS	60000	/* ... and restoration time */
/* A storm: paused this share of the detection time or more (Mellanox: more
 * than 99 %). A partner that lets the queue run 1 % of the time gives it a
 * hundredth of the port; legitimate congestion pausing as much would be a
 * 100:1 incast held for the whole detection time.
 */
#define PFC_WD_PAUSED_PCT	99

/* One ingress port's share of one priority queue. */
struct pfc_port {
	int iif;		/* skb->skb_iif of its packets; 0: the host's own */
	int ifindex;		/* where its PFC frames go; 0: nowhere */
	bool used;
	bool xoff;		/* XOFF sent to it, XON not yet */
	u32 bytes;		/* queued from it */
	u32 headroom;		/* of those, taken in headroom */
	u64 xoff_since;		/* ns */
};

struct pfc_prio {
	struct qdisc_skb_head q;
	struct gnet_stats_basic_sync bstats;
	u32 backlog;		/* bytes queued */
	u32 shared;		/* of those, in the shared buffer (limit) */
	/* configuration */
	u32 limit, xoff, xon, headroom, kmin, kmax, pmax;
	/* paused by a PFC frame received on this port */
	bool paused;
	u64 paused_since, paused_until;
	struct tc_pfc_prio_stats st;
	/* watchdog */
	bool wd_storm;
	/* the window judged: from the poll at wd_since (0: none, the queue was
	 * empty) when the priority had been paused wd_paused ns in all; the
	 * next window starts at wd_next (0: not yet taken)
	 */
	u64 wd_since, wd_paused, wd_next, wd_next_paused;
	u64 wd_last_xoff;	/* ns, the last XOFF received for it */
	u64 wd_storm_since;	/* ns */
	struct tc_pfc_wd_stats wd;
	struct pfc_port port[PFC_PORTS];
};

struct pfc_sched {
	struct Qdisc *sch;
	u64 rate;		/* bit/s, 0 = unlimited */
	u64 t_next;		/* ns, earliest next dequeue at the port rate */
	u32 link_speed;
	u32 delay;		/* ns */
	u16 quanta;
	u8 enable;
	u8 trust;
	bool kicked;		/* the PFC timer is due now */
	u64 refresh_at;		/* ns, next XOFF refresh of every port in XOFF */
	u8 rr_next;		/* round robin: first of 0..5 to look at */
	u8 dscp_map[64];
	struct qdisc_watchdog wd;
	struct hrtimer timer;	/* sends PFC frames */
	u32 wd_detect, wd_restore, wd_poll;	/* ms */
	u8 wd_action;
	struct hrtimer wd_timer;	/* the watchdog's polls */
	atomic64_t tx_errors;
	u64 rx_ignored, rx_malformed, rx_rejected;
	u64 untracked;		/* packets of PFC priorities from no port slot */
	struct pfc_prio prio[TC_PFC_NUM_PRIO];
};

/* What the qdisc keeps in an skb's qdisc control block. */
struct pfc_skb_cb {
	u8 prio;
	u8 port;
	bool headroom;		/* taken in its port's headroom */
};

static struct pfc_skb_cb *pfc_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct pfc_skb_cb) > QDISC_CB_PRIV_LEN);
	return (struct pfc_skb_cb *)qdisc_skb_cb(skb)->data;
}

static struct Qdisc_ops pfc_qdisc_ops;

static u8 pfc_classify(const struct pfc_sched *s, struct sk_buff *skb)
{
	if (s->trust == TC_PFC_TRUST_PCP) {
		if (skb_vlan_tag_present(skb))
			return skb_vlan_tag_get_prio(skb);
		return skb->priority < TC_PFC_NUM_PRIO ? skb->priority : 0;
	}
	switch (skb_protocol(skb, true)) {
	case htons(ETH_P_IP):
		if (!pskb_network_may_pull(skb, sizeof(struct iphdr)))
			return 0;
		return s->dscp_map[ipv4_get_dsfield(ip_hdr(skb)) >> 2];
	case htons(ETH_P_IPV6):
		if (!pskb_network_may_pull(skb, sizeof(struct ipv6hdr)))
			return 0;
		return s->dscp_map[ipv6_get_dsfield(ipv6_hdr(skb)) >> 2];
	default:
		return 0;
	}
}

/* The port PFC frames for traffic that came in on @iif go out of: the
 * Ethernet port itself, or a VLAN device's real device (a MAC control frame
 * is never tagged), if in the qdisc's namespace; else 0: the traffic is
 * accounted and never paused (the host's own, a bridge, a tunnel).
 */
static int pfc_port_ifindex(const struct pfc_sched *s, int iif)
{
	struct net *net = dev_net(qdisc_dev(s->sch));
	struct net_device *dev;
	int ifindex = 0;

	if (!iif)
		return 0;
	rcu_read_lock();
	dev = dev_get_by_index_rcu(net, iif);
	if (dev && is_vlan_dev(dev))
		dev = vlan_dev_real_dev(dev);
	if (dev && net_eq(dev_net(dev), net) && pfc_port_dev_ok(dev))
		ifindex = dev->ifindex;
	rcu_read_unlock();
	return ifindex;
}

/* The slot of the traffic from @iif in @b, taken if new. */
static u8 pfc_port_slot(const struct pfc_sched *s, struct pfc_prio *b, int iif)
{
	int i, free = -1;

	for (i = 0; i < PFC_PORTS; i++) {
		if (b->port[i].used && b->port[i].iif == iif)
			return i;
		if (!b->port[i].used && free < 0)
			free = i;
	}
	if (free < 0)
		return PFC_NO_PORT;
	b->port[free].used = true;
	b->port[free].iif = iif;
	b->port[free].ifindex = pfc_port_ifindex(s, iif);
	return free;
}

static void pfc_port_release(struct pfc_prio *b, struct pfc_port *pt)
{
	if (!pt->bytes && !pt->xoff)
		pt->used = false;
}

/* A packet of PFC priority @p from an ingress port past the PFC_PORTS its
 * queue accounts: that port is never paused, so the priority is not
 * lossless for it. Counted (pfc_untracked, in every `qdisc show`) and
 * logged (the qdisc's first): a lossless queue must not stop being one
 * without a word.
 */
static void pfc_count_untracked(struct pfc_sched *s, int p)
{
	if (!s->untracked++)
		net_warn_ratelimited("%s: sch_pfc: priority %d has traffic from more than %d ingress ports: the others are not paused (pfc_untracked)\n",
				     qdisc_dev(s->sch)->name, p, PFC_PORTS);
}

/* Run the PFC timer now (queue lock held). */
static void pfc_kick(struct pfc_sched *s)
{
	if (s->kicked)
		return;
	s->kicked = true;
	hrtimer_start(&s->timer, 0, HRTIMER_MODE_REL_SOFT);
}

static bool pfc_should_mark(const struct pfc_prio *b)
{
	u64 range;

	if (!b->kmax || b->backlog < b->kmin)
		return false;
	if (b->backlog >= b->kmax)
		return true;
	/* P = Pmax * (q - Kmin) / (Kmax - Kmin), in parts of 2^32 (< 1 here) */
	range = (u64)(b->kmax - b->kmin) * 100;
	return get_random_u32() <
	       mul_u64_u64_div_u64((u64)(b->backlog - b->kmin) * b->pmax,
				   1ULL << 32, range);
}

static int pfc_enqueue(struct sk_buff *skb, struct Qdisc *sch,
		       struct sk_buff **to_free)
{
	struct pfc_sched *s = qdisc_priv(sch);
	u32 len = qdisc_pkt_len(skb);
	struct pfc_port *pt = NULL;
	struct pfc_prio *b;
	bool in_headroom;
	u8 p, slot;

	p = pfc_classify(s, skb);
	b = &s->prio[p];
	if (b->wd_storm && s->wd_action == TC_PFC_WD_DROP) {
		b->wd.drops++;
		return qdisc_drop(skb, sch, to_free);
	}
	slot = pfc_port_slot(s, b, skb->skb_iif);
	if (slot != PFC_NO_PORT)
		pt = &b->port[slot];
	else if (s->enable & BIT(p))
		pfc_count_untracked(s, p);
	/* A port past its XOFF sends into its headroom, apart from the limit. */
	in_headroom = pt && (s->enable & BIT(p)) && pt->bytes >= b->xoff;
	if (in_headroom ? pt->headroom + len > b->headroom :
			  b->shared + len > b->limit) {
		if (pt)
			pfc_port_release(b, pt);
		goto drop;
	}
	if (pfc_should_mark(b) && INET_ECN_set_ce(skb))
		b->st.ecn_marked++;

	pfc_cb(skb)->prio = p;
	pfc_cb(skb)->port = slot;
	pfc_cb(skb)->headroom = in_headroom;
	__qdisc_enqueue_tail(skb, &b->q);
	b->backlog += len;
	if (in_headroom)
		pt->headroom += len;
	else
		b->shared += len;
	qdisc_qstats_backlog_inc(sch, skb);
	sch->q.qlen++;
	trace_pfc_queue(qdisc_dev(sch), p, b->backlog);
	if (pt) {
		pt->bytes += len;
		if ((s->enable & BIT(p)) && !pt->xoff && pt->bytes >= b->xoff)
			pfc_kick(s);
	}
	return NET_XMIT_SUCCESS;

drop:
	b->st.drops++;
	return qdisc_drop(skb, sch, to_free);
}

/* Is @b paused by a received PFC frame at @now? Ends expired pauses. */
static bool pfc_rx_paused(struct pfc_prio *b, u64 now)
{
	if (b->paused && now >= b->paused_until) {
		b->paused = false;
		b->st.pause_rx_duration += b->paused_until - b->paused_since;
	}
	return b->paused;
}

/* The port rate may run ahead by PFC_BURST bytes after an idle or late
 * moment (a timer under a loaded or emulated CPU fires late; without credit
 * the port would fall short of its rate), as tbf's burst.
 */
#define PFC_BURST	(32 * 1024)

static u64 pfc_burst_ns(const struct pfc_sched *s)
{
	return div64_u64((u64)PFC_BURST * 8 * NSEC_PER_SEC, s->rate);
}

/* Strict priorities first, then the round robin ones. */
#define PFC_STRICT_LOW	6
#define PFC_RR_PRIOS	PFC_STRICT_LOW

/* The priority to dequeue from at @now, -1 if none; *@wake: end of a pause. */
static int pfc_pick(struct pfc_sched *s, u64 now, u64 *wake)
{
	int i, p;

	for (i = 0; i < TC_PFC_NUM_PRIO; i++) {
		if (i < TC_PFC_NUM_PRIO - PFC_STRICT_LOW)
			p = TC_PFC_NUM_PRIO - 1 - i;
		else
			p = (s->rr_next + i - (TC_PFC_NUM_PRIO - PFC_STRICT_LOW)) % PFC_RR_PRIOS;
		if (!s->prio[p].q.qlen)
			continue;
		if ((s->enable & BIT(p)) && pfc_rx_paused(&s->prio[p], now)) {
			*wake = min(*wake, s->prio[p].paused_until);
			continue;
		}
		if (p < PFC_STRICT_LOW)
			s->rr_next = (p + 1) % PFC_RR_PRIOS;
		return p;
	}
	return -1;
}

/* Take the head packet off priority @p's queue (not empty) with its
 * accounting: the shared buffer, its port's bytes (XON due?), the backlog.
 */
static struct sk_buff *pfc_unlink(struct pfc_sched *s, int p)
{
	struct pfc_prio *b = &s->prio[p];
	struct sk_buff *skb = __qdisc_dequeue_head(&b->q);
	u32 len = qdisc_pkt_len(skb);

	b->backlog -= len;
	if (!pfc_cb(skb)->headroom)
		b->shared -= len;
	if (pfc_cb(skb)->port != PFC_NO_PORT) {
		struct pfc_port *pt = &b->port[pfc_cb(skb)->port];

		pt->bytes -= len;
		if (pfc_cb(skb)->headroom)
			pt->headroom -= len;
		if (pt->xoff && pt->bytes <= b->xon)
			pfc_kick(s);
		pfc_port_release(b, pt);
	}
	qdisc_qstats_backlog_dec(s->sch, skb);
	s->sch->q.qlen--;
	trace_pfc_queue(qdisc_dev(s->sch), p, b->backlog);
	return skb;
}

static struct sk_buff *pfc_dequeue(struct Qdisc *sch)
{
	struct pfc_sched *s = qdisc_priv(sch);
	u64 now = ktime_get_ns(), wake = U64_MAX;
	struct sk_buff *skb;
	struct pfc_prio *b;
	u32 len;
	int p;

	if (!sch->q.qlen)
		return NULL;
	if (s->rate && now < s->t_next) {
		qdisc_watchdog_schedule_ns(&s->wd, s->t_next);
		return NULL;
	}
	p = pfc_pick(s, now, &wake);
	if (p >= 0) {
		b = &s->prio[p];
		skb = pfc_unlink(s, p);
		len = qdisc_pkt_len(skb);
		b->st.tx_bytes += len;
		b->st.tx_packets++;
		bstats_update(&b->bstats, skb);
		qdisc_bstats_update(sch, skb);
		if (s->rate)
			s->t_next = max(s->t_next, now - min(now, pfc_burst_ns(s))) +
				    div64_u64((u64)len * 8 * NSEC_PER_SEC, s->rate);
		return skb;
	}
	if (wake != U64_MAX)
		qdisc_watchdog_schedule_ns(&s->wd, wake);
	return NULL;
}

/* Add priority @p of ingress port @ifindex to the PFC frames in @frames: one
 * frame per port, built when the port first needs one. RCU held: the frame's
 * skb->dev is used until pfc_send() returns, without a reference.
 */
static void pfc_frames_add(struct pfc_sched *s, struct sk_buff_head *frames,
			   int ifindex, int p, bool xoff)
{
	struct net_device *dev;
	struct sk_buff *skb;

	skb_queue_walk(frames, skb)
		if (skb->dev->ifindex == ifindex)
			goto add;
	dev = dev_get_by_index_rcu(dev_net(qdisc_dev(s->sch)), ifindex);
	skb = dev && pfc_port_dev_ok(dev) ? pfc_frame_build(dev, 0, 0, 0) : NULL;
	if (!skb) {
		atomic64_inc(&s->tx_errors);
		return;
	}
	__skb_queue_tail(frames, skb);
add:
	pfc_frame_add(skb, p, xoff, s->quanta);
}

/* The interval between two XOFF refreshes of the port's ports in XOFF. */
static u64 pfc_refresh_ns(const struct pfc_sched *s)
{
	return pfc_port_refresh_ns(s->quanta, s->link_speed, s->rate,
				   (u64)READ_ONCE(qdisc_dev(s->sch)->mtu) + ETH_HLEN);
}

/* Under the queue lock and RCU: build the PFC frames due at @now into
 * @frames (one per ingress port): XOFF to a port that passed XOFF, XON to
 * one that fell to XON and, once the refresh is due, XOFF again to every
 * port still in XOFF; *@next is the next refresh (U64_MAX if no port is in
 * XOFF). With @drain every port in XOFF gets XON (the qdisc goes away).
 */
static void pfc_collect(struct pfc_sched *s, u64 now, bool drain,
			struct sk_buff_head *frames, u64 *next)
{
	bool refresh = !drain && now >= s->refresh_at, held = false;
	int p, i;

	for (p = 0; p < TC_PFC_NUM_PRIO; p++) {
		struct pfc_prio *b = &s->prio[p];
		bool on = !drain && (s->enable & BIT(p));

		for (i = 0; i < PFC_PORTS; i++) {
			struct pfc_port *pt = &b->port[i];

			if (!pt->used || !pt->ifindex)
				continue;
			if (pt->xoff && (!on || pt->bytes <= b->xon)) {
				pt->xoff = false;
				b->st.xon_tx++;
				b->st.xoff_ports--;
				b->st.pause_tx_duration += now - pt->xoff_since;
				pfc_frames_add(s, frames, pt->ifindex, p, false);
				pfc_port_release(b, pt);
				continue;
			}
			if (!on)
				continue;
			if (!pt->xoff && pt->bytes >= b->xoff) {
				pt->xoff = true;
				pt->xoff_since = now;
				b->st.xoff_ports++;
			} else if (!pt->xoff) {
				continue;
			} else if (!refresh) {
				held = true;
				continue;
			}
			held = true;
			b->st.pause_tx++;
			pfc_frames_add(s, frames, pt->ifindex, p, true);
		}
	}
	if (refresh)
		s->refresh_at = now + pfc_refresh_ns(s);
	*next = held ? s->refresh_at : U64_MAX;
}

/* Send the frames pfc_collect() built (RCU held, BHs off, no lock). */
static void pfc_send(struct pfc_sched *s, struct sk_buff_head *frames)
{
	struct sk_buff *skb;

	while ((skb = __skb_dequeue(frames)))
		if (__dev_direct_xmit(skb, 0) != NET_XMIT_SUCCESS)
			atomic64_inc(&s->tx_errors);
}

static enum hrtimer_restart pfc_timer_fn(struct hrtimer *t)
{
	struct pfc_sched *s = container_of(t, struct pfc_sched, timer);
	u64 now = ktime_get_ns(), next;
	struct sk_buff_head frames;
	spinlock_t *lock;	/* the root qdisc's */

	__skb_queue_head_init(&frames);
	/* The root qdisc is RCU-protected (qdisc_root_sleeping()). */
	rcu_read_lock();
	lock = qdisc_lock(qdisc_root_sleeping(s->sch));
	spin_lock(lock);
	s->kicked = false;
	pfc_collect(s, now, false, &frames, &next);
	if (next != U64_MAX)
		hrtimer_start(&s->timer, ns_to_ktime(next), HRTIMER_MODE_ABS_SOFT);
	spin_unlock(lock);
	pfc_send(s, &frames);
	rcu_read_unlock();
	return HRTIMER_NORESTART;
}

static const char *const pfc_wd_action_name[] = {
	[TC_PFC_WD_DROP] = "drop",
	[TC_PFC_WD_FORWARD] = "forward",
	[TC_PFC_WD_ALERT] = "alert",
};

/* Does the watchdog keep received pauses away from @b? */
static bool pfc_wd_mitigating(const struct pfc_sched *s, const struct pfc_prio *b)
{
	return b->wd_storm && s->wd_action != TC_PFC_WD_ALERT;
}

static u64 pfc_wd_restore_ns(const struct pfc_sched *s)
{
	return (u64)(s->wd_restore ?: 2 * s->wd_detect) * NSEC_PER_MSEC;
}

static u32 pfc_wd_poll_ms(const struct pfc_sched *s)
{
	return s->wd_poll ?: max(s->wd_detect / 2, PFC_WD_MIN_MS / 2);
}

/* Priority @p goes into a storm at @now (queue lock held); the packets the
 * drop action takes from its queue go to @to_free.
 */
static void pfc_wd_storm(struct pfc_sched *s, int p, u64 now, struct sk_buff **to_free)
{
	struct pfc_prio *b = &s->prio[p];
	unsigned int n = 0, bytes = 0;
	struct sk_buff *skb;

	b->wd_storm = true;
	b->wd_storm_since = now;
	b->wd_since = 0;
	b->wd.storms++;
	net_warn_ratelimited("%s: sch_pfc: PFC storm on priority %d (%u packets queued, paused %u %% or more of %u ms): action %s\n",
			     qdisc_dev(s->sch)->name, p, b->q.qlen, PFC_WD_PAUSED_PCT,
			     s->wd_detect, pfc_wd_action_name[s->wd_action]);
	if (s->wd_action == TC_PFC_WD_ALERT)
		return;
	if (b->paused) {
		b->paused = false;
		b->st.pause_rx_duration += now - b->paused_since;
	}
	if (s->wd_action == TC_PFC_WD_DROP) {
		while (b->q.qlen) {
			skb = pfc_unlink(s, p);
			n++;
			bytes += qdisc_pkt_len(skb);
			b->wd.drops++;
			qdisc_qstats_drop(s->sch);
			__qdisc_drop(skb, to_free);
		}
		/* The qdisc's parents, if it has any, hold fewer packets too. */
		if (n)
			qdisc_tree_reduce_backlog(s->sch, n, bytes);
		return;
	}
	/* forward: what the queue holds goes now (unless the port is down) */
	if (!test_bit(__QDISC_STATE_DEACTIVATED, &qdisc_root_sleeping(s->sch)->state))
		__netif_schedule(qdisc_root_sleeping(s->sch));
}

/* Priority @p's storm ends at @now (queue lock held). */
static void pfc_wd_restore(struct pfc_sched *s, int p, u64 now)
{
	struct pfc_prio *b = &s->prio[p];

	b->wd_storm = false;
	b->wd_since = 0;
	b->wd.restorations++;
	b->wd.storm_duration += now - b->wd_storm_since;
	net_info_ratelimited("%s: sch_pfc: PFC storm on priority %d over after %llu ms\n",
			     qdisc_dev(s->sch)->name, p,
			     div_u64(now - b->wd_storm_since, NSEC_PER_MSEC));
}

/* Nanoseconds @b has been paused by received frames in all, at @now. */
static u64 pfc_rx_paused_ns(struct pfc_prio *b, u64 now)
{
	return b->st.pause_rx_duration +
	       (pfc_rx_paused(b, now) ? now - b->paused_since : 0);
}

/* One poll at @now (queue lock held). A priority's window starts at a poll
 * that finds packets queued and ends at the first poll a detection time
 * later; paused for PFC_WD_PAUSED_PCT of it or more, it is in a storm. A
 * poll that finds the queue empty ends the window; a window paused less
 * gives way to the one that started half a detection time into it, so that
 * windows overlap and a storm is found within 1.5 detection times.
 */
static void pfc_wd_poll(struct pfc_sched *s, u64 now, struct sk_buff **to_free)
{
	u64 detect = (u64)s->wd_detect * NSEC_PER_MSEC;
	u64 restore = pfc_wd_restore_ns(s);
	int p;

	for (p = 0; p < TC_PFC_NUM_PRIO; p++) {
		struct pfc_prio *b = &s->prio[p];
		u64 paused;

		if (!(s->enable & BIT(p)))
			continue;
		if (b->wd_storm) {
			/* alert: a pause still holding the queue keeps the storm */
			if (now - b->wd_last_xoff >= restore &&
			    (s->wd_action != TC_PFC_WD_ALERT || !pfc_rx_paused(b, now)))
				pfc_wd_restore(s, p, now);
			continue;
		}
		if (!b->q.qlen) {
			b->wd_since = 0;
			continue;
		}
		paused = pfc_rx_paused_ns(b, now);
		if (!b->wd_since) {
			b->wd_since = now;
			b->wd_paused = paused;
			b->wd_next = 0;
		} else if (now - b->wd_since >= detect) {
			if ((paused - b->wd_paused) * 100 >=
			    (now - b->wd_since) * PFC_WD_PAUSED_PCT) {
				pfc_wd_storm(s, p, now, to_free);
				continue;
			}
			if (b->wd_next) {
				b->wd_since = b->wd_next;
				b->wd_paused = b->wd_next_paused;
			} else {
				b->wd_since = now;
				b->wd_paused = paused;
			}
			b->wd_next = b->wd_since == now ? 0 : now;
			b->wd_next_paused = paused;
		} else if (!b->wd_next && now - b->wd_since >= detect / 2) {
			b->wd_next = now;
			b->wd_next_paused = paused;
		}
	}
}

/* After a change (queue lock held): end the storms the configuration no
 * longer allows, start every stall anew, and poll at the new interval
 * (@old_poll: the interval before, 0 if the watchdog was off). A running
 * poll re-reads the configuration and re-arms itself.
 */
static void pfc_wd_reconf(struct pfc_sched *s, u8 old_action, u32 old_poll)
{
	u32 poll = s->wd_detect ? pfc_wd_poll_ms(s) : 0;
	u64 now = ktime_get_ns();
	int p;

	for (p = 0; p < TC_PFC_NUM_PRIO; p++) {
		if (s->prio[p].wd_storm &&
		    (!s->wd_detect || !(s->enable & BIT(p)) || s->wd_action != old_action))
			pfc_wd_restore(s, p, now);
		s->prio[p].wd_since = 0;
	}
	if (poll && (poll != old_poll || !hrtimer_active(&s->wd_timer)))
		hrtimer_start(&s->wd_timer, ms_to_ktime(poll), HRTIMER_MODE_REL_SOFT);
}

static enum hrtimer_restart pfc_wd_timer_fn(struct hrtimer *t)
{
	struct pfc_sched *s = container_of(t, struct pfc_sched, wd_timer);
	struct sk_buff *to_free = NULL;
	spinlock_t *lock;	/* the root qdisc's */

	rcu_read_lock();
	lock = qdisc_lock(qdisc_root_sleeping(s->sch));
	spin_lock(lock);
	/* re-armed under the lock, as pfc_change() arms it */
	if (s->wd_detect) {
		pfc_wd_poll(s, ktime_get_ns(), &to_free);
		hrtimer_start(t, ms_to_ktime(pfc_wd_poll_ms(s)), HRTIMER_MODE_REL_SOFT);
	}
	spin_unlock(lock);
	rcu_read_unlock();
	kfree_skb_list(to_free);
	return HRTIMER_NORESTART;
}

/* PFC frames received on a port whose root qdisc is a pfc qdisc. */
static int pfc_rcv(struct sk_buff *skb, struct net_device *dev,
		   struct packet_type *pt, struct net_device *orig_dev)
{
	struct Qdisc *q = rcu_dereference(dev->qdisc);
	struct pfc_frame f;
	struct pfc_sched *s;
	bool resume = false;
	u64 now;
	int err, p;

	if (!q || q->ops != &pfc_qdisc_ops)
		goto out;
	s = qdisc_priv(q);
	/* on a macvlan or ipvlan port: a sibling's multicast looped back */
	err = pfc_dev_is_link_child(dev) ? -EPERM : pfc_frame_parse(skb, &f);
	spin_lock(qdisc_lock(q));
	if (test_bit(__QDISC_STATE_DEACTIVATED, &q->state) || err == -EOPNOTSUPP)
		goto unlock;
	if (err == -EPERM) {
		s->rx_rejected++;
		goto unlock;
	}
	if (err) {
		s->rx_malformed++;
		goto unlock;
	}
	now = ktime_get_ns();
	for (p = 0; p < TC_PFC_NUM_PRIO; p++) {
		struct pfc_prio *b = &s->prio[p];
		u64 dur;

		if (!(f.enable & BIT(p)))
			continue;
		if (!(s->enable & BIT(p))) {
			s->rx_ignored++;
			continue;
		}
		b->st.pause_rx++;
		dur = pfc_quanta_ns(f.time[p], s->link_speed);
		if (dur)
			b->wd_last_xoff = now;
		if (pfc_wd_mitigating(s, b)) {
			b->wd.pause_ignored++;
			continue;
		}
		pfc_rx_paused(b, now);
		if (dur) {
			if (!b->paused) {
				b->paused = true;
				b->paused_since = now;
				b->st.pause_rx_transition++;
			}
			b->paused_until = now + dur;
		} else if (b->paused) {
			b->paused = false;
			b->st.pause_rx_duration += now - b->paused_since;
			resume = true;
		}
	}
	if (resume)
		__netif_schedule(q);
unlock:
	spin_unlock(qdisc_lock(q));
out:
	consume_skb(skb);
	return NET_RX_SUCCESS;
}

static struct packet_type pfc_packet_type __read_mostly = {
	.type = cpu_to_be16(ETH_P_PAUSE),
	.func = pfc_rcv,
};

static const struct nla_policy pfc_prio_policy[TCA_PFC_PRIO_MAX + 1] = {
	[TCA_PFC_PRIO_ID]	= NLA_POLICY_MAX(NLA_U8, TC_PFC_NUM_PRIO - 1),
	[TCA_PFC_PRIO_LIMIT]	= NLA_POLICY_MIN(NLA_U32, 1),
	[TCA_PFC_PRIO_XOFF]	= NLA_POLICY_MIN(NLA_U32, 1),
	[TCA_PFC_PRIO_XON]	= { .type = NLA_U32 },
	[TCA_PFC_PRIO_HEADROOM]	= { .type = NLA_U32 },
	[TCA_PFC_PRIO_KMIN]	= { .type = NLA_U32 },
	[TCA_PFC_PRIO_KMAX]	= { .type = NLA_U32 },
	[TCA_PFC_PRIO_PMAX]	= NLA_POLICY_MAX(NLA_U32, 100),
};

/* 1 Mbit/s to 1 Tbit/s; up to one second */
static struct netlink_range_validation pfc_link_range = { .min = 1, .max = 1000000 };
static struct netlink_range_validation pfc_delay_range = { .max = NSEC_PER_SEC };
/* ms (60000 is past the s16 of a policy's own max) */
static struct netlink_range_validation pfc_wd_range = { .max = PFC_WD_MAX_MS };
static struct netlink_range_validation pfc_wd_restore_range = { .max = PFC_WD_MAX_RESTORE_MS };

static const struct nla_policy pfc_policy[TCA_PFC_MAX + 1] = {
	[TCA_PFC_RATE]		= { .type = NLA_U64 },
	[TCA_PFC_ENABLE]	= { .type = NLA_U8 },
	[TCA_PFC_TRUST]		= NLA_POLICY_MAX(NLA_U8, TC_PFC_TRUST_PCP),
	[TCA_PFC_LINK_SPEED]	= NLA_POLICY_FULL_RANGE(NLA_U32, &pfc_link_range),
	[TCA_PFC_DELAY]		= NLA_POLICY_FULL_RANGE(NLA_U32, &pfc_delay_range),
	[TCA_PFC_QUANTA]	= NLA_POLICY_MIN(NLA_U16, 1),
	[TCA_PFC_DSCP_MAP]	= NLA_POLICY_EXACT_LEN(64),
	[TCA_PFC_PRIO]		= NLA_POLICY_NESTED(pfc_prio_policy),
	[TCA_PFC_WD_DETECTION]	= NLA_POLICY_FULL_RANGE(NLA_U32, &pfc_wd_range),
	[TCA_PFC_WD_RESTORATION] = NLA_POLICY_FULL_RANGE(NLA_U32, &pfc_wd_restore_range),
	[TCA_PFC_WD_ACTION]	= NLA_POLICY_MAX(NLA_U8, TC_PFC_WD_ALERT),
	[TCA_PFC_WD_POLL]	= NLA_POLICY_FULL_RANGE(NLA_U32, &pfc_wd_range),
};

/* The configuration a change builds and checks before it is applied. */
struct pfc_conf {
	u64 rate;
	u32 link_speed, delay;
	u16 quanta;
	u8 enable, trust;
	u8 dscp_map[64];
	u32 wd_detect, wd_restore, wd_poll;
	u8 wd_action;
	struct {
		u32 limit, xoff, xon, headroom, kmin, kmax, pmax;
	} prio[TC_PFC_NUM_PRIO];
};

static void pfc_conf_get(const struct pfc_sched *s, struct pfc_conf *c)
{
	int p;

	c->rate = s->rate;
	c->link_speed = s->link_speed;
	c->delay = s->delay;
	c->quanta = s->quanta;
	c->enable = s->enable;
	c->trust = s->trust;
	memcpy(c->dscp_map, s->dscp_map, sizeof(c->dscp_map));
	c->wd_detect = s->wd_detect;
	c->wd_restore = s->wd_restore;
	c->wd_poll = s->wd_poll;
	c->wd_action = s->wd_action;
	for (p = 0; p < TC_PFC_NUM_PRIO; p++) {
		const struct pfc_prio *b = &s->prio[p];

		c->prio[p].limit = b->limit;
		c->prio[p].xoff = b->xoff;
		c->prio[p].xon = b->xon;
		c->prio[p].headroom = b->headroom;
		c->prio[p].kmin = b->kmin;
		c->prio[p].kmax = b->kmax;
		c->prio[p].pmax = b->pmax;
	}
}

static void pfc_get_u32(const struct nlattr *a, u32 *v)
{
	if (a)
		*v = nla_get_u32(a);
}

static int pfc_conf_prio(struct pfc_conf *c, const struct nlattr *nest,
			 struct netlink_ext_ack *extack)
{
	struct nlattr *tb[TCA_PFC_PRIO_MAX + 1];
	int err;
	u8 p;

	err = nla_parse_nested(tb, TCA_PFC_PRIO_MAX, nest, pfc_prio_policy, extack);
	if (err)
		return err;
	if (!tb[TCA_PFC_PRIO_ID]) {
		NL_SET_ERR_MSG_ATTR(extack, nest, "priority settings without a priority");
		return -EINVAL;
	}
	p = nla_get_u8(tb[TCA_PFC_PRIO_ID]);
	pfc_get_u32(tb[TCA_PFC_PRIO_LIMIT], &c->prio[p].limit);
	pfc_get_u32(tb[TCA_PFC_PRIO_XOFF], &c->prio[p].xoff);
	pfc_get_u32(tb[TCA_PFC_PRIO_XON], &c->prio[p].xon);
	pfc_get_u32(tb[TCA_PFC_PRIO_HEADROOM], &c->prio[p].headroom);
	pfc_get_u32(tb[TCA_PFC_PRIO_KMIN], &c->prio[p].kmin);
	pfc_get_u32(tb[TCA_PFC_PRIO_KMAX], &c->prio[p].kmax);
	pfc_get_u32(tb[TCA_PFC_PRIO_PMAX], &c->prio[p].pmax);
	return 0;
}

/* An error message with numbers in it, about @attr of the request. The
 * message is read after RTNL is released (netlink_ack()), so it must not be
 * in storage another request can write meanwhile (a static buffer was, from
 * any namespace). Where the kernel has NL_SET_ERR_MSG_FMT (6.2 and later)
 * it goes into the request's own extack; before, into a buffer of the
 * request's network namespace, which the request's socket keeps alive and
 * only that namespace's administrators can write.
 */
#define PFC_MSG_LEN	80	/* NETLINK_MAX_FMTMSG_LEN */
#ifdef NL_SET_ERR_MSG_FMT
#define pfc_errf(net, extack, attr, fmt, ...)				\
	do {								\
		struct netlink_ext_ack *__e = (extack);			\
									\
		NL_SET_ERR_MSG_FMT(__e, fmt, ##__VA_ARGS__);		\
		if (__e)						\
			__e->bad_attr = (attr);				\
	} while (0)
static int pfc_net_init(void)
{
	return 0;
}

static void pfc_net_exit(void)
{
}
#else
struct pfc_net {
	char msg[PFC_MSG_LEN];
};

static unsigned int pfc_net_id __read_mostly;
static struct pernet_operations pfc_net_ops = {
	.id = &pfc_net_id,
	.size = sizeof(struct pfc_net),
};

static int pfc_net_init(void)
{
	return register_pernet_subsys(&pfc_net_ops);
}

static void pfc_net_exit(void)
{
	unregister_pernet_subsys(&pfc_net_ops);
}

#define pfc_errf(net, extack, attr, fmt, ...)				\
	do {								\
		struct netlink_ext_ack *__e = (extack);			\
		struct pfc_net *__pn = net_generic(net, pfc_net_id);	\
									\
		if (__e) {						\
			snprintf(__pn->msg, PFC_MSG_LEN, fmt, ##__VA_ARGS__); \
			__e->_msg = __pn->msg;				\
			__e->bad_attr = (attr);				\
		}							\
	} while (0)
#endif

/* The watchdog's times: detection and polling 0 or 10 ms at least, polling
 * not above detection, restoration not below polling.
 */
static int pfc_conf_check_wd(const struct pfc_conf *c, struct net *net,
			     const struct nlattr *opt, struct netlink_ext_ack *extack)
{
	u32 poll = c->wd_poll ?: max(c->wd_detect / 2, PFC_WD_MIN_MS / 2);

	if ((c->wd_detect && c->wd_detect < PFC_WD_MIN_MS) ||
	    (c->wd_poll && c->wd_poll < PFC_WD_MIN_MS))
		pfc_errf(net, extack, opt,
			 "watchdog: detection time and polling interval 0 or %u..%u ms",
			 PFC_WD_MIN_MS, PFC_WD_MAX_MS);
	else if (c->wd_detect && c->wd_poll > c->wd_detect)
		pfc_errf(net, extack, opt,
			 "watchdog: polling interval %u ms above detection time %u ms",
			 c->wd_poll, c->wd_detect);
	else if (c->wd_detect && c->wd_restore && c->wd_restore < poll)
		pfc_errf(net, extack, opt,
			 "watchdog: restoration time %u ms below polling interval %u ms",
			 c->wd_restore, poll);
	else
		return 0;
	return -EINVAL;
}

/* Whole-configuration checks; the message names the priority. */
static int pfc_conf_check(const struct pfc_conf *c, u32 mtu, struct net *net,
			  const struct nlattr *opt, struct netlink_ext_ack *extack)
{
	u64 need;
	int p;

	for (p = 0; p < TC_PFC_NUM_PRIO; p++) {
		const typeof(c->prio[0]) *x = &c->prio[p];

		if (x->xon > x->xoff)
			pfc_errf(net, extack, opt, "prio %d: xon %u above xoff %u",
				 p, x->xon, x->xoff);
		else if (x->xoff > x->limit)
			pfc_errf(net, extack, opt, "prio %d: xoff %u above limit %u",
				 p, x->xoff, x->limit);
		else if (x->kmin > x->kmax && x->kmax)
			pfc_errf(net, extack, opt, "prio %d: kmin %u above kmax %u",
				 p, x->kmin, x->kmax);
		else if (x->kmax > x->limit)
			pfc_errf(net, extack, opt, "prio %d: kmax %u above limit %u",
				 p, x->kmax, x->limit);
		else
			continue;
		return -EINVAL;
	}
	/* Headroom: what a port keeps sending after XOFF until the frame has
	 * reached it and taken effect (delay at the link speed) plus a
	 * packet in transmission at either end.
	 */
	need = mul_u64_u64_div_u64((u64)c->link_speed * 1000000, c->delay,
				   8 * NSEC_PER_SEC) + 2 * (u64)mtu;
	for (p = 0; p < TC_PFC_NUM_PRIO; p++) {
		if (!(c->enable & BIT(p)) || c->prio[p].headroom >= need)
			continue;
		pfc_errf(net, extack, opt,
			 "prio %d: headroom %u below %llu bytes (link x delay + 2 MTU)",
			 p, c->prio[p].headroom, need);
		return -EINVAL;
	}
	return pfc_conf_check_wd(c, net, opt, extack);
}

static int pfc_change(struct Qdisc *sch, struct nlattr *opt,
		      struct netlink_ext_ack *extack)
{
	struct pfc_sched *s = qdisc_priv(sch);
	struct nlattr *tb[TCA_PFC_MAX + 1];
	struct pfc_conf *c;
	struct nlattr *a;
	int err, rem, p;
	u32 old_poll;
	u8 old_action;

	if (!opt)
		return 0;
	err = nla_parse_nested(tb, TCA_PFC_MAX, opt, pfc_policy, extack);
	if (err)
		return err;
	c = kmalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	sch_tree_lock(sch);
	pfc_conf_get(s, c);
	sch_tree_unlock(sch);
	if (tb[TCA_PFC_RATE])
		c->rate = nla_get_u64(tb[TCA_PFC_RATE]);
	if (tb[TCA_PFC_ENABLE])
		c->enable = nla_get_u8(tb[TCA_PFC_ENABLE]);
	if (tb[TCA_PFC_TRUST])
		c->trust = nla_get_u8(tb[TCA_PFC_TRUST]);
	if (tb[TCA_PFC_LINK_SPEED])
		c->link_speed = nla_get_u32(tb[TCA_PFC_LINK_SPEED]);
	if (tb[TCA_PFC_DELAY])
		c->delay = nla_get_u32(tb[TCA_PFC_DELAY]);
	if (tb[TCA_PFC_QUANTA])
		c->quanta = nla_get_u16(tb[TCA_PFC_QUANTA]);
	pfc_get_u32(tb[TCA_PFC_WD_DETECTION], &c->wd_detect);
	pfc_get_u32(tb[TCA_PFC_WD_RESTORATION], &c->wd_restore);
	pfc_get_u32(tb[TCA_PFC_WD_POLL], &c->wd_poll);
	if (tb[TCA_PFC_WD_ACTION])
		c->wd_action = nla_get_u8(tb[TCA_PFC_WD_ACTION]);
	if (tb[TCA_PFC_DSCP_MAP]) {
		const u8 *map = nla_data(tb[TCA_PFC_DSCP_MAP]);

		for (p = 0; p < 64; p++) {
			if (map[p] >= TC_PFC_NUM_PRIO) {
				NL_SET_ERR_MSG_ATTR(extack, tb[TCA_PFC_DSCP_MAP],
						    "dscp map: a priority above 7");
				err = -EINVAL;
				goto out;
			}
		}
		memcpy(c->dscp_map, map, sizeof(c->dscp_map));
	}
	nla_for_each_nested(a, opt, rem) {
		if (nla_type(a) != TCA_PFC_PRIO)
			continue;
		err = pfc_conf_prio(c, a, extack);
		if (err)
			goto out;
	}
	err = pfc_conf_check(c, READ_ONCE(qdisc_dev(sch)->mtu) + ETH_HLEN,
			     dev_net(qdisc_dev(sch)), opt, extack);
	if (err)
		goto out;

	sch_tree_lock(sch);
	old_action = s->wd_action;
	old_poll = s->wd_detect ? pfc_wd_poll_ms(s) : 0;
	s->rate = c->rate;
	s->link_speed = c->link_speed;
	s->delay = c->delay;
	s->quanta = c->quanta;
	s->enable = c->enable;
	s->trust = c->trust;
	memcpy(s->dscp_map, c->dscp_map, sizeof(s->dscp_map));
	s->wd_detect = c->wd_detect;
	s->wd_restore = c->wd_restore;
	s->wd_poll = c->wd_poll;
	s->wd_action = c->wd_action;
	for (p = 0; p < TC_PFC_NUM_PRIO; p++) {
		struct pfc_prio *b = &s->prio[p];

		b->limit = c->prio[p].limit;
		b->xoff = c->prio[p].xoff;
		b->xon = c->prio[p].xon;
		b->headroom = c->prio[p].headroom;
		b->kmin = c->prio[p].kmin;
		b->kmax = c->prio[p].kmax;
		b->pmax = c->prio[p].pmax;
	}
	/* Ports in XOFF of a priority no longer enabled get their XON; the
	 * others their refresh now, and then at the new interval.
	 */
	s->refresh_at = 0;
	pfc_kick(s);
	pfc_wd_reconf(s, old_action, old_poll);
	sch_tree_unlock(sch);
out:
	kfree(c);
	return err;
}

static int pfc_init(struct Qdisc *sch, struct nlattr *opt,
		    struct netlink_ext_ack *extack)
{
	struct pfc_sched *s = qdisc_priv(sch);
	int p;

	s->sch = sch;
	qdisc_watchdog_init(&s->wd, sch);
	hrtimer_init(&s->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	s->timer.function = pfc_timer_fn;
	hrtimer_init(&s->wd_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	s->wd_timer.function = pfc_wd_timer_fn;
	s->wd_action = TC_PFC_WD_DROP;
	s->link_speed = PFC_DEF_LINK_SPEED;
	s->delay = PFC_DEF_DELAY_NS;
	s->quanta = PFC_DEF_QUANTA;
	s->trust = TC_PFC_TRUST_DSCP;
	for (p = 0; p < 64; p++)
		s->dscp_map[p] = p >> 3;
	for (p = 0; p < TC_PFC_NUM_PRIO; p++) {
		struct pfc_prio *b = &s->prio[p];

		gnet_stats_basic_sync_init(&b->bstats);
		b->limit = PFC_DEF_LIMIT;
		b->xoff = PFC_DEF_XOFF;
		b->xon = PFC_DEF_XON;
		b->headroom = PFC_DEF_HEADROOM;
		b->pmax = PFC_DEF_PMAX;
	}
	return pfc_change(sch, opt, extack);
}

/* Queue lock held (dev_deactivate, qdisc_reset). */
static void pfc_reset(struct Qdisc *sch)
{
	struct pfc_sched *s = qdisc_priv(sch);
	int p, i;

	for (p = 0; p < TC_PFC_NUM_PRIO; p++) {
		struct pfc_prio *b = &s->prio[p];

		__qdisc_reset_queue(&b->q);
		b->backlog = 0;
		b->shared = 0;
		trace_pfc_queue(qdisc_dev(sch), p, 0);
		for (i = 0; i < PFC_PORTS; i++) {
			b->port[i].bytes = 0;
			b->port[i].headroom = 0;
			pfc_port_release(b, &b->port[i]);
		}
	}
	sch->q.qlen = 0;
	sch->qstats.backlog = 0;
	qdisc_watchdog_cancel(&s->wd);
	/* Ports held in XOFF get their XON from the timer. */
	pfc_kick(s);
}

static void pfc_destroy(struct Qdisc *sch)
{
	struct pfc_sched *s = qdisc_priv(sch);
	struct sk_buff_head frames;
	u64 next;

	qdisc_watchdog_cancel(&s->wd);
	hrtimer_cancel(&s->wd_timer);
	hrtimer_cancel(&s->timer);
	/* Nothing can arm the timer now: release every port still in XOFF. */
	__skb_queue_head_init(&frames);
	rcu_read_lock();
	spin_lock_bh(qdisc_lock(qdisc_root_sleeping(sch)));
	pfc_collect(s, ktime_get_ns(), true, &frames, &next);
	spin_unlock_bh(qdisc_lock(qdisc_root_sleeping(sch)));
	local_bh_disable();
	pfc_send(s, &frames);
	local_bh_enable();
	rcu_read_unlock();
}

static int pfc_dump(struct Qdisc *sch, struct sk_buff *skb)
{
	struct pfc_sched *s = qdisc_priv(sch);
	struct nlattr *opts, *nest;
	struct pfc_conf c;
	int p;

	sch_tree_lock(sch);
	pfc_conf_get(s, &c);
	sch_tree_unlock(sch);
	opts = nla_nest_start_noflag(skb, TCA_OPTIONS);
	if (!opts)
		return -EMSGSIZE;
	if (nla_put_u64_64bit(skb, TCA_PFC_RATE, c.rate, TCA_PFC_PAD) ||
	    nla_put_u8(skb, TCA_PFC_ENABLE, c.enable) ||
	    nla_put_u8(skb, TCA_PFC_TRUST, c.trust) ||
	    nla_put_u32(skb, TCA_PFC_LINK_SPEED, c.link_speed) ||
	    nla_put_u32(skb, TCA_PFC_DELAY, c.delay) ||
	    nla_put_u16(skb, TCA_PFC_QUANTA, c.quanta) ||
	    nla_put(skb, TCA_PFC_DSCP_MAP, sizeof(c.dscp_map), c.dscp_map) ||
	    nla_put_u32(skb, TCA_PFC_WD_DETECTION, c.wd_detect) ||
	    nla_put_u32(skb, TCA_PFC_WD_RESTORATION, c.wd_restore) ||
	    nla_put_u8(skb, TCA_PFC_WD_ACTION, c.wd_action) ||
	    nla_put_u32(skb, TCA_PFC_WD_POLL, c.wd_poll))
		goto fail;
	for (p = 0; p < TC_PFC_NUM_PRIO; p++) {
		nest = nla_nest_start(skb, TCA_PFC_PRIO);
		if (!nest ||
		    nla_put_u8(skb, TCA_PFC_PRIO_ID, p) ||
		    nla_put_u32(skb, TCA_PFC_PRIO_LIMIT, c.prio[p].limit) ||
		    nla_put_u32(skb, TCA_PFC_PRIO_XOFF, c.prio[p].xoff) ||
		    nla_put_u32(skb, TCA_PFC_PRIO_XON, c.prio[p].xon) ||
		    nla_put_u32(skb, TCA_PFC_PRIO_HEADROOM, c.prio[p].headroom) ||
		    nla_put_u32(skb, TCA_PFC_PRIO_KMIN, c.prio[p].kmin) ||
		    nla_put_u32(skb, TCA_PFC_PRIO_KMAX, c.prio[p].kmax) ||
		    nla_put_u32(skb, TCA_PFC_PRIO_PMAX, c.prio[p].pmax))
			goto fail;
		nla_nest_end(skb, nest);
	}
	return nla_nest_end(skb, opts);
fail:
	nla_nest_cancel(skb, opts);
	return -EMSGSIZE;
}

/* Statistics of @b at @now, durations including a pause (or storm) still
 * running.
 */
static void pfc_prio_stats(const struct pfc_prio *b, u64 now,
			   struct tc_pfc_prio_stats *st, struct tc_pfc_wd_stats *wd)
{
	int i;

	*wd = b->wd;
	wd->storm = b->wd_storm;
	if (b->wd_storm)
		wd->storm_duration += now - b->wd_storm_since;
	*st = b->st;
	st->backlog = b->backlog;
	st->qlen = b->q.qlen;
	if (b->paused)
		st->pause_rx_duration += min(now, b->paused_until) - b->paused_since;
	for (i = 0; i < PFC_PORTS; i++)
		if (b->port[i].used && b->port[i].xoff)
			st->pause_tx_duration += now - b->port[i].xoff_since;
}

static int pfc_dump_stats(struct Qdisc *sch, struct gnet_dump *d)
{
	struct pfc_sched *s = qdisc_priv(sch);
	struct tc_pfc_xstats *x;
	int p, err;
	u64 now;

	x = kzalloc(sizeof(*x), GFP_KERNEL);
	if (!x)
		return -1;
	sch_tree_lock(sch);
	now = ktime_get_ns();	/* not before the lock: no pause may start after it */
	for (p = 0; p < TC_PFC_NUM_PRIO; p++)
		pfc_prio_stats(&s->prio[p], now, &x->prio[p], &x->wd[p]);
	x->pfc_rx_ignored = s->rx_ignored;
	x->pfc_rx_malformed = s->rx_malformed;
	x->pfc_rx_rejected = s->rx_rejected;
	x->pfc_untracked = s->untracked;
	sch_tree_unlock(sch);
	x->pfc_tx_errors = atomic64_read(&s->tx_errors);
	err = gnet_stats_copy_app(d, x, sizeof(*x));
	kfree(x);
	return err;
}

/* Classes 1..8 are the priorities 0..7 (read-only: statistics). */
static struct Qdisc *pfc_leaf(struct Qdisc *sch, unsigned long cl)
{
	return NULL;
}

static unsigned long pfc_find(struct Qdisc *sch, u32 classid)
{
	unsigned long cl = TC_H_MIN(classid);

	return cl >= 1 && cl <= TC_PFC_NUM_PRIO ? cl : 0;
}

static void pfc_walk(struct Qdisc *sch, struct qdisc_walker *arg)
{
	unsigned long cl;

	if (arg->stop)
		return;
	for (cl = 1; cl <= TC_PFC_NUM_PRIO; cl++)
		if (!tc_qdisc_stats_dump(sch, cl, arg))
			break;
}

static int pfc_dump_class(struct Qdisc *sch, unsigned long cl,
			  struct sk_buff *skb, struct tcmsg *tcm)
{
	tcm->tcm_parent = TC_H_ROOT;
	tcm->tcm_handle |= TC_H_MIN(cl);
	tcm->tcm_info = 0;
	return 0;
}

static int pfc_dump_class_stats(struct Qdisc *sch, unsigned long cl,
				struct gnet_dump *d)
{
	struct pfc_sched *s = qdisc_priv(sch);
	struct pfc_prio *b = &s->prio[cl - 1];
	struct gnet_stats_queue qs = {};
	struct tc_pfc_class_stats st;

	sch_tree_lock(sch);
	pfc_prio_stats(b, ktime_get_ns(), &st.q, &st.wd);
	sch_tree_unlock(sch);
	qs.backlog = st.q.backlog;
	qs.drops = st.q.drops + st.wd.drops;
	qs.overlimits = st.q.ecn_marked;
	if (gnet_stats_copy_basic(d, NULL, &b->bstats, true) < 0 ||
	    gnet_stats_copy_queue(d, NULL, &qs, st.q.qlen) < 0)
		return -1;
	return gnet_stats_copy_app(d, &st, sizeof(st));
}

static const struct Qdisc_class_ops pfc_class_ops = {
	.leaf		= pfc_leaf,
	.find		= pfc_find,
	.walk		= pfc_walk,
	.dump		= pfc_dump_class,
	.dump_stats	= pfc_dump_class_stats,
};

static struct Qdisc_ops pfc_qdisc_ops __read_mostly = {
	.cl_ops		= &pfc_class_ops,
	.id		= "pfc",
	.priv_size	= sizeof(struct pfc_sched),
	.enqueue	= pfc_enqueue,
	.dequeue	= pfc_dequeue,
	.peek		= qdisc_peek_dequeued,
	.init		= pfc_init,
	.reset		= pfc_reset,
	.destroy	= pfc_destroy,
	.change		= pfc_change,
	.dump		= pfc_dump,
	.dump_stats	= pfc_dump_stats,
	.owner		= THIS_MODULE,
};

static int __init pfc_module_init(void)
{
	int err = pfc_net_init();

	if (err)
		return err;
	err = register_qdisc(&pfc_qdisc_ops);
	if (err) {
		pfc_net_exit();
		return err;
	}
	dev_add_pack(&pfc_packet_type);
	return 0;
}

static void __exit pfc_module_exit(void)
{
	/* No qdisc is left (the module is pinned by each); wait for handlers. */
	dev_remove_pack(&pfc_packet_type);
	unregister_qdisc(&pfc_qdisc_ops);
	pfc_net_exit();
}

module_init(pfc_module_init);
module_exit(pfc_module_exit);
MODULE_DESCRIPTION("rxecc lossless switch port: 802.1Qbb PFC, ECN marking, 8 priority queues");
MODULE_LICENSE("GPL");
/* tc loads a qdisc module by this alias since Linux 6.8 (sch_<kind> before) */
MODULE_ALIAS("net-sch-pfc");
