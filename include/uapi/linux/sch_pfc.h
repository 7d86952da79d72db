/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * sch_pfc: a lossless switch-port qdisc (rxecc). Eight priority queues, an
 * optional port rate, IEEE 802.1Qbb priority flow control towards the ports
 * the queued traffic came from (per ingress port and priority accounting,
 * XOFF/XON thresholds with headroom), PFC frames received on the port itself
 * honoured, and RED-style ECN marking on the instantaneous queue (Kmin, Kmax,
 * Pmax) as DCQCN switches do, and a PFC watchdog per lossless priority
 * (detection, mitigation, restoration, as SONiC's pfcwd).
 *
 * Configured over rtnetlink as qdisc kind "pfc" (TCA_OPTIONS nests the
 * attributes below); `rxecc qdisc` is the command line. Attribute numbers are
 * append-only.
 */
#ifndef _UAPI_LINUX_SCH_PFC_H
#define _UAPI_LINUX_SCH_PFC_H

#include <linux/types.h>

#define TC_PFC_NUM_PRIO		8

enum {
	TCA_PFC_UNSPEC,
	TCA_PFC_RATE,		/* u64, port rate in bit/s; 0 = unlimited */
	TCA_PFC_ENABLE,		/* u8, bit p: PFC on for priority p */
	TCA_PFC_TRUST,		/* u8, enum tc_pfc_trust: how packets are classified */
	TCA_PFC_LINK_SPEED,	/* u32, speed that turns quanta into time, Mbit/s */
	TCA_PFC_DELAY,		/* u32, ns: response time the headroom must cover */
	TCA_PFC_QUANTA,		/* u16, pause time carried by XOFF frames */
	TCA_PFC_DSCP_MAP,	/* binary, 64 bytes: priority of each DSCP */
	TCA_PFC_PRIO,		/* nested, repeated: TCA_PFC_PRIO_* of one priority */
	TCA_PFC_PAD,
	TCA_PFC_WD_DETECTION,	/* u32, ms a queue stalls under pause: storm; 0 = off */
	TCA_PFC_WD_RESTORATION,	/* u32, ms without a pause that end it; 0 = 2 x detection */
	TCA_PFC_WD_ACTION,	/* u8, enum tc_pfc_wd_action */
	TCA_PFC_WD_POLL,	/* u32, ms between two checks; 0 = detection / 2 */
	__TCA_PFC_MAX
};
#define TCA_PFC_MAX (__TCA_PFC_MAX - 1)

enum tc_pfc_trust {
	TC_PFC_TRUST_DSCP,	/* IPv4/IPv6 DSCP through the DSCP map; others: 0 */
	TC_PFC_TRUST_PCP,	/* VLAN PCP if tagged, else skb->priority (0..7) */
};

/* What the watchdog does to a priority queue in a PFC storm. */
enum tc_pfc_wd_action {
	TC_PFC_WD_DROP,		/* drop what it holds and what arrives; ignore pauses */
	TC_PFC_WD_FORWARD,	/* ignore pauses: send as a lossy queue would */
	TC_PFC_WD_ALERT,	/* count and log only */
};

/* The settings of one priority; unset ones keep their value. */
enum {
	TCA_PFC_PRIO_UNSPEC,
	TCA_PFC_PRIO_ID,	/* u8, 0..7, required */
	TCA_PFC_PRIO_LIMIT,	/* u32, bytes of the shared buffer (headroom apart) */
	TCA_PFC_PRIO_XOFF,	/* u32, bytes from one ingress port: send XOFF */
	TCA_PFC_PRIO_XON,	/* u32, bytes from one ingress port: send XON */
	TCA_PFC_PRIO_HEADROOM,	/* u32, bytes accepted from a port after XOFF */
	TCA_PFC_PRIO_KMIN,	/* u32, bytes: ECN marking starts */
	TCA_PFC_PRIO_KMAX,	/* u32, bytes: every ECT packet marked; 0 = no ECN */
	TCA_PFC_PRIO_PMAX,	/* u32, percent: marking probability at Kmax */
	__TCA_PFC_PRIO_MAX
};
#define TCA_PFC_PRIO_MAX (__TCA_PFC_PRIO_MAX - 1)

/* Per priority, in the class statistics and in the xstats. */
struct tc_pfc_prio_stats {
	__u64 tx_bytes;		/* dequeued */
	__u64 tx_packets;
	__u64 backlog;		/* bytes queued now */
	__u64 qlen;		/* packets queued now */
	__u64 drops;		/* queue or headroom full */
	__u64 ecn_marked;	/* CE set on an ECT packet */
	__u64 pause_tx;		/* XOFF frames sent for this priority */
	__u64 xon_tx;		/* XON frames sent for this priority */
	__u64 pause_tx_duration; /* ns some ingress port was held in XOFF */
	__u64 pause_rx;		/* PFC frames received with this class enabled */
	__u64 pause_rx_duration; /* ns this priority was paused by them */
	__u64 pause_rx_transition; /* times it went from running to paused */
	__u64 xoff_ports;	/* ingress ports held in XOFF now */
};

/* The watchdog's, per priority (appended to the xstats). */
struct tc_pfc_wd_stats {
	__u64 storm;		/* 1 while the priority is in a storm */
	__u64 storms;		/* storms detected */
	__u64 restorations;	/* storms ended: no pause for the restoration time */
	__u64 drops;		/* packets the drop action dropped */
	__u64 pause_ignored;	/* pause frames ignored by the drop and forward actions */
	__u64 storm_duration;	/* ns in a storm */
};

/* A class's (priority's) TCA_STATS_APP. */
struct tc_pfc_class_stats {
	struct tc_pfc_prio_stats q;
	struct tc_pfc_wd_stats wd;
};

/* The qdisc's TCA_STATS_APP; it only grows at its end. */
struct tc_pfc_xstats {
	struct tc_pfc_prio_stats prio[TC_PFC_NUM_PRIO];
	__u64 pfc_tx_errors;	/* PFC frames that could not be sent */
	__u64 pfc_rx_ignored;	/* received for priorities without PFC */
	__u64 pfc_rx_malformed;	/* too short or upper class-enable bits set */
	__u64 pfc_rx_rejected;	/* not from the link partner: destination not
				 * 01:80:C2:00:00:01, or VLAN-tagged
				 */
	struct tc_pfc_wd_stats wd[TC_PFC_NUM_PRIO];
	__u64 pfc_untracked;	/* packets of PFC priorities from ingress ports
				 * past the 32 a priority accounts at once:
				 * never paused (not lossless)
				 */
};

/* The name before 2026-12-07, for source written against it; the number
 * never changed.
 */
#define TCA_PFC_LINK_MBPS	TCA_PFC_LINK_SPEED

#endif /* _UAPI_LINUX_SCH_PFC_H */
