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
 * A packet the local stack dropped is built again after a packet time; at
 * once, as rxe does, when the QP cannot wait on its timer (it is stopped,
 * or no state could be allocated for it).
 */
static void rxecc_tx_retry(struct rxe_qp *qp, bool resp)
{
	bool armed;

	rcu_read_lock();
	armed = rxecc_tx_defer(qp, rxecc_qp_cfg(qp), resp, RXECC_TX_RETRY_MIN_NS);
	rcu_read_unlock();
	if (!armed)
		rxecc_qp_sched(qp, resp);
	rxe_counter_inc(to_rdev(qp->ibqp.device), RXECC_CNT_TX_LOCAL_RETRY);
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
