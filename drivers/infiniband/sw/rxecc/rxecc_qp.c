// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The congestion control state of a QP (struct rxecc_qp): its life, from
 * QP creation to the end of the QP's cleanup, and what netlink and
 * `rdma res show qp -dd` read of it.
 *
 * The state lives apart from struct rxe_qp, in a slab cache of its own, and
 * only once the QP first needs it: at its first CE mark, CNP, pause of its
 * priority, wait for the local egress queue, or packet to build again
 * (rxecc_retry.c), as a NIC takes a rate limiter for a QP when it first
 * needs one. rxe 6.1's struct rxe_qp fills its 2 KiB kmalloc
 * slab exactly, so state inside it would move every QP to the 4 KiB slab;
 * the QP holds only a pointer, in a hole of its layout, and two bytes
 * for rxecc_retry.c in another (patch 0004).
 * Until then a QP costs rxecc nothing and sends at line rate.
 */
#include <linux/slab.h>
#include <rdma/rdma_netlink.h>
#include <rdma/restrack.h>
#include "rxe.h"
#include "rxe_loc.h"
#include "rxecc_qp.h"

/*
 * rxe's QP object must stay in kmalloc-2k (see above); lock debugging
 * (the debug kernel) makes every lock larger, and the QP with them.
 */
static_assert(IS_ENABLED(CONFIG_DEBUG_SPINLOCK) || IS_ENABLED(CONFIG_DEBUG_LOCK_ALLOC) ||
	      sizeof(struct rxe_qp) <= 2048);

static struct kmem_cache *rxecc_qp_cache;

int rxecc_qp_cache_init(void)
{
	rxecc_qp_cache = KMEM_CACHE(rxecc_qp, 0);
	return rxecc_qp_cache ? 0 : -ENOMEM;
}

/* Module exit, after the last device and so the last QP. */
void rxecc_qp_cache_exit(void)
{
	kmem_cache_destroy(rxecc_qp_cache);
}

/*
 * The QP's state, allocated on the first call (any context: GFP_ATOMIC).
 * NULL if the QP's destroy or cleanup has begun without one, or no memory
 * was left (counted in qp_cc_nomem): the caller then goes on as rxe does
 * without rxecc (the packet goes out, the CNP or the CE mark is not acted
 * on, a packet to build again waits for the device's retry timer). Two
 * paths that race to allocate it agree on one; once set, qp->cc stays
 * until rxecc_qp_free().
 */
struct rxecc_qp *rxecc_qp_state(struct rxe_qp *qp)
{
	struct rxecc_qp *cc = rxecc_qp_peek(qp), *old;

	if (likely(cc) || READ_ONCE(qp->cc) == RXECC_QP_GONE)
		return cc;
	cc = kmem_cache_zalloc(rxecc_qp_cache, GFP_ATOMIC | __GFP_NOWARN);
	if (!cc) {
		rxe_counter_inc(to_rdev(qp->ibqp.device), RXECC_CNT_QP_CC_NOMEM);
		return NULL;
	}
	cc->qp = qp;
	spin_lock_init(&cc->lock);
	hrtimer_init(&cc->rl_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	cc->rl_timer.function = rxecc_rl_timer_fn;
	hrtimer_init(&cc->np_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	cc->np_timer.function = rxecc_np_timer_fn;
	INIT_LIST_HEAD(&cc->pfc_node);
	/* a full barrier: rxecc_qp_peek() sees the state initialised */
	old = cmpxchg(&qp->cc, NULL, cc);
	if (old) {
		kmem_cache_free(rxecc_qp_cache, cc);
		return old == RXECC_QP_GONE ? NULL : old;
	}
	return cc;
}

/*
 * Destroy, cleanup (before the QP's tasks are cleaned up) or reset: from now
 * on no path arms the timers or puts the QP on a PFC list (they check
 * @stopped under the lock they arm under), and a callback still running is
 * waited for, so nothing schedules the QP's tasks after this returns.
 */
static void rxecc_qp_stop_timers(struct rxe_qp *qp, struct rxecc_qp *cc)
{
	unsigned long flags;

	spin_lock_irqsave(&cc->lock, flags);
	WRITE_ONCE(cc->stopped, true);
	cc->wait_req = 0;
	cc->wait_resp = 0;
	WRITE_ONCE(cc->hold, 0);
	spin_unlock_irqrestore(&cc->lock, flags);
	rxecc_pfc_qp_forget(qp, cc);
	hrtimer_cancel(&cc->rl_timer);
	hrtimer_cancel(&cc->np_timer);
}

/* Process context: modify_qp to RESET. */
void rxecc_qp_reset(struct rxe_qp *qp)
{
	struct rxecc_qp *cc = rxecc_qp_peek(qp);
	unsigned long flags;

	/* a wait for the device's retry timer ends here (rxecc_retry.c) */
	WRITE_ONCE(qp->cc_retry_req, 0);
	WRITE_ONCE(qp->cc_retry_resp, 0);
	if (!cc)
		return;
	rxecc_qp_stop_timers(qp, cc);
	spin_lock_irqsave(&cc->lock, flags);
	memset(&cc->rp, 0, sizeof(cc->rp));
	memset(&cc->np, 0, sizeof(cc->np));
	memset(&cc->pace, 0, sizeof(cc->pace));
	cc->wait_req = 0;
	cc->wait_resp = 0;
	WRITE_ONCE(cc->stopped, false);
	spin_unlock_irqrestore(&cc->lock, flags);
}

/*
 * The destroy verb, before rxe_cleanup() waits for the QP's last reference.
 * A READ response the gate holds keeps its request queued, and with it a
 * reference, for as long as a pause or the limiter holds it: under a pause
 * storm, for ever (rxe_cleanup() gives up after 50 s with a WARN and frees
 * the QP under the request). Nothing the QP would send matters any more:
 * its gate stops and holds everything from now on (rxecc_tx_wait()), and
 * the responder, scheduled, drops the read it was holding (read_reply()
 * asks rxecc_qp_destroyed()), then each request queued behind it. A QP
 * without state gets none from now on, and its gate holds everything too;
 * its responder is scheduled as well: a READ response it held for the
 * device's retry timer would otherwise wait for a timer that no longer
 * finds the QP (rxe_cleanup() takes it out of the pool).
 */
void rxecc_qp_destroy(struct rxe_qp *qp)
{
	struct rxecc_qp *cc = cmpxchg(&qp->cc, NULL, RXECC_QP_GONE);

	if (cc == RXECC_QP_GONE)
		return;
	if (cc) {
		WRITE_ONCE(cc->destroyed, true);
		rxecc_qp_stop_timers(qp, cc);
	}
	rxecc_qp_sched(qp, true);
}

/*
 * The QP is being destroyed (with state or without: RXECC_QP_GONE, which
 * only destroy, cleanup and free set, and cleanup's last runs of the tasks
 * leave on !qp->valid before they ask): nothing more is sent.
 */
bool rxecc_qp_destroyed(struct rxe_qp *qp)
{
	/* pairs with the cmpxchg() that set it, as rxecc_qp_peek() */
	struct rxecc_qp *cc = smp_load_acquire(&qp->cc);

	return cc == RXECC_QP_GONE || (cc && READ_ONCE(cc->destroyed));
}

/*
 * rxe_qp_do_cleanup(), before the QP's tasks are cleaned up: no references
 * to the QP are left, so the receive path cannot arm the CNP timer, and the
 * tasks' last runs find the QP stopped, or without state and unable to get
 * one.
 */
void rxecc_qp_cleanup(struct rxe_qp *qp)
{
	struct rxecc_qp *cc = cmpxchg(&qp->cc, NULL, RXECC_QP_GONE);

	if (cc && cc != RXECC_QP_GONE)
		rxecc_qp_stop_timers(qp, cc);
}

/* The end of rxe_qp_do_cleanup(): the tasks have run their last. */
void rxecc_qp_free(struct rxe_qp *qp)
{
	struct rxecc_qp *cc = xchg(&qp->cc, RXECC_QP_GONE);

	if (cc && cc != RXECC_QP_GONE)
		kmem_cache_free(rxecc_qp_cache, cc);
}

/* A consistent copy of the QP's state (that of a QP at line rate if none). */
void rxecc_qp_snapshot(struct rxe_qp *qp, struct rxecc_qp_snap *s)
{
	struct rxecc_qp *cc = rxecc_qp_peek(qp);
	struct rxecc_dev_config *cfg;
	unsigned long flags;
	u64 line;

	memset(s, 0, sizeof(*s));
	rcu_read_lock();
	cfg = rxecc_qp_cfg(qp);
	line = rxecc_line_kbps(qp, cfg);
	if (cc) {
		spin_lock_irqsave(&cc->lock, flags);
		rxecc_dcqcn_rp_advance(&cc->rp, &cfg->dcqcn, line, ktime_get_ns());
		s->rp = cc->rp;
		s->cnp_handled = cc->cnp_handled;
		s->cnp_sent = cc->cnp_sent;
		s->rp_tx_deferred = cc->rp_tx_deferred;
		spin_unlock_irqrestore(&cc->lock, flags);
	}
	if (!s->rp.active) {
		s->rp.rc = rxecc_dcqcn_max_kbps(&cfg->dcqcn, line);
		s->rp.rt = s->rp.rc;
	}
	s->prio = rxecc_qp_prio(qp, cfg);
	rcu_read_unlock();
}

void rxecc_qp_clear_counts(struct rxe_qp *qp)
{
	struct rxecc_qp *cc = rxecc_qp_peek(qp);
	unsigned long flags;

	if (!cc)
		return;
	spin_lock_irqsave(&cc->lock, flags);
	cc->cnp_handled = 0;
	cc->cnp_sent = 0;
	cc->rp_tx_deferred = 0;
	spin_unlock_irqrestore(&cc->lock, flags);
}

/*
 * May @r read rxecc's state of @qp? An administrator of the namespace may;
 * anyone else only about the QPs their own process created (rxecc's state
 * of a QP is its owner's business; its numbers and PSNs ib_core's `rdma
 * res` shows to everyone anyway, so the defence against forged packets is
 * in the receive path's checks).
 */
bool rxecc_qp_visible(struct rxe_qp *qp, const struct rxecc_reader *r)
{
	struct task_struct *owner = qp->ibqp.res.task;

	return r->admin || (r->tgid && owner && !rdma_is_kernel_res(&qp->ibqp.res) &&
			    task_tgid(owner) == r->tgid);
}

/*
 * `rdma res show qp -dd`: rxecc's state of the QP, for an administrator of
 * its namespace or the QP's own process (as QP_GET of the rxecc family).
 * The RDMA core does not say who asked: a dump goes on in whichever task
 * reads the socket, so the socket's opener counts too (@msg is owned by
 * the socket that asked while a dump fills it; a doit's runs in the
 * requester): an administrator's rights must be the opener's and the
 * reader's, and the owner's process reads its QPs only from a socket its
 * own user opened.
 */
static void rxecc_res_reader(struct sk_buff *msg, struct user_namespace *ns,
			     struct rxecc_reader *r)
{
	const struct file *f = msg->sk && msg->sk->sk_socket ? msg->sk->sk_socket->file : NULL;

	r->admin = ns_capable_noaudit(ns, CAP_NET_ADMIN) &&
		   (!f || file_ns_capable(f, ns, CAP_NET_ADMIN));
	r->tgid = !f || uid_eq(f->f_cred->euid, current_euid()) ? task_tgid(current) : NULL;
}

int rxecc_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct rxe_dev *rxe = to_rdev(ibqp->device);
	struct rxecc_reader r;
	struct rxecc_qp_snap s;
	struct nlattr *table;

	rxecc_res_reader(msg, rxe->cc.net->user_ns, &r);
	if (!rxecc_qp_visible(to_rqp(ibqp), &r))
		return 0;
	rxecc_qp_snapshot(to_rqp(ibqp), &s);
	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_string(msg, "cc", s.rp.active ? "limited" : "line-rate") ||
	    rdma_nl_put_driver_u64(msg, "rc_kbps", s.rp.rc) ||
	    rdma_nl_put_driver_u64(msg, "rt_kbps", s.rp.rt) ||
	    rdma_nl_put_driver_u32(msg, "alpha_ppm", rxecc_alpha_ppm(s.rp.alpha)) ||
	    rdma_nl_put_driver_u32(msg, "t_stage", s.rp.t_stage) ||
	    rdma_nl_put_driver_u32(msg, "bc_stage", s.rp.bc_stage) ||
	    rdma_nl_put_driver_u64(msg, "cnp_handled", s.cnp_handled) ||
	    rdma_nl_put_driver_u64(msg, "cnp_sent", s.cnp_sent) ||
	    rdma_nl_put_driver_u64(msg, "rp_tx_deferred", s.rp_tx_deferred)) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}

/*
 * The sl of a user-space UD receive completion: the RoCE packet type, as
 * mlx5 reports it there (bit 3: UDP, RoCEv2; bits 2:0: 1 IPv6, 2 IPv4),
 * which tells the application where in the receive buffer's first 40
 * bytes the network header lies (IPv4: the last 20). Kernel consumers get
 * it in wc->network_hdr_type; user space has no other field for it. UCX's
 * ud_verbs reads it to check the destination address.
 */
u8 rxecc_ud_wc_sl(const struct sk_buff *skb)
{
	return RXECC_WC_SL_ROCE_UDP | (skb->protocol == htons(ETH_P_IP) ?
				       RXECC_WC_SL_IPV4 : RXECC_WC_SL_IPV6);
}
