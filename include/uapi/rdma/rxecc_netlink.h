/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB) */
/*
 * rxecc generic netlink interface: configure and observe the congestion
 * control of rdma_rxecc devices. Shared by the module and the `rxecc` tool.
 *
 * Family RXECC_GENL_NAME, version RXECC_GENL_VERSION. A device is addressed by
 * RXECC_ATTR_DEV_NAME (ib device name) or RXECC_ATTR_DEV_INDEX (ib device
 * index); only devices of rdma_rxecc whose netdev is in the caller's network
 * namespace are visible. Commands that change something need CAP_NET_ADMIN in
 * that namespace (the defaults: in the initial one).
 *
 * Compatibility: attribute and command numbers are never reused or
 * renumbered; new ones are appended. Readers ignore attributes they do not
 * know; the kernel rejects them (strict validation) so a request is never
 * half understood.
 */
#ifndef _UAPI_RDMA_RXECC_NETLINK_H
#define _UAPI_RDMA_RXECC_NETLINK_H

#define RXECC_GENL_NAME		"rxecc"
#define RXECC_GENL_VERSION	1
/* Multicast group: RXECC_CMD_CONFIG_NTF after every accepted change. */
#define RXECC_GENL_MCGRP_CONFIG	"config"

enum rxecc_cmd {
	RXECC_CMD_UNSPEC,
	/*
	 * Configuration of one device (doit, DEV_NAME or DEV_INDEX) or of
	 * every visible device (dump). Reply: device attributes, PROFILE,
	 * DCQCN, RP_ENABLE, NP_ENABLE, ECN, PFC_ENABLE, ROCE_PRIO, DSCP2PRIO,
	 * LINK_SPEED, PFC_RX_XOFF, PFC_RX_XON, TX_QLIMIT, PFC_STALL_CRITICAL,
	 * PFC_STALL_MINOR, UDP_SPORT.
	 */
	RXECC_CMD_DEV_GET,
	/*
	 * Change one device: PROFILE is loaded first, then the DCQCN values,
	 * RP_ENABLE, NP_ENABLE, ECN, PFC_ENABLE, ROCE_PRIO, DSCP2PRIO,
	 * LINK_SPEED, PFC_RX_XOFF, PFC_RX_XON, TX_QLIMIT, PFC_STALL_CRITICAL,
	 * PFC_STALL_MINOR and UDP_SPORT given are applied
	 * on top; the result is checked as a whole and replaces the device's
	 * configuration in one step (its live QPs see all of it or none of it).
	 */
	RXECC_CMD_DEV_SET,
	/* The configuration new devices start with; no device attribute. */
	RXECC_CMD_DEFAULTS_GET,
	RXECC_CMD_DEFAULTS_SET,
	/* Port counters of one device (doit) or of every device (dump). */
	RXECC_CMD_STATS_GET,
	/* Zero the port counters and the per-QP counts of one device. */
	RXECC_CMD_STATS_RESET,
	/*
	 * Dump only: one message per QP (RXECC_ATTR_QP) of one device
	 * (DEV_NAME or DEV_INDEX given) or of every device.
	 */
	RXECC_CMD_QP_GET,
	/*
	 * Notification (group "config"), same attributes as DEV_GET's reply;
	 * without device attributes it announces a change of the defaults.
	 */
	RXECC_CMD_CONFIG_NTF,

	__RXECC_CMD_MAX,
	RXECC_CMD_MAX = __RXECC_CMD_MAX - 1
};

enum rxecc_attr {
	RXECC_ATTR_UNSPEC,
	RXECC_ATTR_PAD,
	RXECC_ATTR_DEV_INDEX,	/* u32: ib device index */
	RXECC_ATTR_DEV_NAME,	/* string: ib device name */
	RXECC_ATTR_NETDEV,	/* string, read only: the netdev under the device */
	RXECC_ATTR_LINE_KBPS,	/* u64, read only: port speed the RP uses, kbit/s */
	/*
	 * string: on set, a profile to load (mlx5, paper, lab); on get, the
	 * profile loaded last, or "custom" once a value was changed after it
	 * or when it was loaded scaled (PROFILE_KBPS).
	 */
	RXECC_ATTR_PROFILE,
	RXECC_ATTR_DCQCN,	/* nested, enum rxecc_dcqcn_attr */
	RXECC_ATTR_RP_ENABLE,	/* u8: bit p = reaction point on for priority p */
	RXECC_ATTR_NP_ENABLE,	/* u8: bit p = notification point on for priority p */
	RXECC_ATTR_ECN,		/* u8: ECN of data packets, enum rxecc_ecn */
	RXECC_ATTR_STATS,	/* nested: RXECC_ATTR_STAT entries */
	RXECC_ATTR_STAT,	/* nested, enum rxecc_stat_attr */
	RXECC_ATTR_QP,		/* nested, enum rxecc_qp_attr */
	RXECC_ATTR_PFC_ENABLE,	/* u8: bit p = PFC frames honoured for priority p */
	/* u8: 0..7 = the priority of every RoCE packet; RXECC_ROCE_PRIO_DSCP */
	RXECC_ATTR_ROCE_PRIO,
	RXECC_ATTR_DSCP2PRIO,	/* binary, 64 bytes: priority (0..7) of each DSCP */
	/*
	 * u32: the port speed in Mbit/s that PFC quanta and the DCQCN line
	 * rate are measured at; 0 = the netdev's (10000 if it reports none).
	 * LINE_KBPS reports the speed in use.
	 */
	RXECC_ATTR_LINK_SPEED,
	/*
	 * u32, microseconds: a received packet of a PFC priority that waited
	 * this long in the receive backlog (netif_rx() to rxe_rcv()) makes
	 * the device send XOFF to its link partner (0: it never does); one
	 * that waited PFC_RX_XON or less (below PFC_RX_XOFF) makes it send XON.
	 */
	RXECC_ATTR_PFC_RX_XOFF,
	RXECC_ATTR_PFC_RX_XON,
	/*
	 * u32, bytes (up to 1 GiB): while the host's egress qdisc that a QP's
	 * packets enter holds this much or more, the QP waits a packet time
	 * before it builds its next packet (0: it never does).
	 */
	RXECC_ATTR_TX_QLIMIT,
	/*
	 * u32, kbit/s (1 up to 400 Gbit/s), set only, with PROFILE (mlx5 or
	 * paper): load the profile scaled to this line rate, its times and
	 * rates kept in packet times and fractions of the line rate
	 * (docs/dcqcn.md, "Scaling a profile").
	 */
	RXECC_ATTR_PROFILE_KBPS,
	/*
	 * u32 (1 up to 1024), set only, with PROFILE_KBPS: run the scaled
	 * profile's clocks this many times faster than the packet clock, its
	 * times and byte counter divided by it (docs/dcqcn.md, "Speedup").
	 */
	RXECC_ATTR_PROFILE_SPEEDUP,
	/*
	 * u32, ms (0 = off, or 80 up to 8000): pause-storm prevention, mlx5's
	 * device_stall_critical_watermark. A priority the device has held in
	 * XOFF for this long gets its XON, and no XOFF until its receive
	 * backlog is short again (tx_pause_storm_error_events).
	 */
	RXECC_ATTR_PFC_STALL_CRITICAL,
	/*
	 * u32, ms (0 = 85 % of PFC_STALL_CRITICAL, at least 80; or 80 up to
	 * PFC_STALL_CRITICAL, up to 8000 when that is 0): mlx5's
	 * device_stall_minor_watermark, counted in
	 * tx_pause_storm_warning_events.
	 */
	RXECC_ATTR_PFC_STALL_MINOR,
	/*
	 * u8, enum rxecc_udp_sport: how the UDP source port of RoCEv2
	 * packets is chosen. A connected QP takes its port when it is given
	 * its destination (modify to RTR) and keeps it; a UD QP's port is
	 * chosen per packet.
	 */
	RXECC_ATTR_UDP_SPORT,

	__RXECC_ATTR_MAX,
	RXECC_ATTR_MAX = __RXECC_ATTR_MAX - 1
};

/* ROCE_PRIO: each packet's priority comes from DSCP2PRIO (the default). */
#define RXECC_ROCE_PRIO_DSCP	8

enum rxecc_ecn {
	RXECC_ECN_AV,		/* as the address vector's traffic class says */
	RXECC_ECN_ECT1,
	RXECC_ECN_ECT0,		/* default */
};

enum rxecc_udp_sport {
	/*
	 * Default: rdma_get_udp_sport(flow label, local QPN, remote QPN),
	 * mlx5's rule for connected QPs; the flow label from the address
	 * vector (rdma_cm sets one), or computed from both QP numbers when it
	 * is 0. For UD the remote QPN is the work request's (mlx5 uses one
	 * fixed port for UD with label 0).
	 */
	RXECC_UDP_SPORT_FLOW_LABEL,
	/*
	 * rxe's QP-number hash, 0xC000 | hash_32(local QPN, 14), one port
	 * per QP whatever its destination or flow label.
	 */
	RXECC_UDP_SPORT_QPN,
};

/*
 * The DCQCN parameters, all u32, with the names, units and ranges of the
 * parameter table of the module's DCQCN core (rxecc_dcqcn.c): attribute
 * number = table index + 1. Units: see docs/dcqcn.md. The rates have two
 * attributes each: the mlx5 name in Mbit/s and the _KBPS one in kbit/s, for
 * the same value (a dump gives both, the Mbit/s one rounded down; a request
 * may give one of the two).
 */
enum rxecc_dcqcn_attr {
	RXECC_DCQCN_A_UNSPEC,
	RXECC_DCQCN_A_RP_CLAMP_TGT_RATE,
	RXECC_DCQCN_A_RP_CLAMP_TGT_RATE_ATI,
	RXECC_DCQCN_A_RP_TIME_RESET,
	RXECC_DCQCN_A_RP_BYTE_RESET,
	RXECC_DCQCN_A_RP_THRESHOLD,
	RXECC_DCQCN_A_RP_AI_RATE,
	RXECC_DCQCN_A_RP_HAI_RATE,
	RXECC_DCQCN_A_RP_MAX_RATE,
	RXECC_DCQCN_A_RP_MIN_DEC_FAC,
	RXECC_DCQCN_A_RP_MIN_RATE,
	RXECC_DCQCN_A_RP_RATE_TO_SET_ON_FIRST_CNP,
	RXECC_DCQCN_A_RP_DCE_TCP_G,
	RXECC_DCQCN_A_RP_DCE_TCP_RTT,
	RXECC_DCQCN_A_RP_RATE_REDUCE_MONITOR_PERIOD,
	RXECC_DCQCN_A_RP_INITIAL_ALPHA_VALUE,
	RXECC_DCQCN_A_RP_GD,
	RXECC_DCQCN_A_NP_MIN_TIME_BETWEEN_CNPS,
	RXECC_DCQCN_A_NP_CNP_DSCP,
	RXECC_DCQCN_A_NP_CNP_PRIO,
	RXECC_DCQCN_A_RP_AI_RATE_KBPS,
	RXECC_DCQCN_A_RP_HAI_RATE_KBPS,
	RXECC_DCQCN_A_RP_MAX_RATE_KBPS,
	RXECC_DCQCN_A_RP_MIN_RATE_KBPS,
	RXECC_DCQCN_A_RP_RATE_TO_SET_ON_FIRST_CNP_KBPS,

	__RXECC_DCQCN_A_MAX,
	RXECC_DCQCN_A_MAX = __RXECC_DCQCN_A_MAX - 1
};

/* One counter: its name (as `rdma statistic` shows it) and value. */
enum rxecc_stat_attr {
	RXECC_STAT_A_UNSPEC,
	RXECC_STAT_A_PAD,
	RXECC_STAT_A_NAME,	/* string */
	RXECC_STAT_A_VALUE,	/* u64 */

	__RXECC_STAT_A_MAX,
	RXECC_STAT_A_MAX = __RXECC_STAT_A_MAX - 1
};

/* One QP and its congestion control state. */
enum rxecc_qp_attr {
	RXECC_QP_A_UNSPEC,
	RXECC_QP_A_PAD,
	RXECC_QP_A_QPN,		/* u32 */
	RXECC_QP_A_TYPE,	/* u8: enum ib_qp_type (2 RC, 3 UC, 4 UD, ...) */
	RXECC_QP_A_STATE,	/* u8: enum ib_qp_state (0 RESET ... 6 ERR) */
	RXECC_QP_A_DEST_QPN,	/* u32 */
	RXECC_QP_A_LIMITED,	/* u8: 1 while the reaction point limits the rate */
	RXECC_QP_A_RATE_KBPS,	/* u64: current rate Rc, kbit/s */
	RXECC_QP_A_TARGET_KBPS,	/* u64: target rate Rt, kbit/s */
	RXECC_QP_A_ALPHA_PPM,	/* u32: alpha, parts per million */
	RXECC_QP_A_T_STAGE,	/* u32: timer increase events since the last cut */
	RXECC_QP_A_BC_STAGE,	/* u32: byte counter events since the last cut */
	RXECC_QP_A_CNP_HANDLED,	/* u64: CNPs this QP reacted to */
	RXECC_QP_A_CNP_SENT,	/* u64: CNPs this QP sent as notification point */
	RXECC_QP_A_RP_TX_DEFERRED, /* u64: packets the limiter held back */
	RXECC_QP_A_PRIO,	/* u8: priority of the QP's traffic */

	__RXECC_QP_A_MAX,
	RXECC_QP_A_MAX = __RXECC_QP_A_MAX - 1
};

/* The names before 2026-12-07 (one name per quantity), for source written
 * against them; the numbers never changed.
 */
#define RXECC_ATTR_LINK_MBPS	RXECC_ATTR_LINK_SPEED
#define RXECC_QP_A_TX_DEFERRED	RXECC_QP_A_RP_TX_DEFERRED

#endif /* _UAPI_RDMA_RXECC_NETLINK_H */
