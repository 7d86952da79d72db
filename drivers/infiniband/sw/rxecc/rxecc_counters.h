/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * rxecc's port counters, declared once: each line an index (RXECC_CNT_<id>
 * in enum rxe_counters) and its hw_counters name (mlx5's where mlx5 has
 * one). Patch 0004 appends them, in this order, after rxe's own counters
 * (rxe_hw_counters.h: the enum, rxe_hw_counters.c: the names); the order
 * is the order sysfs and `rxecc stats` show. docs/counters.md lists them
 * (ci/tables_check.py compares). Adding a counter: one line here, one row
 * there.
 */
#ifndef RXECC_COUNTERS_H
#define RXECC_COUNTERS_H

/* PFC per priority, received: frames pausing or resuming p, us p was
 * paused, times p went running -> paused (RXECC_PFC_CNT() in rxecc.h)
 */
#define RXECC_CNT_PFC_RX_OF(C, p) \
	C(PFC_RX_PRIO##p##_PAUSE, "rx_prio" #p "_pause") \
	C(PFC_RX_PRIO##p##_PAUSE_DURATION, "rx_prio" #p "_pause_duration") \
	C(PFC_RX_PRIO##p##_PAUSE_TRANSITION, "rx_prio" #p "_pause_transition")

/* PFC per priority, sent: frames, us in XOFF (RXECC_PFC_TX_CNT()) */
#define RXECC_CNT_PFC_TX_OF(C, p) \
	C(PFC_TX_PRIO##p##_PAUSE, "tx_prio" #p "_pause") \
	C(PFC_TX_PRIO##p##_PAUSE_DURATION, "tx_prio" #p "_pause_duration")

#define RXECC_CNT_PER_PRIO(M, C) \
	M(C, 0) M(C, 1) M(C, 2) M(C, 3) M(C, 4) M(C, 5) M(C, 6) M(C, 7)

/* C(id, name): every counter, in the order of the port's counters */
#define RXECC_COUNTERS(C) \
	/* DCQCN (rxecc_cnp.c, rxecc_gate.c) */ \
	C(NP_ECN_MARKED, "np_ecn_marked_roce_packets") \
	C(NP_CNP_SENT, "np_cnp_sent") \
	C(NP_CNP_SEND_ERR, "np_cnp_send_err") \
	C(RP_CNP_HANDLED, "rp_cnp_handled") \
	C(RP_CNP_IGNORED, "rp_cnp_ignored") \
	C(RP_CNP_DROP_UNKNOWN_QP, "rp_cnp_drop_unknown_qp") \
	C(RP_CNP_DROP_QP_STATE, "rp_cnp_drop_qp_state") \
	C(RP_CNP_DROP_SRC, "rp_cnp_drop_src_mismatch") \
	C(RP_CNP_DROP_MALFORMED, "rp_cnp_drop_malformed") \
	C(RP_CNP_DROP_PKEY, "rp_cnp_drop_pkey_mismatch") \
	C(RP_TX_DEFERRED, "rp_tx_deferred") \
	C(RP_PACE_LATE_US, "rp_pace_late_us") \
	C(RP_PACE_IDLE_US, "rp_pace_idle_us") \
	/* PFC and local drops (rxecc_pfc.c, rxecc_gate.c, rxecc_retry.c) */ \
	C(PFC_RX_IGNORED, "rx_pfc_ignored") \
	C(PFC_RX_MALFORMED, "rx_pfc_malformed") \
	C(PFC_RX_REJECTED, "rx_pfc_rejected") \
	C(PFC_TX_ERR, "tx_pfc_send_err") \
	C(QP_CC_NOMEM, "qp_cc_nomem") \
	C(PFC_TX_DEFERRED, "tx_pfc_deferred") \
	C(TX_LOCAL_RETRY, "tx_local_retry") \
	C(TX_QUEUE_DEFERRED, "tx_queue_deferred") \
	C(TX_NOMEM_RETRY, "tx_nomem_retry") \
	/* packets rxe_rcv() drops, by reason (patch 0005) */ \
	C(RX_DROP_MALFORMED, "rx_drop_malformed") \
	C(RX_DROP_DGID, "rx_drop_dgid") \
	C(RX_DROP_UNKNOWN_QP, "rx_drop_unknown_qp") \
	C(RX_DROP_QP_STATE, "rx_drop_qp_state") \
	C(RX_DROP_ADDR, "rx_drop_addr_mismatch") \
	C(RX_DROP_KEY, "rx_drop_key_mismatch") \
	C(RX_ICRC, "rx_icrc_encapsulated") \
	RXECC_CNT_PER_PRIO(RXECC_CNT_PFC_RX_OF, C) \
	RXECC_CNT_PER_PRIO(RXECC_CNT_PFC_TX_OF, C) \
	/* pause-storm prevention (rxecc_pfc.c) */ \
	C(PAUSE_STORM_WARN, "tx_pause_storm_warning_events") \
	C(PAUSE_STORM_ERR, "tx_pause_storm_error_events") \
	/* rxe's own events under mlx5's names (patch 0019) */ \
	C(OUT_OF_SEQUENCE, "out_of_sequence") \
	C(PACKET_SEQ_ERR, "packet_seq_err") \
	C(RNR_NAK_RETRY_ERR, "rnr_nak_retry_err") \
	C(LOCAL_ACK_TIMEOUT_ERR, "local_ack_timeout_err")

/* What the patch puts in enum rxe_counters and in rxe_counter_descs[]. */
#define RXECC_CNT_ENUM(id, str) RXECC_CNT_##id,
#define RXECC_CNT_DESC(id, str) \
	[RXECC_CNT_##id].name = str,

/* The first of each per-priority block (RXECC_PFC_CNT(), RXECC_PFC_TX_CNT()) */
#define RXECC_CNT_PFC_PRIO	RXECC_CNT_PFC_RX_PRIO0_PAUSE
#define RXECC_CNT_PFC_TX_PRIO	RXECC_CNT_PFC_TX_PRIO0_PAUSE

#endif /* RXECC_COUNTERS_H */
