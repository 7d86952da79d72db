/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * rxecc tracepoints: `perf record -e rxecc:*`, or
 * /sys/kernel/tracing/events/rxecc/. Rates are in kbit/s, alpha in 1/1024.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rxecc

#if !defined(RXECC_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define RXECC_TRACE_H

#include <linux/tracepoint.h>
#include "rxecc_compat.h"
#include "rxecc_dcqcn.h"

/* The enums __print_symbolic() names, resolved for user space (perf, trace-cmd). */
TRACE_DEFINE_ENUM(RXECC_CNP_CUT);
TRACE_DEFINE_ENUM(RXECC_CNP_FIRST);
TRACE_DEFINE_ENUM(RXECC_CNP_COALESCED);
TRACE_DEFINE_ENUM(RXECC_EV_NONE);
TRACE_DEFINE_ENUM(RXECC_EV_CUT);
TRACE_DEFINE_ENUM(RXECC_EV_FIRST_CNP);
TRACE_DEFINE_ENUM(RXECC_EV_TIMER);
TRACE_DEFINE_ENUM(RXECC_EV_BYTES);
TRACE_DEFINE_ENUM(RXECC_EV_RELEASE);

TRACE_EVENT(rxecc_cnp_sent,
	    TP_PROTO(const char *dev, u32 qpn, u32 dest_qpn),
	    TP_ARGS(dev, qpn, dest_qpn),
	    TP_STRUCT__entry(__string(dev, dev)
			     __field(u32, qpn)
			     __field(u32, dest_qpn)),
	    TP_fast_assign(rxecc_assign_str(dev, dev);
			   __entry->qpn = qpn;
			   __entry->dest_qpn = dest_qpn;),
	    TP_printk("dev=%s qpn=%u dest_qpn=%u", __get_str(dev),
		      __entry->qpn, __entry->dest_qpn)
);

TRACE_EVENT(rxecc_cnp_handled,
	    TP_PROTO(const char *dev, u32 qpn, int result, u64 rc, u64 rt,
		     u32 alpha),
	    TP_ARGS(dev, qpn, result, rc, rt, alpha),
	    TP_STRUCT__entry(__string(dev, dev)
			     __field(u32, qpn)
			     __field(int, result)
			     __field(u64, rc)
			     __field(u64, rt)
			     __field(u32, alpha)),
	    TP_fast_assign(rxecc_assign_str(dev, dev);
			   __entry->qpn = qpn;
			   __entry->result = result;
			   __entry->rc = rc;
			   __entry->rt = rt;
			   __entry->alpha = alpha;),
	    TP_printk("dev=%s qpn=%u result=%s rc=%llu rt=%llu alpha=%u",
		      __get_str(dev), __entry->qpn,
		      __print_symbolic(__entry->result,
				       { RXECC_CNP_CUT, "cut" },
				       { RXECC_CNP_FIRST, "first" },
				       { RXECC_CNP_COALESCED, "coalesced" }),
		      __entry->rc, __entry->rt, __entry->alpha >> 10)
);

TRACE_EVENT(rxecc_rate,
	    TP_PROTO(const char *dev, u32 qpn, u8 event, u64 rc, u64 rt,
		     u32 alpha, u32 t_stage, u32 bc_stage),
	    TP_ARGS(dev, qpn, event, rc, rt, alpha, t_stage, bc_stage),
	    TP_STRUCT__entry(__string(dev, dev)
			     __field(u32, qpn)
			     __field(u8, event)
			     __field(u64, rc)
			     __field(u64, rt)
			     __field(u32, alpha)
			     __field(u32, t_stage)
			     __field(u32, bc_stage)),
	    TP_fast_assign(rxecc_assign_str(dev, dev);
			   __entry->qpn = qpn;
			   __entry->event = event;
			   __entry->rc = rc;
			   __entry->rt = rt;
			   __entry->alpha = alpha;
			   __entry->t_stage = t_stage;
			   __entry->bc_stage = bc_stage;),
	    TP_printk("dev=%s qpn=%u event=%s rc=%llu rt=%llu alpha=%u t_stage=%u bc_stage=%u",
		      __get_str(dev), __entry->qpn,
		      __print_symbolic(__entry->event,
				       { RXECC_EV_NONE, "none" },
				       { RXECC_EV_CUT, "cut" },
				       { RXECC_EV_FIRST_CNP, "first" },
				       { RXECC_EV_TIMER, "timer" },
				       { RXECC_EV_BYTES, "bytes" },
				       { RXECC_EV_RELEASE, "release" }),
		      __entry->rc, __entry->rt, __entry->alpha >> 10,
		      __entry->t_stage, __entry->bc_stage)
);

#endif /* RXECC_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE rxecc_trace
#include <trace/define_trace.h>
