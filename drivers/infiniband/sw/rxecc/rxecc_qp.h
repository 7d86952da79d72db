/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * What rxecc's files that work on a QP's congestion control state share:
 * rxecc_qp.c (the state's life), rxecc_gate.c (the transmit gate and the
 * pacer), rxecc_cnp.c (notification and reaction point), rxecc_retry.c
 * (packets built again). Include after rxe.h.
 */
#ifndef RXECC_QP_H
#define RXECC_QP_H

#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include "rxecc.h"

/*
 * Congestion control state of one QP (rxecc_qp.c), pointed to by the QP's
 * field `cc` from the QP's first need of it to the end of its cleanup. The
 * lock is taken from process, tasklet, softirq and hrtimer (soft) context,
 * always with interrupts saved.
 */
struct rxecc_qp {
	struct rxe_qp *qp;		/* the QP it belongs to */
	spinlock_t lock;		/* everything below */
	struct rxecc_dcqcn_rp rp;	/* reaction point, this QP as sender */
	struct rxecc_dcqcn_np np;	/* notification point, as receiver */
	struct rxecc_dcqcn_pace pace;	/* the rate limiter's clock */
	struct hrtimer rl_timer;	/* wakes a QP held back by the limiter */
	struct hrtimer np_timer;	/* sends a CNP deferred to the end of the gap */
	u64 cnp_handled;		/* per-QP counts for `rdma res show qp -dd` */
	u64 cnp_sent;
	u64 rp_tx_deferred;
	u8 wait_req;			/* requester / responder held back */
	u8 wait_resp;
	/*
	 * RXECC_WAIT_REQ | RXECC_WAIT_RESP: after a local drop, a failed
	 * buffer or a full egress queue (rxecc_tx_defer()), wait for rl_timer
	 * whoever else wakes the task (rxecc_retry_hold())
	 */
	u8 hold;
	bool stopped;			/* destroy, cleanup, reset: nothing arms them */
	bool destroyed;			/* the destroy verb: nothing more to send */
	/* under the device's rxecc_pfc lock */
	struct list_head pfc_node;	/* waiting for a paused priority */
	u8 pfc_wait;			/* RXECC_WAIT_REQ | RXECC_WAIT_RESP */
};

#define RXECC_WAIT_REQ		BIT(0)
#define RXECC_WAIT_RESP		BIT(1)

/* Bytes a packet adds on the wire to its transport headers and payload. */
#define RXECC_WIRE_OVERHEAD (ETH_HLEN + sizeof(struct iphdr) + \
			     sizeof(struct udphdr) + RXE_ICRC_SIZE)

/* The device's configuration (RCU read lock held). */
static inline struct rxecc_dev_config *rxecc_qp_cfg(struct rxe_qp *qp)
{
	return rcu_dereference(to_rdev(qp->ibqp.device)->cc.cfg);
}

/* The line rate of @qp's port, kbit/s (RCU read lock held for @cfg). */
static inline u64 rxecc_line_kbps(struct rxe_qp *qp,
				  const struct rxecc_dev_config *cfg)
{
	return (u64)rxecc_link_mbps(to_rdev(qp->ibqp.device), cfg) * 1000;
}

/*
 * The priority the transmit gate holds a QP to: that of the traffic class
 * of its primary address vector. A UD or GSI QP sends with each work
 * request's AH instead and has no pri_av of its own (all zero), so it is
 * held to the priority of traffic class 0, whatever its packets carry.
 */
static inline u8 rxecc_qp_prio(struct rxe_qp *qp,
			       const struct rxecc_dev_config *cfg)
{
	return rxecc_cfg_prio(cfg, qp->pri_av.grh.traffic_class);
}

/* DCQCN runs on connected QPs: a CNP names its QP by number. */
static inline bool rxecc_qp_connected(struct rxe_qp *qp)
{
	return qp_type(qp) == IB_QPT_RC || qp_type(qp) == IB_QPT_UC;
}

/* qp->cc once the QP's destroy or cleanup has begun without state (rxecc_qp.c). */
#define RXECC_QP_GONE	((struct rxecc_qp *)1)

/* The QP's state if it has one, else NULL (never allocates). */
static inline struct rxecc_qp *rxecc_qp_peek(struct rxe_qp *qp)
{
	/* pairs with the cmpxchg() that set it: the state is initialised */
	struct rxecc_qp *cc = smp_load_acquire(&qp->cc);

	return cc == RXECC_QP_GONE ? NULL : cc;
}

/*
 * Run the requester (with @resp, the responder) of @qp later: from rxecc's
 * timers, its PFC lists and its retries. Not for a QP whose last reference
 * is gone: it is being destroyed (its cleanup flushes its queues itself,
 * and stops these callers only later), and rxe since 6.5 takes a reference
 * for the task's run, which must not come back from zero.
 */
static inline void rxecc_qp_sched(struct rxe_qp *qp, bool resp)
{
	if (!rxe_get(qp))
		return;
	rxe_sched_task(resp ? rxecc_resp_task(qp) : rxecc_req_task(qp));
	rxe_put(qp);
}

/* The QP's state, allocated if it has none yet; NULL if it cannot have one. */
struct rxecc_qp *rxecc_qp_state(struct rxe_qp *qp);

/* rxecc_gate.c */
enum hrtimer_restart rxecc_rl_timer_fn(struct hrtimer *t);
#define RXECC_TX_RETRY_MIN_NS	10000
bool rxecc_tx_defer(struct rxe_qp *qp, const struct rxecc_dev_config *cfg,
		    bool resp, u64 min_ns);

/* rxecc_cnp.c */
enum hrtimer_restart rxecc_np_timer_fn(struct hrtimer *t);
void rxecc_trace_rate(struct rxe_qp *qp, const struct rxecc_dcqcn_rp *rp);

#endif /* RXECC_QP_H */
