/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * What differs, for rxecc's own files, between the rxe of the kernel lines
 * rxecc is built for (patches/<line>/ holds the rest): Linux 6.1's rxe runs
 * a QP in three tasklets (requester, completer, responder), 6.5 and later
 * in two work items (send_task: requester and completer; recv_task: the
 * responder), so a received packet waits in its QP's queue for the work
 * item rather than in the netdev's backlog; generic netlink hands a dump
 * its attributes in a struct genl_info since 6.2; a socket buffer says
 * which clock its timestamp is on in tstamp_type since 6.11 (before:
 * mono_delivery_time); tracepoints copy a string with __assign_str(dst)
 * since 6.10.
 */
#ifndef RXECC_COMPAT_H
#define RXECC_COMPAT_H

#include <linux/version.h>
#include <rdma/ib_verbs.h>

/* A QP in @state whose responder sends (ACKs, CNPs): RTR and later, not in error. */
static inline bool rxecc_state_resp_ready(enum ib_qp_state state)
{
	return state >= IB_QPS_RTR && state != IB_QPS_ERR;
}

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
#define rxecc_req_task(qp)	(&(qp)->send_task)
#define rxecc_resp_task(qp)	(&(qp)->recv_task)
/* rxe_rcv() queues; the work items take the packets (rxecc_np_taken()) */
#define RXECC_RX_IN_TASK	1
/* no responder state of its own: the QP's */
#define rxecc_resp_ready(qp)	rxecc_state_resp_ready(READ_ONCE((qp)->attr.qp_state))
#else
#define rxecc_req_task(qp)	(&(qp)->req.task)
#define rxecc_resp_task(qp)	(&(qp)->resp.task)
#define RXECC_RX_IN_TASK	0
#define rxecc_resp_ready(qp)	((qp)->resp.state == QP_STATE_READY)
#endif

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define rxecc_dumpit_attrs(dump)	((dump)->info.attrs)
#else
#define rxecc_dumpit_attrs(dump)	((dump)->attrs)
#endif

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define rxecc_skb_tstamp_real(skb)	((skb)->tstamp_type == SKB_CLOCK_REALTIME)
#else
#define rxecc_skb_tstamp_real(skb)	(!(skb)->mono_delivery_time)
#endif

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define rxecc_assign_str(dst, src)	__assign_str(dst)
#else
#define rxecc_assign_str(dst, src)	__assign_str(dst, src)
#endif

#endif /* RXECC_COMPAT_H */
