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
 * dropping (a paused port drops for ever). Instead it marks itself waiting
 * (qp->cc_retry_req or _resp, its own bytes: nothing to allocate) and sets
 * its bit in its device's bitmap of where to look (one per direction, a
 * bit per QP index modulo RXECC_RETRY_BITS), and the device's retry timer,
 * RXECC_RETRY_NOSTATE_NS later, clears the bitmaps, finds the QPs whose
 * bits were set and schedules those of them still marked waiting, once
 * however many asked. A QP that shares a bit with a waiting one is not held
 * by it: the mark is the QP's own. Finding them walks the device's QPs, so
 * the timer then waits ten times as long as that walk took, when that is
 * longer (at most RXECC_RETRY_GAP_MAX_NS): a tenth of a CPU at most per
 * device while a walk takes under 100 ms. One slow walk (a preempted vCPU)
 * lengthens the next wait, up to that second.
 *
 * The wait is a back-off under memory pressure, not pacing: 10 ms, the
 * order of the kernel's own waits for reclaim, so that a waiting QP builds
 * its packet again at most 100 times a second (once a ms was about as often
 * as a slow machine can build one: no back-off there).
 */
#define RXECC_RETRY_NOSTATE_NS	(10 * NSEC_PER_MSEC)
#define RXECC_RETRY_GAP_MAX_NS	NSEC_PER_SEC

/* Schedule @qp's task if the QP is still marked waiting on @mark. */
static void rxecc_retry_run(struct rxe_qp *qp, u8 *mark, bool resp)
{
	if (!READ_ONCE(*mark))
		return;
	WRITE_ONCE(*mark, 0);
	rxecc_qp_sched(qp, resp);
}

static enum hrtimer_restart rxecc_retry_timer_fn(struct hrtimer *t)
{
	struct rxe_dev *rxe = container_of(t, struct rxe_dev, cc.retry_timer);
	unsigned long req[RXECC_RETRY_LONGS], resp[RXECC_RETRY_LONGS];
	unsigned long i, any = 0;
	struct rxe_qp *qp;
	bool r, s;
	u64 start;

	/*
	 * Cleared first (a full barrier each: it pairs with the one in
	 * rxecc_retry_later()): a QP that sets its bit again from now on arms
	 * the timer again.
	 */
	for (i = 0; i < RXECC_RETRY_LONGS; i++) {
		req[i] = xchg(&rxe->cc.retry_req[i], 0);
		resp[i] = xchg(&rxe->cc.retry_resp[i], 0);
		any |= req[i] | resp[i];
	}
	if (!any)
		return HRTIMER_NORESTART;
	start = ktime_get_ns();
	i = 0;
	while (xa_find(&rxe->qp_pool.xa, &i, ULONG_MAX, XA_PRESENT)) {
		r = test_bit(i % RXECC_RETRY_BITS, req);
		s = test_bit(i % RXECC_RETRY_BITS, resp);
		qp = r || s ? rxe_pool_get_index(&rxe->qp_pool, i) : NULL;
		i++;
		if (!qp)
			continue;
		if (r)
			rxecc_retry_run(qp, &qp->cc_retry_req, false);
		if (s)
			rxecc_retry_run(qp, &qp->cc_retry_resp, true);
		rxe_put(qp);
	}
	WRITE_ONCE(rxe->cc.retry_gap_ns,
		   clamp_t(u64, 10 * (ktime_get_ns() - start),
			   RXECC_RETRY_NOSTATE_NS, RXECC_RETRY_GAP_MAX_NS));
	return HRTIMER_NORESTART;
}

/* Note @qp (its requester, or with @resp its responder) for the retry timer. */
static void rxecc_retry_later(struct rxe_dev *rxe, struct rxe_qp *qp, bool resp)
{
	unsigned long flags;

	WRITE_ONCE(*(resp ? &qp->cc_retry_resp : &qp->cc_retry_req), 1);
	/* the mark before the bit: the timer that sees the bit sees the mark */
	smp_mb__before_atomic();
	set_bit(qp->elem.index % RXECC_RETRY_BITS,
		resp ? rxe->cc.retry_resp : rxe->cc.retry_req);
	/*
	 * The bit before the timer's state is read: pairs with the timer's
	 * xchg() after its state went inactive, so that either it sees the bit
	 * or the timer is found not queued and armed again here.
	 */
	smp_mb__after_atomic();
	spin_lock_irqsave(&rxe->cc.retry_lock, flags);
	if (!hrtimer_is_queued(&rxe->cc.retry_timer))
		hrtimer_start(&rxe->cc.retry_timer,
			      ns_to_ktime(READ_ONCE(rxe->cc.retry_gap_ns)),
			      HRTIMER_MODE_REL_SOFT);
	spin_unlock_irqrestore(&rxe->cc.retry_lock, flags);
}

/*
 * The gate's first question (rxecc_tx_wait()): does the QP wait for a timer
 * after a local drop or a failed buffer? rxe's destructor of a dropped
 * packet schedules the requester at once (need_req_skb is still set from
 * the drop before), and the requester would build the packet again at once,
 * be dropped again, and so on, whatever timer rxecc armed: the wait held no
 * one. Now any wake-up before the timer's finds the QP held: with state, by
 * the hold bit its timer clears; without, by its own mark, which the retry
 * timer clears. No lock: two reads.
 */
bool rxecc_retry_hold(struct rxe_qp *qp, bool resp)
{
	struct rxecc_qp *cc = rxecc_qp_peek(qp);

	if (cc)
		return READ_ONCE(cc->hold) & (resp ? RXECC_WAIT_RESP : RXECC_WAIT_REQ);
	return READ_ONCE(*(resp ? &qp->cc_retry_resp : &qp->cc_retry_req));
}

void rxecc_retry_dev_init(struct rxe_dev *rxe)
{
	spin_lock_init(&rxe->cc.retry_lock);
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
 * retry timer; at once, as rxe does, when its timer cannot be armed (the
 * QP is stopped for a reset or its cleanup); never once it is destroyed (its
 * gate holds everything), and then not counted either. A QP without state
 * that shares a bit with another may find its mark cleared early, by a walk
 * that another QP's bit started: one early retry per walk at most.
 */
static void rxecc_tx_retry(struct rxe_qp *qp, bool resp)
{
	struct rxe_dev *rxe = to_rdev(qp->ibqp.device);
	bool armed;

	rcu_read_lock();
	armed = rxecc_tx_defer(qp, rxecc_qp_cfg(qp), resp, RXECC_TX_RETRY_MIN_NS);
	rcu_read_unlock();
	/* armed: the QP waits on its own timer; destroyed: nothing more to send */
	if (!armed && rxecc_qp_destroyed(qp))
		return;
	if (!armed && rxecc_qp_peek(qp))
		rxecc_qp_sched(qp, resp);
	else if (!armed)
		rxecc_retry_later(rxe, qp, resp);
	rxe_counter_inc(rxe, RXECC_CNT_TX_LOCAL_RETRY);
}

/*
 * The local stack dropped the requester's packet (a full qdisc; rxe rolled
 * the send queue back): instead of building it again at once, and again
 * while the queue stays full, the requester waits a packet time, held at
 * the gate until then whoever wakes it (rxecc_retry_hold()).
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
