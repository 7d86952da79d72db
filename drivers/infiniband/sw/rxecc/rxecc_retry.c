// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Packets built again: where rxe 6.1 failed a WQE, stopped a QP or answered
 * with an RNR NAK because the local stack dropped a packet or no socket
 * buffer could be allocated, rxecc makes the QP wait a little and build the
 * same packet again (patches 0009 and 0011 call in here).
 */
#include "rxe.h"
#include "rxe_loc.h"
#include "rxecc_qp.h"

/*
 * A QP whose state could not be allocated (GFP_ATOMIC, under memory
 * pressure) has no timer of its own to wait on. Scheduling it again at once
 * spun in softirq for as long as the allocations failed and the qdisc kept
 * dropping (a paused port drops for ever). Instead the device's retry timer
 * schedules every QP of the device again, once however many QPs ask: a
 * requester or responder with nothing to do returns at once, one that can
 * allocate its state by then waits on its own timer. The timer waits
 * RXECC_RETRY_NOSTATE_NS, or ten times as long as its last sweep of the
 * QPs took, so that sweeping thousands of QPs takes a tenth of a CPU at
 * most.
 */
#define RXECC_RETRY_NOSTATE_NS	NSEC_PER_MSEC

static enum hrtimer_restart rxecc_retry_timer_fn(struct hrtimer *t)
{
	struct rxe_dev *rxe = container_of(t, struct rxe_dev, cc.retry_timer);
	u64 start = ktime_get_ns();
	unsigned long qpn = 0;
	struct rxe_qp *qp;

	while (xa_find(&rxe->qp_pool.xa, &qpn, ULONG_MAX, XA_PRESENT)) {
		qp = rxe_pool_get_index(&rxe->qp_pool, qpn++);
		if (!qp)
			continue;
		rxecc_qp_sched(qp, false);
		rxecc_qp_sched(qp, true);
		rxe_put(qp);
	}
	WRITE_ONCE(rxe->cc.retry_gap_ns, max_t(u64, RXECC_RETRY_NOSTATE_NS,
					       10 * (ktime_get_ns() - start)));
	return HRTIMER_NORESTART;
}

void rxecc_retry_dev_init(struct rxe_dev *rxe)
{
	hrtimer_init(&rxe->cc.retry_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	rxe->cc.retry_timer.function = rxecc_retry_timer_fn;
	rxe->cc.retry_gap_ns = RXECC_RETRY_NOSTATE_NS;
}

/* rxe_dealloc(): every QP is gone, none arms the timer again. */
void rxecc_retry_dev_exit(struct rxe_dev *rxe)
{
	hrtimer_cancel(&rxe->cc.retry_timer);
}

/*
 * A packet the local stack dropped is built again after a packet time: on
 * the QP's own timer, or (no state could be allocated for it) the device's
 * retry timer; at once, as rxe does, when the QP is stopped.
 */
static void rxecc_tx_retry(struct rxe_qp *qp, bool resp)
{
	struct rxe_dev *rxe = to_rdev(qp->ibqp.device);
	bool armed;

	rcu_read_lock();
	armed = rxecc_tx_defer(qp, rxecc_qp_cfg(qp), resp, RXECC_TX_RETRY_MIN_NS);
	rcu_read_unlock();
	if (armed) {
		/* the QP waits on its own timer */
	} else if (!rxecc_qp_peek(qp)) {
		if (!hrtimer_is_queued(&rxe->cc.retry_timer))
			hrtimer_start(&rxe->cc.retry_timer,
				      ns_to_ktime(READ_ONCE(rxe->cc.retry_gap_ns)),
				      HRTIMER_MODE_REL_SOFT);
	} else {
		rxecc_qp_sched(qp, resp);
	}
	rxe_counter_inc(rxe, RXECC_CNT_TX_LOCAL_RETRY);
}

/*
 * The local stack dropped the requester's packet (a full qdisc; rxe rolled
 * the send queue back): instead of building it again at once, and again
 * while the queue stays full, the requester waits a packet time. It is
 * also woken earlier when its packets in flight drain (need_req_skb).
 */
void rxecc_tx_dropped(struct rxe_qp *qp)
{
	rxecc_tx_retry(qp, false);
}

/*
 * read_reply() did not send the read response packet it built, or could not
 * build it: it puts back what it took for it (the read's state before the
 * packet, and its reference to the MR: the first packet of a new read takes
 * over qp->resp.mr, the others hold one of their own), so that the packet is
 * built again the same.
 */
void rxecc_read_reply_putback(struct rxe_qp *qp, struct resp_res *res,
			      int state, struct rxe_mr *mr)
{
	res->state = state;
	if (state == rdatm_res_state_new && !res->replay)
		qp->resp.mr = mr;
	else if (mr)
		rxe_put(mr);
}

/*
 * The local stack dropped an RDMA READ response packet (a full qdisc): the
 * responder sends it again after a packet time, as the requester does its
 * own packets, and the read stays where it was. An RNR NAK (rxe 6.1's
 * answer, patch 0011) is no answer to a read: the requester takes it, in the
 * middle of the response, for an out-of-sequence response and fails the QP.
 */
void rxecc_read_reply_dropped(struct rxe_qp *qp)
{
	rxecc_tx_retry(qp, true);
}

/*
 * The requester, or with @resp the responder sending an RDMA READ response,
 * could not allocate the packet's socket buffer (GFP_ATOMIC). A NIC short of
 * buffers holds the packet back, and so does rxecc: nothing of the packet is
 * committed yet (the caller puts back what it took), so the QP waits
 * RXECC_TX_NOMEM_WAIT_NS (time for reclaim, instead of failing again at
 * once) and builds it again, its retransmit timer running meanwhile (patch
 * 0009: failing the WQE stops the requester, and an RNR NAK in the middle of
 * a read response leaves the read in progress). False, and rxe goes on as
 * without rxecc, when the packet cannot be built for another reason (its
 * source GID, the address, is gone), or the QP cannot wait on its timer (it
 * is stopped, or no state could be allocated for it either).
 */
#define RXECC_TX_NOMEM_WAIT_NS	1000000

bool rxecc_tx_nomem(struct rxe_qp *qp, struct rxe_av *av, bool resp)
{
	struct rxe_dev *rxe = to_rdev(qp->ibqp.device);
	const struct ib_gid_attr *attr;
	bool armed;

	attr = rdma_get_gid_attr(&rxe->ib_dev, 1, av->grh.sgid_index);
	if (IS_ERR(attr))
		return false;
	rdma_put_gid_attr(attr);
	rcu_read_lock();
	armed = rxecc_tx_defer(qp, rxecc_qp_cfg(qp), resp, RXECC_TX_NOMEM_WAIT_NS);
	rcu_read_unlock();
	if (armed)
		rxe_counter_inc(rxe, RXECC_CNT_TX_NOMEM_RETRY);
	return armed;
}
