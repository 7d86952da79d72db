/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * rxecc DCQCN core: the reaction point (RP) and notification point (NP)
 * arithmetic of DCQCN (Zhu et al., SIGCOMM 2015) with the parameter names,
 * units and semantics of NVIDIA ConnectX (mlx5) firmware.
 *
 * Plain C, fixed point, no kernel API: the module and the host unit tests
 * (userspace/tests) compile this same code. Time is in nanoseconds of any
 * monotonic clock, rates are in kbit/s, alpha is a Q20 fraction. Nothing here
 * locks, sleeps or allocates; the caller serialises calls per QP.
 */
#ifndef RXECC_DCQCN_H
#define RXECC_DCQCN_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include "rxecc_dcqcn_host.h"
#endif

#define RXECC_ALPHA_SHIFT 20
#define RXECC_ALPHA_ONE 1048576U	/* alpha = 1.0, 1 << RXECC_ALPHA_SHIFT */
#define RXECC_BYTE_RESET_UNIT 64	/* rp_byte_reset counts 64-byte units */
/*
 * Steps of rxecc_dcqcn_rp_advance() per call: single events and runs of
 * events taken at once. A few hundred at most are ever needed, whatever the
 * time since the last call.
 */
#define RXECC_MAX_ADVANCE_STEPS 1024
#define RXECC_STAGE_MAX 0xffffffffU	/* stage counters stop there */

/*
 * The DCQCN parameters: mlx5 names (debugfs cc_params), mlx5 units. The
 * ranges and the two profiles are in rxecc_dcqcn.c.
 */
struct rxecc_dcqcn_params {
	u32 rp_clamp_tgt_rate;		/* bool: Rt = Rc on every cut */
	u32 rp_clamp_tgt_rate_ati;	/* bool: Rt = Rc on a cut after a timer increase */
	u32 rp_time_reset;		/* us between timer increase events */
	u32 rp_byte_reset;		/* 64-byte units between byte events, 0 = off */
	u32 rp_threshold;		/* F: stages of fast recovery */
	/*
	 * The rates are kept in kbit/s; the parameters of the mlx5 names
	 * (rp_ai_rate, ...) show and set them in Mbit/s, those with the
	 * suffix _kbps in kbit/s (see rxecc_dcqcn_param_descs).
	 */
	u32 rp_ai_rate_kbps;		/* additive increase step */
	u32 rp_hai_rate_kbps;		/* hyper increase step */
	u32 rp_max_rate_kbps;		/* 0 = port speed */
	u32 rp_min_dec_fac;		/* %, a cut keeps at least this share of Rc */
	u32 rp_min_rate_kbps;		/* floor of Rc */
	u32 rp_rate_to_set_on_first_cnp_kbps; /* 0 = cut from line rate */
	u32 rp_dce_tcp_g;		/* alpha gain G in 1/1024: g = 1 - G/1024 */
	u32 rp_dce_tcp_rtt;		/* us, alpha update period */
	u32 rp_rate_reduce_monitor_period; /* us, at most one cut per period */
	u32 rp_initial_alpha_value;	/* 1/1024, alpha on the first CNP */
	u32 rp_gd;			/* cut = Rc * alpha[1/1024] / 2^gd */
	u32 np_min_time_between_cnps;	/* us, per QP */
	u32 np_cnp_dscp;		/* DSCP of CNPs */
	u32 np_cnp_prio;		/* 802.1p priority of CNPs */
};

/*
 * One parameter's name, place and valid range (inclusive, in its unit). A
 * parameter with a @scale other than 1 is a view of a finer one at the same
 * place: it shows the value divided by @scale (rounded down) and sets it
 * multiplied.
 */
struct rxecc_dcqcn_param_desc {
	const char *name;
	unsigned int offset;	/* in struct rxecc_dcqcn_params */
	u32 min;
	u32 max;
	const char *unit;
	u32 scale;
};

/*
 * The DCQCN parameters, declared once, in the order of enum
 * rxecc_dcqcn_attr (the netlink attribute of each is its index + 1):
 *   P(name, ATTR, min, max, unit, description) a value kept in its field;
 *   R(name, ATTR, min, max, description) a rate in Mbit/s (the mlx5 name)
 *     kept in kbit/s in the field name_kbps, which is a parameter too.
 * The parameter table (rxecc_dcqcn_param_descs), the netlink policy and the
 * module parameters are generated from it; docs/dcqcn.md lists them
 * (ci/tables_check.py compares), and the profiles below give the values.
 */
#define RXECC_KBPS_MAX 400000000U	/* 400 Gbit/s */
#define RXECC_DCQCN_PARAMS(P, R) \
	P(rp_clamp_tgt_rate, RP_CLAMP_TGT_RATE, 0, 1, "bool", \
	  "Rt = Rc on every rate cut (bool, mlx5 0)") \
	P(rp_clamp_tgt_rate_ati, RP_CLAMP_TGT_RATE_ATI, 0, 1, "bool", \
	  "Rt = Rc on a cut after a timer increase (bool, mlx5 1)") \
	P(rp_time_reset, RP_TIME_RESET, 1, 1000000, "us", \
	  "Time between rate increase events (us, mlx5 300)") \
	P(rp_byte_reset, RP_BYTE_RESET, 0, 16777215, "64B", \
	  "Bytes between rate increase events (64 B units, 0 off, mlx5 32767)") \
	P(rp_threshold, RP_THRESHOLD, 0, 31, "events", \
	  "Increase events of fast recovery, F (mlx5 1)") \
	R(rp_ai_rate, RP_AI_RATE, 0, 400000, \
	  "Additive increase step (Mbit/s, mlx5 5)") \
	R(rp_hai_rate, RP_HAI_RATE, 0, 400000, \
	  "Hyper increase step (Mbit/s, mlx5 50)") \
	R(rp_max_rate, RP_MAX_RATE, 0, 400000, \
	  "Rate ceiling (Mbit/s, 0 = port speed)") \
	P(rp_min_dec_fac, RP_MIN_DEC_FAC, 1, 100, "%", \
	  "A cut keeps at least this share of the rate (%, mlx5 50)") \
	R(rp_min_rate, RP_MIN_RATE, 1, 400000, \
	  "Rate floor (Mbit/s, mlx5 1)") \
	R(rp_rate_to_set_on_first_cnp, RP_RATE_TO_SET_ON_FIRST_CNP, 0, 400000, \
	  "Rate after the first CNP (Mbit/s, 0 = cut, mlx5 0)") \
	P(rp_dce_tcp_g, RP_DCE_TCP_G, 0, 1023, "1/1024", \
	  "Alpha gain G, g = 1 - G/1024 (mlx5 1019)") \
	P(rp_dce_tcp_rtt, RP_DCE_TCP_RTT, 1, 131071, "us", \
	  "Alpha update period (us, mlx5 1)") \
	P(rp_rate_reduce_monitor_period, RP_RATE_REDUCE_MONITOR_PERIOD, 0, 131071, "us", \
	  "Minimum time between cuts (us, mlx5 4)") \
	P(rp_initial_alpha_value, RP_INITIAL_ALPHA_VALUE, 0, 1024, "1/1024", \
	  "Alpha on the first CNP (1/1024, mlx5 1023)") \
	P(rp_gd, RP_GD, 0, 15, "log2", \
	  "Cut = Rc * alpha / 2^gd, alpha in 1/1024 (mlx5 11)") \
	P(np_min_time_between_cnps, NP_MIN_TIME_BETWEEN_CNPS, 0, 1000000, "us", \
	  "Minimum gap between CNPs of a QP (us, mlx5 4)") \
	P(np_cnp_dscp, NP_CNP_DSCP, 0, 63, "dscp", \
	  "DSCP of CNPs (mlx5 48)") \
	P(np_cnp_prio, NP_CNP_PRIO, 0, 7, "prio", \
	  "802.1p priority of CNPs (mlx5 6)") \
	P(rp_ai_rate_kbps, RP_AI_RATE_KBPS, 0, RXECC_KBPS_MAX, "kbps", \
	  "Additive increase step (kbit/s; rp_ai_rate in kbit/s)") \
	P(rp_hai_rate_kbps, RP_HAI_RATE_KBPS, 0, RXECC_KBPS_MAX, "kbps", \
	  "Hyper increase step (kbit/s; rp_hai_rate in kbit/s)") \
	P(rp_max_rate_kbps, RP_MAX_RATE_KBPS, 0, RXECC_KBPS_MAX, "kbps", \
	  "Rate ceiling (kbit/s, 0 = port speed; rp_max_rate in kbit/s)") \
	P(rp_min_rate_kbps, RP_MIN_RATE_KBPS, 1, RXECC_KBPS_MAX, "kbps", \
	  "Rate floor (kbit/s; rp_min_rate in kbit/s)") \
	P(rp_rate_to_set_on_first_cnp_kbps, RP_RATE_TO_SET_ON_FIRST_CNP_KBPS, \
	  0, RXECC_KBPS_MAX, "kbps", \
	  "Rate after the first CNP (kbit/s, 0 = cut; rp_rate_to_set_on_first_cnp in kbit/s)")

/* RXECC_DCQCN_P_<name>: a parameter's index in the table */
#define RXECC_DCQCN_P_INDEX(n, ...) RXECC_DCQCN_P_##n,
enum rxecc_dcqcn_param_index {
	RXECC_DCQCN_PARAMS(RXECC_DCQCN_P_INDEX, RXECC_DCQCN_P_INDEX)
	RXECC_DCQCN_NUM_PARAMS
};

extern const struct rxecc_dcqcn_param_desc rxecc_dcqcn_param_descs[RXECC_DCQCN_NUM_PARAMS];
extern const unsigned int rxecc_dcqcn_num_params;

enum rxecc_dcqcn_profile {
	RXECC_PROFILE_MLX5,	/* ConnectX-5 firmware defaults */
	RXECC_PROFILE_PAPER,	/* the values of the SIGCOMM 2015 paper */
	RXECC_PROFILE_LAB,	/* the paper's dynamics at a TCG guest's speed */
	RXECC_NUM_PROFILES,
};

extern const char *const rxecc_dcqcn_profile_names[RXECC_NUM_PROFILES];

void rxecc_dcqcn_load_profile(struct rxecc_dcqcn_params *p, enum rxecc_dcqcn_profile prof);
/* Index of the profile @name, or -1. */
int rxecc_dcqcn_profile_find(const char *name);
/* Index of the parameter @name, or -1. */
int rxecc_dcqcn_param_find(const char *name);
/* The index of the parameter that parameter @i is a view of, or @i. */
unsigned int rxecc_dcqcn_param_base(unsigned int i);
u32 rxecc_dcqcn_param_get(const struct rxecc_dcqcn_params *p, unsigned int i);
/* Sets parameter @i; -1 (and nothing changed) if @v is out of its range. */
int rxecc_dcqcn_param_set(struct rxecc_dcqcn_params *p, unsigned int i, u32 v);
/* 0 if every parameter is in range, else the index + 1 of the first that is not. */
unsigned int rxecc_dcqcn_params_check(const struct rxecc_dcqcn_params *p);
/* The largest speedup rxecc_dcqcn_scale_profile() takes. */
#define RXECC_SPEEDUP_MAX 1024

/*
 * The profile @prof for a line rate of @line_kbps: the reference's values
 * kept constant in packet times and in fractions of the line rate. Times
 * (rp_time_reset, rp_dce_tcp_rtt, rp_rate_reduce_monitor_period,
 * np_min_time_between_cnps) grow by k = reference rate / @line_kbps, rates
 * (rp_ai_rate, rp_hai_rate, rp_min_rate, rp_max_rate and
 * rp_rate_to_set_on_first_cnp) shrink by k; byte counts, fractions and
 * gains stay. @speedup (1..RXECC_SPEEDUP_MAX; 0 means 1) then runs the
 * algorithm's clocks that many times faster than the packet clock: the
 * times and the byte counter (rp_byte_reset) are divided by it, and their
 * ratios to each other stay, so that a lab at a slow line goes through the
 * reference's cuts and increases @speedup times sooner.
 * Each value is rounded to its unit and kept in its range.
 * Near the ends of a time's range the rounding and clamping break those
 * ratios. -1, and @p untouched, if @prof has no reference rate (the lab
 * profile), @line_kbps is 0 or above 400 Gbit/s, or @speedup is above
 * RXECC_SPEEDUP_MAX.
 */
int rxecc_dcqcn_scale_profile(struct rxecc_dcqcn_params *p, enum rxecc_dcqcn_profile prof,
			      u64 line_kbps, u32 speedup);
/* The line rate the values of profile @prof are for, kbit/s (0: none). */
u64 rxecc_dcqcn_profile_kbps(enum rxecc_dcqcn_profile prof);

/* What moved the rate last (for rp_clamp_tgt_rate_ati and the trace). */
enum rxecc_dcqcn_event {
	RXECC_EV_NONE,
	RXECC_EV_CUT,		/* a CNP cut the rate */
	RXECC_EV_FIRST_CNP,	/* the first CNP set the rate */
	RXECC_EV_TIMER,		/* a timer increase event */
	RXECC_EV_BYTES,		/* a byte counter increase event */
	RXECC_EV_RELEASE,	/* back at the maximum: limiter released */
};

/* Reaction point state of one QP. All zero = inactive, at line rate. */
struct rxecc_dcqcn_rp {
	u64 rc;			/* current rate, kbit/s */
	u64 rt;			/* target rate, kbit/s */
	u64 bytes;		/* bytes sent since the last byte event */
	u64 t_next_inc;		/* next timer increase event */
	u64 t_alpha;		/* end of the current alpha period */
	u64 t_last_cut;		/* time of the last cut */
	u32 alpha;		/* Q20 */
	u32 t_stage;		/* timer events since the last cut */
	u32 bc_stage;		/* byte events since the last cut */
	u8 active;		/* limiting: a CNP was seen, not yet released */
	u8 alpha_cnp;		/* a CNP arrived in the current alpha period */
	u8 cut_pending;		/* a CNP arrived inside the monitor period */
	u8 last_event;		/* enum rxecc_dcqcn_event */
};

/* What rxecc_dcqcn_rp_cnp() did with a CNP. */
enum rxecc_dcqcn_cnp_result {
	RXECC_CNP_CUT,		/* the rate was cut now */
	RXECC_CNP_FIRST,	/* first CNP: rate set to rp_rate_to_set_on_first_cnp */
	RXECC_CNP_COALESCED,	/* inside the monitor period: one cut at its end */
};

/* The rate ceiling: rp_max_rate_kbps, or @line_kbps when it is 0. */
u64 rxecc_dcqcn_max_kbps(const struct rxecc_dcqcn_params *p, u64 line_kbps);

enum rxecc_dcqcn_cnp_result
rxecc_dcqcn_rp_cnp(struct rxecc_dcqcn_rp *rp, const struct rxecc_dcqcn_params *p,
		   u64 line_kbps, u64 now);

/*
 * Bring the state to @now: alpha periods that ended, a coalesced cut whose
 * monitor period ended, timer increase events that fell due. Returns true if
 * the rate changed. Releases the limiter (active = 0) once Rc and Rt are
 * back at the maximum.
 */
bool rxecc_dcqcn_rp_advance(struct rxecc_dcqcn_rp *rp,
			    const struct rxecc_dcqcn_params *p,
			    u64 line_kbps, u64 now);

/* Account @bytes sent at @now (byte counter events). True if the rate changed. */
bool rxecc_dcqcn_rp_sent(struct rxecc_dcqcn_rp *rp,
			 const struct rxecc_dcqcn_params *p,
			 u64 line_kbps, u64 bytes, u64 now);

/* Nanoseconds that @bytes take at @kbps (at least 1 kbit/s). */
u64 rxecc_dcqcn_tx_ns(u64 bytes, u64 kbps);

/*
 * The pacer of one QP: when its next packet may start. The last packet's
 * start (on the pacer's clock) and size are kept, not a precomputed send
 * time, so the next packet is due when the last one has taken its time at
 * the rate of now: a rate that rises or falls during a wait applies at once.
 *
 * Timers and tasks run late, by a lot in an emulated guest (measured under
 * TCG: 120 us at the median, 3.5 ms at p99), and each wait costs a timer and
 * a task run. So:
 * - a packet may start up to RXECC_PACE_EARLY_NS before it is due, and its
 *   successor is still due one packet time after its due time: one wake-up
 *   sends what falls due within that allowance, at the same average rate;
 * - a packet that was held back and started late starts its successor's
 *   clock at its own due time, making up to RXECC_PACE_LATE_NS of lateness,
 *   and so do the packets that follow it at once (within the last packet's
 *   time: the QP catching up) until one goes on time;
 * - one that was not held back (the QP had nothing to send) makes up at most
 *   RXECC_PACE_CREDIT_NS: an idle QP saves up no more than that.
 * A burst is so at most (RXECC_PACE_EARLY_NS + the lateness made up) at Rc.
 * Lateness beyond that is lost, and counted (late_ns, idle_ns): the two
 * tell a QP slowed by its wake-ups from one that had nothing to send.
 */
#define RXECC_PACE_EARLY_NS	1000000ULL
#define RXECC_PACE_CREDIT_NS	1000000ULL
#define RXECC_PACE_LATE_NS	5000000ULL

struct rxecc_dcqcn_pace {
	u64 t;			/* start of the last packet, pacer clock */
	u64 bytes;		/* its bytes on the wire; 0: none yet */
	u64 last;		/* when the last packet went (its @now) */
	u64 late_ns;		/* time lost: held back and woken too late */
	u64 idle_ns;		/* time lost: late, neither held nor catching up */
	u8 held;		/* the next packet was held back */
	u8 behind;		/* the last one went late, held or catching up */
};

/* When the next packet is due at @kbps (0: at once). */
u64 rxecc_dcqcn_pace_due(const struct rxecc_dcqcn_pace *pc, u64 kbps);

/* When the next packet may start at @kbps: its due time less the allowance. */
u64 rxecc_dcqcn_pace_start(const struct rxecc_dcqcn_pace *pc, u64 kbps);

/* The next packet was held back (it waits for its start). */
void rxecc_dcqcn_pace_hold(struct rxecc_dcqcn_pace *pc);

/*
 * A packet of @bytes starts at @now, at @kbps: at or after its start, or
 * earlier if it may not wait (the clock then starts again at @now).
 * Lateness not made up is added to late_ns if the packet was held back or
 * follows one that went late within that one's packet time (the QP catching
 * up), else to idle_ns (the QP was not waiting for the limiter: it had
 * nothing to send, or waited for something else, PFC or its own qdisc).
 */
void rxecc_dcqcn_pace_sent(struct rxecc_dcqcn_pace *pc, u64 kbps, u64 bytes, u64 now);

/* Notification point state of one QP. */
struct rxecc_dcqcn_np {
	u64 t_last_cnp;		/* when the last CNP was sent */
	u8 sent;		/* a CNP was sent before */
	u8 pending;		/* a CE mark waits for the end of the gap */
};

enum rxecc_dcqcn_np_action {
	RXECC_NP_SEND,		/* send a CNP now */
	RXECC_NP_DEFER,		/* send one at *when (start a timer) */
	RXECC_NP_PENDING,	/* one is already due at the end of the gap */
};

/*
 * A CE-marked packet arrived for the QP at @now. The first mark after a gap
 * of np_min_time_between_cnps gives a CNP at once; marks inside the gap give
 * one CNP at its end.
 */
enum rxecc_dcqcn_np_action
rxecc_dcqcn_np_ce(struct rxecc_dcqcn_np *np, const struct rxecc_dcqcn_params *p,
		  u64 now, u64 *when);

/* The timer of a deferred CNP fired at @now: true if a CNP is to be sent. */
bool rxecc_dcqcn_np_timer(struct rxecc_dcqcn_np *np, u64 now);

#endif /* RXECC_DCQCN_H */
