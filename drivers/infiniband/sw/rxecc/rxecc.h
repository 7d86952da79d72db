/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * rxecc: what rdma_rxecc adds to the rxe driver it is derived from.
 *
 * The rxe sources are extracted from the kernel tree at build time and
 * patched by the quilt series of the kernel line, patches/<line>/. The
 * hook patches, 0002-0004, 0020, 0021 and 0023, each call into the functions
 * declared here (0004 also hooks rxecc_counters.h's counters into rxe's),
 * so what rxecc adds stays in its own files; 0001 names the module and its
 * link type (RXECC_LINK_TYPE below). The others change rxe's own
 * code in place (some of the fixes call rxecc's helpers too): its receive
 * drops counted by reason (0005), mlx5's transport counters (0019),
 * upstream's ICRC through the crc32 library (0022) and fixes of its bugs
 * (docs/rxe-fixes.md lists them, per line, with their tests). What differs
 * between the lines for these files is in rxecc_compat.h.
 */
#ifndef RXECC_H
#define RXECC_H

#include <linux/hrtimer.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <rdma/rxecc_netlink.h>
#include "rxecc_compat.h"
#include "rxecc_dcqcn.h"

/* `rdma link add NAME type rxecc netdev DEV` */
#define RXECC_LINK_TYPE "rxecc"

struct rxe_dev;
struct rxe_qp;
struct rxecc_qp;	/* rxecc_qp.h */
struct rxe_pkt_info;
struct rxe_av;
struct rxe_mr;
struct resp_res;
struct ib_device;
struct ib_qp;
struct sk_buff;
struct net;
struct net_device;
struct socket;

/* Pause-storm watermarks, ms: mlx5's range (its default: the maximum). */
#define RXECC_PFC_STALL_MIN_MS	80
#define RXECC_PFC_STALL_MAX_MS	8000

/*
 * The device switches, declared once:
 *   S(name, ATTR, field, type, min, max, default, check, show, description)
 * name: the tool's and the module parameter's (mlx5's where it has one);
 * RXECC_ATTR_<ATTR>: its netlink attribute; field: in struct
 * rxecc_dev_config, of type (u8 or u32, as on the wire); min..max: its
 * range; default: the boot defaults' value; check: RANGE (the netlink
 * policy holds the range) or TYPE (the policy only the type, the range is
 * checked in rxecc_nl_build() with its own message); show: how the module
 * parameter reads, MASK (0x%02x) or NUM. The netlink policy, the dump,
 * the set, the module parameters and the boot defaults are generated from
 * it; docs/pfc.md and docs/dcqcn.md list them (ci/tables_check.py
 * compares their defaults).
 */
#define RXECC_SWITCHES(S) \
	S(rp_enable, RP_ENABLE, rp_enable, u8, 0, 0xff, 0xff, RANGE, MASK, \
	  "Reaction point on, bit per priority (0xff)") \
	S(np_enable, NP_ENABLE, np_enable, u8, 0, 0xff, 0xff, RANGE, MASK, \
	  "Notification point on, bit per priority (0xff)") \
	S(ecn, ECN, ecn, u8, 0, RXECC_ECN_ECT0, RXECC_ECN_ECT0, TYPE, NUM, \
	  "ECN of data packets: 0 as the AV says, 1 ECT(1), 2 ECT(0) (2)") \
	S(pfc_enable, PFC_ENABLE, pfc_enable, u8, 0, 0xff, 0, RANGE, MASK, \
	  "PFC frames honoured and sent, bit per priority (0)") \
	S(roce_prio, ROCE_PRIO, roce_prio, u8, 0, RXECC_ROCE_PRIO_DSCP, \
	  RXECC_ROCE_PRIO_DSCP, RANGE, NUM, \
	  "Priority of every RoCE packet 0..7, or 8: from the DSCP map (8)") \
	S(link_speed, LINK_SPEED, link_speed, u32, 0, 1000000, 0, RANGE, NUM, \
	  "Port speed of PFC pause quanta and the DCQCN line rate (Mbit/s, 0 = the netdev's)") \
	S(pfc_rx_xoff, PFC_RX_XOFF, pfc_rx_xoff, u32, 0, 1000000, 0, RANGE, NUM, \
	  "Receive backlog wait that sends XOFF (us, 0 = never)") \
	S(pfc_rx_xon, PFC_RX_XON, pfc_rx_xon, u32, 0, 1000000, 0, RANGE, NUM, \
	  "Receive backlog wait that sends XON (us, below pfc_rx_xoff)") \
	S(tx_qlimit, TX_QLIMIT, tx_qlimit, u32, 0, 1U << 30, 0, RANGE, NUM, \
	  "Bytes in the egress qdisc that make QPs wait (0 = off)") \
	S(device_stall_critical_watermark, PFC_STALL_CRITICAL, pfc_stall_critical, \
	  u32, 0, RXECC_PFC_STALL_MAX_MS, RXECC_PFC_STALL_MAX_MS, RANGE, NUM, \
	  "XOFF time that stops pausing (ms, 0 = off or 80..8000; 8000)") \
	S(device_stall_minor_watermark, PFC_STALL_MINOR, pfc_stall_minor, \
	  u32, 0, RXECC_PFC_STALL_MAX_MS, 0, RANGE, NUM, \
	  "XOFF time counted as a warning (ms, 0 = 85 % of critical, or 80..8000)") \
	S(udp_sport, UDP_SPORT, udp_sport, u8, 0, RXECC_UDP_SPORT_QPN, \
	  RXECC_UDP_SPORT_FLOW_LABEL, RANGE, NUM, \
	  "UDP source port of RoCEv2 packets: 0 flow_label, 1 qpn (0)")

/* RXECC_SW_<name>: a switch's index in the table */
#define RXECC_SW_INDEX(n, ...) RXECC_SW_##n,
enum rxecc_switch_index {
	RXECC_SWITCHES(RXECC_SW_INDEX)
	RXECC_NUM_SWITCHES
};

/*
 * The configuration of one device (and the defaults new devices copy): the
 * DCQCN parameters, the switches and the DSCP map. Readers use it under
 * RCU; a change builds a new one and replaces the pointer, so a QP sees
 * all of a change or none of it.
 */
struct rxecc_dev_config {
	struct rcu_head rcu;
	struct rxecc_dcqcn_params dcqcn;
	int profile;		/* the profile the values equal, -1 = custom */
	/* the switches (RXECC_SWITCHES) */
	u8 rp_enable;		/* bit p: reaction point on for priority p */
	u8 np_enable;		/* bit p: notification point on for priority p */
	u8 ecn;			/* ECN field of data packets: 0 = as the AV says */
	u8 pfc_enable;		/* bit p: PFC frames honoured (and sent) for priority p */
	u8 roce_prio;		/* 0..7: priority of every packet; 8: dscp2prio */
	u32 link_speed;		/* port speed, Mbit/s; 0: as the netdev reports */
	u32 pfc_rx_xoff;	/* us in the receive backlog: send XOFF; 0 = never */
	u32 pfc_rx_xon;		/* ... and XON again */
	u32 tx_qlimit;		/* bytes in the egress qdisc: QPs wait; 0 = off */
	u32 pfc_stall_critical;	/* ms in XOFF: stop pausing; 0 = off */
	u32 pfc_stall_minor;	/* ms in XOFF: a warning; 0 = from critical */
	u8 udp_sport;		/* enum rxecc_udp_sport */
	u8 dscp2prio[64];	/* priority of each DSCP */
};

/* The port speed when neither link_speed nor the netdev gives one. */
#define RXECC_DEFAULT_LINK_MBPS	10000

/* Bits of the bitmaps of QPs waiting for the retry timer (rxecc_retry.c). */
#define RXECC_RETRY_BITS	1024
#define RXECC_RETRY_LONGS	BITS_TO_LONGS(RXECC_RETRY_BITS)

/*
 * Priority flow control received on the device's netdev (rxecc_pfc.c):
 * which priorities are paused until when, and the QPs waiting for them.
 */
struct rxecc_pfc {
	spinlock_t lock;		/* everything below, IRQs saved */
	struct hrtimer timer;		/* ends the earliest pause */
	u8 paused;			/* bit p: priority p paused */
	u64 since[8];			/* ns, start of the current pause */
	u64 until[8];			/* ns, its end */
	struct list_head waiters[8];	/* struct rxecc_qp.pfc_node */
	struct list_head waking;	/* theirs, once their pause ended */
	/* jiffies: until then QPs of the priority ask for an ACK per packet */
	unsigned long ack_until[8];
	unsigned long ack_until_any;	/* the latest of them */
	/* sending PFC: the receive backlog delay of each priority */
	u8 rx_on;			/* bit p: sending on for priority p */
	bool rx_tstamp;			/* holds net_enable_timestamp() */
	u64 rx_wait[8];			/* ns the last packet waited */
	u64 rx_last[8];			/* ns, when the last one arrived */
	unsigned long rx_over;		/* bit p: waited pfc_rx_xoff+ (atomic, no lock) */
	u8 xoff_sent;			/* bit p: XOFF sent, XON not yet */
	u64 xoff_since[8];		/* ns */
	u64 refresh_at;			/* ns, next XOFF refresh */
	/* pause-storm prevention: XOFF stopped until the backlog is short */
	u8 stalled;			/* bit p */
	u8 stall_warned;		/* bit p: warning counted for this XOFF */
	bool tx_kick;			/* the send timer is due now */
	struct hrtimer tx_timer;	/* sends XOFF, refreshes, XON */
};

/*
 * State rxecc keeps in every struct rxe_dev (field `cc`). It must stay the
 * LAST member of struct rxe_dev: while the in-tree rdma_rxe is loaded too, its
 * netdev notifier looks devices up by netdev and driver id and can find an
 * rxecc device; it then works on it as on its own struct rxe_dev, which is
 * harmless only as long as every field it knows sits where it expects it.
 */
struct rxecc_dev {
	struct list_head node;	/* on the module's own device list */
	struct net *net;	/* namespace of the netdev (no reference) */
	bool net_held;		/* counted as a user of the namespace's sockets */
	bool visible;		/* registered: named, found by netlink lookups */
	/*
	 * The device's netdev, held until deallocation: ib_core lets go of
	 * its own reference when it unregisters the device, before
	 * rxe_dealloc(), and rxecc reads it until then (netlink, the PFC send
	 * timer). rxe 6.1 keeps it in rxe->ndev, later rxe asks ib_core.
	 */
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	bool ndev_held;
	bool ndev_gone;		/* NETDEV_UNREGISTER: no more PFC frames out */
	u32 port_mbps;		/* port speed (ethtool), 0 if unknown */
	struct rxecc_dev_config __rcu *cfg; /* from registration to deallocation */
	struct rxecc_pfc pfc;
	/*
	 * Where QPs that had no state to wait with after a local drop are: a
	 * bit per QP index modulo RXECC_RETRY_BITS, requester and responder
	 * apart; the retry timer clears them and schedules the QPs there still
	 * marked waiting (qp->cc_retry_req, _resp; rxecc_retry.c)
	 */
	unsigned long retry_req[RXECC_RETRY_LONGS];
	unsigned long retry_resp[RXECC_RETRY_LONGS];
	spinlock_t retry_lock;		/* arming the timer, IRQs saved */
	struct hrtimer retry_timer;
	u64 retry_gap_ns;		/* the timer's wait: 10 ms..1 s, 10 walks */
};

/*
 * Per-priority PFC port counters (rxecc_counters.h declares
 * 8 * RXECC_PFC_PRIO_COUNTERS of them from RXECC_CNT_PFC_PRIO), mlx5 names.
 */
#define RXECC_PFC_PRIO_COUNTERS	3
#define RXECC_PFC_RX_PAUSE		0	/* frames pausing or resuming p */
#define RXECC_PFC_RX_PAUSE_DURATION	1	/* us p was paused */
#define RXECC_PFC_RX_PAUSE_TRANSITION	2	/* times p went running -> paused */
#define RXECC_PFC_CNT(p, k) (RXECC_CNT_PFC_PRIO + (p) * RXECC_PFC_PRIO_COUNTERS + (k))
/* and 8 * 2 from RXECC_CNT_PFC_TX_PRIO: tx_prio<p>_pause, ..._duration (us) */
#define RXECC_PFC_TX_CNT(p, k) (RXECC_CNT_PFC_TX_PRIO + (p) * 2 + (k))

/* The RoCEv2 CNP: BTH opcode 0x81 with BECN, then 16 reserved bytes. */
#define RXECC_OPCODE_CNP	0x81
#define RXECC_CNP_RESERVED	16

/* Device lifetime hooks (rxe.c, rxe_verbs.c). */
void rxecc_dev_init(struct rxe_dev *rxe, struct net_device *ndev);
int rxecc_dev_registering(struct rxe_dev *rxe);
void rxecc_dev_registered(struct rxe_dev *rxe);
void rxecc_dev_cleanup(struct rxe_dev *rxe);

/*
 * True if @ibdev belongs to this module. rxe and rxecc share the driver id
 * RDMA_DRIVER_RXE (librxe binds on it), so a lookup by driver id can return
 * a device of the in-tree rdma_rxe; it must never be taken for ours.
 */
bool rxecc_owns(const struct ib_device *ibdev);

/*
 * Unregister the devices of this module whose netdev is in @net (all of them
 * if @net is NULL) and wait until they are gone. Process context.
 */
void rxecc_unregister_devices(struct net *net);

/*
 * Under the lock, the devices of this module stay allocated: lookups for
 * netlink requests. rxecc_dev_find() matches @name, or @index if @name is
 * NULL, among the registered devices whose netdev is in @net;
 * rxecc_dev_next() returns the one with the smallest index >= @index (dumps).
 */
void rxecc_devices_lock(void);
void rxecc_devices_unlock(void);
struct rxe_dev *rxecc_dev_find(struct net *net, const char *name, u32 index);
struct rxe_dev *rxecc_dev_next(struct net *net, u32 index);

/* Module init and exit (rxecc_main.c), around rxe's own. */
int rxecc_module_init(void);
void rxecc_module_exit(void);

/* Configuration (rxecc_config.c). */
void rxecc_config_init(void);
void rxecc_config_exit(void);
int rxecc_cc_dev_init(struct rxe_dev *rxe);
void rxecc_cc_dev_exit(struct rxe_dev *rxe);
/* Writers of the configurations hold this; readers use RCU. */
extern struct mutex rxecc_cc_mutex;
struct rxecc_dev_config *rxecc_cc_defaults_locked(void);
void rxecc_cc_replace_defaults(struct rxecc_dev_config *new);
void rxecc_cc_replace(struct rxe_dev *rxe, struct rxecc_dev_config *new);
int rxecc_cc_profile_of(const struct rxecc_dcqcn_params *p);
/* A rule across switches that a configuration breaks: its message (static
 * text, for extack) and the switches it names, the one to blame first.
 */
struct rxecc_cfg_fault {
	const char *msg;
	int sw, other;	/* RXECC_SW_* */
};

int rxecc_dev_config_check(const struct rxecc_dev_config *c, struct rxecc_cfg_fault *f);
/* A consistent copy of a QP's congestion control state (rates brought to now). */
struct rxecc_qp_snap {
	struct rxecc_dcqcn_rp rp;
	u64 cnp_handled;
	u64 cnp_sent;
	u64 rp_tx_deferred;
	u8 prio;
};

void rxecc_qp_snapshot(struct rxe_qp *qp, struct rxecc_qp_snap *s);

static inline u32 rxecc_alpha_ppm(u32 alpha)
{
	return (u32)(((u64)alpha * 1000000) >> RXECC_ALPHA_SHIFT);
}

void rxecc_dev_speed(struct rxe_dev *rxe);
void rxecc_netdev_event(struct rxe_dev *rxe, unsigned long event);
u32 rxecc_link_mbps(struct rxe_dev *rxe, const struct rxecc_dev_config *cfg);

/* A QP's state (rxecc_qp.c). */
int rxecc_qp_cache_init(void);
void rxecc_qp_cache_exit(void);
void rxecc_qp_reset(struct rxe_qp *qp);
void rxecc_qp_destroy(struct rxe_qp *qp);
bool rxecc_qp_destroyed(struct rxe_qp *qp);
void rxecc_qp_cleanup(struct rxe_qp *qp);
void rxecc_qp_free(struct rxe_qp *qp);
void rxecc_qp_clear_counts(struct rxe_qp *qp);
int rxecc_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
/* Who reads about QPs: an administrator of the namespace, or a process. */
struct rxecc_reader {
	struct pid *tgid;	/* its thread group; NULL: none */
	bool admin;		/* CAP_NET_ADMIN over the device's namespace */
};

bool rxecc_qp_visible(struct rxe_qp *qp, const struct rxecc_reader *r);
/* mlx5's RoCE packet type in a UD receive completion's sl */
#define RXECC_WC_SL_ROCE_UDP	0x8
#define RXECC_WC_SL_IPV6	0x1
#define RXECC_WC_SL_IPV4	0x2
u8 rxecc_ud_wc_sl(const struct sk_buff *skb);

/* No ICRC for a loopback packet (rxecc_icrc.c; patch 0023). */
struct rxe_pkt_info;
bool rxecc_icrc_skip(const struct rxe_pkt_info *pkt);

/* The UDP source port of RoCEv2 packets (rxecc_sport.c). */
struct ib_qp_attr;
void rxecc_qp_set_sport(struct rxe_qp *qp, const struct ib_qp_attr *attr,
			int mask);
__be16 rxecc_udp_sport(struct rxe_pkt_info *pkt, const struct rxe_av *av);
void rxecc_ipv6_flow_label(struct sk_buff *skb, const struct rxe_av *av);

/* The transmit gate (rxecc_gate.c). */
u8 rxecc_tx_tos(struct rxe_pkt_info *pkt, struct sk_buff *skb, u8 tclass);
/*
 * The transmit gate: true if the QP must not build its next packet (of
 * @payload bytes, opcode @opcode) now, because its priority is paused by PFC
 * or the DCQCN rate limiter holds it back; the requester (or, with @resp,
 * the responder) is scheduled again when it may go on.
 */
bool rxecc_tx_wait(struct rxe_qp *qp, int opcode, u32 payload, bool resp);
bool rxecc_rp_wait(struct rxe_qp *qp, int opcode, u32 payload, bool resp);
bool rxecc_rp_ack_req(struct rxe_qp *qp);

/* Packets built again (rxecc_retry.c). */
/* The requester's packet was dropped by the local stack: retry it later. */
void rxecc_tx_dropped(struct rxe_qp *qp);
bool rxecc_retry_hold(struct rxe_qp *qp, bool resp);
void rxecc_retry_dev_init(struct rxe_dev *rxe);
void rxecc_retry_dev_exit(struct rxe_dev *rxe);
/* The same for a read response; read_reply() first puts back what it took. */
void rxecc_read_reply_dropped(struct rxe_qp *qp);
/* @state: an enum rdatm_res_state (rxe_verbs.h), declared after this file */
void rxecc_read_reply_putback(struct rxe_qp *qp, struct resp_res *res,
			      int state, struct rxe_mr *mr);
/*
 * No socket buffer for the requester's packet (or, with @resp, a read
 * response): true if the QP builds it again later.
 */
bool rxecc_tx_nomem(struct rxe_qp *qp, struct rxe_av *av, bool resp);

/* Notification and reaction point (rxecc_cnp.c). */
void rxecc_np_rcv(struct rxe_pkt_info *pkt, struct sk_buff *skb);
void rxecc_np_taken(struct rxe_pkt_info *pkt);
void rxecc_np_in_seq(struct rxe_qp *qp, struct rxe_pkt_info *pkt);
void rxecc_rcv_cnp(struct rxe_pkt_info *pkt, struct sk_buff *skb);

/* Priorities and PFC (rxecc_pfc.c). */
static inline u8 rxecc_cfg_prio(const struct rxecc_dev_config *cfg, u8 tclass)
{
	if (cfg->roce_prio < RXECC_ROCE_PRIO_DSCP)
		return cfg->roce_prio;
	return cfg->dscp2prio[tclass >> 2];
}

int rxecc_pfc_init(void);
void rxecc_pfc_exit(void);
void rxecc_pfc_dev_init(struct rxe_dev *rxe);
void rxecc_pfc_dev_exit(struct rxe_dev *rxe);
void rxecc_pfc_qp_forget(struct rxe_qp *qp, struct rxecc_qp *cc);
bool rxecc_pfc_wait(struct rxe_qp *qp, bool resp);
bool rxecc_pfc_ack_req(struct rxe_qp *qp);
#define RXECC_PFC_RX_ARRIVED	BIT(0)
#define RXECC_PFC_RX_TAKEN	BIT(1)
void rxecc_pfc_rx(struct rxe_dev *rxe, const struct sk_buff *skb, u8 dsfield,
		  unsigned int what);
void rxecc_pfc_cfg_changed(struct rxe_dev *rxe, const struct rxecc_dev_config *cfg);
void rxecc_pfc_netdev_gone(struct rxe_dev *rxe);

/* Generic netlink family "rxecc" (rxecc_nl.c). */
int rxecc_nl_init(void);
void rxecc_nl_exit(void);

/* Per-namespace RoCE UDP sockets (rxecc_net.c; rxe_net.c's init/exit). */
int rxecc_net_register(void);
void rxecc_net_unregister(void);
int rxecc_net_get(struct net *net, struct net_device *ndev);
void rxecc_net_put(struct net *net);

/* rxe_net.c's UDP tunnel helpers, no longer static. */
struct socket *rxe_setup_udp_tunnel(struct net *net, __be16 port, bool ipv6);
void rxe_release_udp_tunnel(struct socket *sk);

#endif /* RXECC_H */
