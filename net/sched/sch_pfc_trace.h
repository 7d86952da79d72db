/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sch_pfc tracepoints: /sys/kernel/tracing/events/sch_pfc/. pfc_queue gives
 * a priority's backlog after every packet it queues or sends: the queue as
 * a step function, at the resolution of the packets themselves.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sch_pfc

#if !defined(SCH_PFC_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SCH_PFC_TRACE_H

#include <linux/netdevice.h>
#include <linux/tracepoint.h>
#include <linux/version.h>

/* __assign_str() takes the destination only since Linux 6.10 */
#ifndef pfc_assign_str
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define pfc_assign_str(dst, src)	__assign_str(dst)
#else
#define pfc_assign_str(dst, src)	__assign_str(dst, src)
#endif
#endif

TRACE_EVENT(pfc_queue,
	    TP_PROTO(const struct net_device *dev, u8 prio, u32 backlog),
	    TP_ARGS(dev, prio, backlog),
	    TP_STRUCT__entry(__string(dev, dev->name)
			     __field(u8, prio)
			     __field(u32, backlog)),
	    TP_fast_assign(pfc_assign_str(dev, dev->name);
			   __entry->prio = prio;
			   __entry->backlog = backlog;),
	    TP_printk("dev=%s prio=%u backlog=%u", __get_str(dev),
		      __entry->prio, __entry->backlog)
);

#endif /* SCH_PFC_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE sch_pfc_trace
#include <trace/define_trace.h>
