// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * rxecc DCQCN core (see rxecc_dcqcn.h). The rules, in the order the paper
 * (section 3.3, figure 7) and the mlx5 firmware parameters describe them:
 *
 * CNP at the RP: the first CNP starts the limiter at the maximum rate with
 *   alpha = rp_initial_alpha_value (or sets Rc = Rt =
 *   rp_rate_to_set_on_first_cnp when that is not 0). A cut sets Rt = Rc when
 *   rp_clamp_tgt_rate is set, or rp_clamp_tgt_rate_ati is set and a timer
 *   event raised the rate since the last cut; then
 *   Rc = max(Rc - Rc * alpha / 2^rp_gd, Rc * rp_min_dec_fac / 100,
 *   rp_min_rate), and both stage counters and the byte counter restart. At
 *   most one cut per rp_rate_reduce_monitor_period: CNPs inside it coalesce
 *   into one cut at its end.
 * alpha: every rp_dce_tcp_rtt, alpha = alpha * G + (1 - G) if a CNP arrived
 *   in the period, else alpha * G, with G = rp_dce_tcp_g / 1024.
 * Increase events: one per rp_time_reset (timer stage T) and one per
 *   rp_byte_reset * 64 bytes sent (byte stage BC; with the byte counter off,
 *   BC follows T). With F = rp_threshold and the stages counted before the
 *   event: max(T, BC) < F is fast recovery (Rc = (Rt + Rc) / 2); min(T, BC) >
 *   F is hyper increase (Rt += rp_hai_rate, then the average); otherwise
 *   additive increase (Rt += rp_ai_rate, then the average). Rt never exceeds
 *   the maximum (rp_max_rate, 0 = line rate); back at the maximum the limiter
 *   is released.
 * NP: the first CE mark after a gap of np_min_time_between_cnps gives a CNP
 *   at once; marks inside the gap give one CNP at its end.
 */
#include <linux/math64.h>
#include "rxecc_dcqcn.h"

#define NSEC_PER_USEC_ 1000ULL
#define U64_MAX_ (~0ULL)

#define PARAM(n, attr, lo, hi, u, desc) { \
	.name = #n, \
	.offset = __builtin_offsetof(struct rxecc_dcqcn_params, n), \
	.min = lo, .max = hi, .unit = u, .scale = 1 },
/* A rate in Mbit/s (the mlx5 name), kept in kbit/s in the field n_kbps. */
#define RATE_MBPS(n, attr, lo, hi, desc) { \
	.name = #n, \
	.offset = __builtin_offsetof(struct rxecc_dcqcn_params, n##_kbps), \
	.min = lo, .max = hi, .unit = "Mbps", .scale = 1000 },

const struct rxecc_dcqcn_param_desc rxecc_dcqcn_param_descs[RXECC_DCQCN_NUM_PARAMS] = {
	RXECC_DCQCN_PARAMS(PARAM, RATE_MBPS)
};

const unsigned int rxecc_dcqcn_num_params = RXECC_DCQCN_NUM_PARAMS;

const char *const rxecc_dcqcn_profile_names[RXECC_NUM_PROFILES] = {
	[RXECC_PROFILE_MLX5] = "mlx5",
	[RXECC_PROFILE_PAPER] = "paper",
	[RXECC_PROFILE_LAB] = "lab",
};

/* ConnectX-5 firmware defaults (mlxconfig dumps, NVIDIA DCQCN parameters). */
static const struct rxecc_dcqcn_params rxecc_profile_mlx5 = {
	.rp_clamp_tgt_rate = 0,
	.rp_clamp_tgt_rate_ati = 1,
	.rp_time_reset = 300,
	.rp_byte_reset = 32767,
	.rp_threshold = 1,
	.rp_ai_rate_kbps = 5000,
	.rp_hai_rate_kbps = 50000,
	.rp_max_rate_kbps = 0,
	.rp_min_dec_fac = 50,
	.rp_min_rate_kbps = 1000,
	.rp_rate_to_set_on_first_cnp_kbps = 0,
	.rp_dce_tcp_g = 1019,
	.rp_dce_tcp_rtt = 1,
	.rp_rate_reduce_monitor_period = 4,
	.rp_initial_alpha_value = 1023,
	.rp_gd = 11,
	.np_min_time_between_cnps = 4,
	.np_cnp_dscp = 48,
	.np_cnp_prio = 6,
};

/*
 * SIGCOMM 2015: N = 50 us, K = T = 55 us, g = 1/256, B = 10 MB, F = 5,
 * R_AI = 40 Mbit/s, alpha starts at 1, Rt = Rc on every cut, one cut per CNP.
 * R_HAI is not given in the paper; 200 Mbit/s is the value of the author's
 * simulator configuration.
 */
static const struct rxecc_dcqcn_params rxecc_profile_paper = {
	.rp_clamp_tgt_rate = 1,
	.rp_clamp_tgt_rate_ati = 1,
	.rp_time_reset = 55,
	.rp_byte_reset = 156250,
	.rp_threshold = 5,
	.rp_ai_rate_kbps = 40000,
	.rp_hai_rate_kbps = 200000,
	.rp_max_rate_kbps = 0,
	.rp_min_dec_fac = 50,
	.rp_min_rate_kbps = 1000,
	.rp_rate_to_set_on_first_cnp_kbps = 0,
	.rp_dce_tcp_g = 1020,
	.rp_dce_tcp_rtt = 55,
	.rp_rate_reduce_monitor_period = 0,
	.rp_initial_alpha_value = 1024,
	.rp_gd = 11,
	.np_min_time_between_cnps = 50,
	.np_cnp_dscp = 48,
	.np_cnp_prio = 6,
};

/*
 * rxecc's own: the paper's rules (Rt = Rc on every cut, one cut per CNP,
 * F = 5, alpha starting at 1) with times and steps for links of tens of
 * Mbit/s, where a software switch in a TCG guest marks a few thousand
 * packets a second: CNPs at most every 100 us, alpha every 200 us with
 * g = 1/16, increase events every 1 ms of 1 and 5 Mbit/s, the byte counter
 * every 1 MiB.
 */
static const struct rxecc_dcqcn_params rxecc_profile_lab = {
	.rp_clamp_tgt_rate = 1,
	.rp_clamp_tgt_rate_ati = 1,
	.rp_time_reset = 1000,
	.rp_byte_reset = 16384,
	.rp_threshold = 5,
	.rp_ai_rate_kbps = 1000,
	.rp_hai_rate_kbps = 5000,
	.rp_max_rate_kbps = 0,
	.rp_min_dec_fac = 50,
	.rp_min_rate_kbps = 1000,
	.rp_rate_to_set_on_first_cnp_kbps = 0,
	.rp_dce_tcp_g = 960,
	.rp_dce_tcp_rtt = 200,
	.rp_rate_reduce_monitor_period = 0,
	.rp_initial_alpha_value = 1024,
	.rp_gd = 11,
	.np_min_time_between_cnps = 100,
	.np_cnp_dscp = 48,
	.np_cnp_prio = 6,
};

static const struct rxecc_dcqcn_params *const rxecc_profiles[RXECC_NUM_PROFILES] = {
	[RXECC_PROFILE_MLX5] = &rxecc_profile_mlx5,
	[RXECC_PROFILE_PAPER] = &rxecc_profile_paper,
	[RXECC_PROFILE_LAB] = &rxecc_profile_lab,
};

static bool rxecc_streq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

void rxecc_dcqcn_load_profile(struct rxecc_dcqcn_params *p, enum rxecc_dcqcn_profile prof)
{
	*p = *rxecc_profiles[prof < RXECC_NUM_PROFILES ? prof : RXECC_PROFILE_MLX5];
}

int rxecc_dcqcn_profile_find(const char *name)
{
	int i;

	for (i = 0; i < RXECC_NUM_PROFILES; i++)
		if (rxecc_streq(name, rxecc_dcqcn_profile_names[i]))
			return i;
	return -1;
}

int rxecc_dcqcn_param_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < rxecc_dcqcn_num_params; i++)
		if (rxecc_streq(name, rxecc_dcqcn_param_descs[i].name))
			return (int)i;
	return -1;
}

static u32 *rxecc_param_ptr(struct rxecc_dcqcn_params *p, unsigned int i)
{
	return (u32 *)((char *)p + rxecc_dcqcn_param_descs[i].offset);
}

u32 rxecc_dcqcn_param_get(const struct rxecc_dcqcn_params *p, unsigned int i)
{
	const struct rxecc_dcqcn_param_desc *d = &rxecc_dcqcn_param_descs[i];

	return *(const u32 *)((const char *)p + d->offset) / d->scale;
}

int rxecc_dcqcn_param_set(struct rxecc_dcqcn_params *p, unsigned int i, u32 v)
{
	if (i >= rxecc_dcqcn_num_params || v < rxecc_dcqcn_param_descs[i].min ||
	    v > rxecc_dcqcn_param_descs[i].max)
		return -1;
	*rxecc_param_ptr(p, i) = v * rxecc_dcqcn_param_descs[i].scale;
	return 0;
}

unsigned int rxecc_dcqcn_param_base(unsigned int i)
{
	unsigned int j;

	if (i >= rxecc_dcqcn_num_params || rxecc_dcqcn_param_descs[i].scale == 1)
		return i;
	for (j = 0; j < rxecc_dcqcn_num_params; j++)
		if (rxecc_dcqcn_param_descs[j].scale == 1 &&
		    rxecc_dcqcn_param_descs[j].offset == rxecc_dcqcn_param_descs[i].offset)
			return j;
	return i;
}

unsigned int rxecc_dcqcn_params_check(const struct rxecc_dcqcn_params *p)
{
	unsigned int i;
	u32 v;

	for (i = 0; i < rxecc_dcqcn_num_params; i++) {
		if (rxecc_dcqcn_param_descs[i].scale != 1)
			continue;	/* a view: its base is checked */
		v = rxecc_dcqcn_param_get(p, i);
		if (v < rxecc_dcqcn_param_descs[i].min ||
		    v > rxecc_dcqcn_param_descs[i].max)
			return i + 1;
	}
	/* A floor above an explicit ceiling cannot be met. */
	if (p->rp_max_rate_kbps && p->rp_min_rate_kbps > p->rp_max_rate_kbps)
		return (unsigned int)rxecc_dcqcn_param_find("rp_min_rate_kbps") + 1;
	return 0;
}

/*
 * The line rates the profiles' values are for: the paper's testbed ran at
 * 40 Gbit/s; the ConnectX-5 firmware uses one set of values at every port
 * speed, taken here as its fastest, 100 Gbit/s. The lab profile is no
 * reference.
 */
static const u64 rxecc_profile_kbps[RXECC_NUM_PROFILES] = {
	[RXECC_PROFILE_MLX5] = 100000000,
	[RXECC_PROFILE_PAPER] = 40000000,
	[RXECC_PROFILE_LAB] = 0,
};

u64 rxecc_dcqcn_profile_kbps(enum rxecc_dcqcn_profile prof)
{
	return prof < RXECC_NUM_PROFILES ? rxecc_profile_kbps[prof] : 0;
}

/* @v * @num / @den, rounded to the nearest, within [@lo, @hi]; 0 stays 0. */
static u32 rxecc_scale_u32(u32 v, u64 num, u64 den, u32 lo, u32 hi)
{
	u64 r;

	if (!v)
		return 0;
	r = div64_u64((u64)v * num + den / 2, den);
	if (r < lo)
		return lo;
	return r > hi ? hi : (u32)r;
}

/* Each parameter of the NULL-ended @names in @q times @num / @den. */
static void rxecc_scale_params(struct rxecc_dcqcn_params *q, const char *const *names,
			       u64 num, u64 den)
{
	const struct rxecc_dcqcn_param_desc *d;
	u32 *f;
	int i;

	for (; *names; names++) {
		i = rxecc_dcqcn_param_find(*names);
		if (i < 0)
			continue;
		d = &rxecc_dcqcn_param_descs[i];
		f = rxecc_param_ptr(q, (unsigned int)i);
		*f = rxecc_scale_u32(*f, num, den, d->min ? d->min : 1, d->max);
	}
}

int rxecc_dcqcn_scale_profile(struct rxecc_dcqcn_params *p, enum rxecc_dcqcn_profile prof,
			      u64 line_kbps, u32 speedup)
{
	/* times grow by k / speedup, rates shrink by k, bytes by speedup */
	static const char *const times[] = {
		"rp_time_reset", "rp_dce_tcp_rtt", "rp_rate_reduce_monitor_period",
		"np_min_time_between_cnps", NULL
	};
	static const char *const rates[] = {
		"rp_ai_rate_kbps", "rp_hai_rate_kbps", "rp_max_rate_kbps",
		"rp_min_rate_kbps", "rp_rate_to_set_on_first_cnp_kbps", NULL
	};
	static const char *const bytes[] = { "rp_byte_reset", NULL };
	u64 ref = rxecc_dcqcn_profile_kbps(prof);
	struct rxecc_dcqcn_params q;

	if (!speedup)
		speedup = 1;
	if (!ref || !line_kbps || line_kbps > RXECC_KBPS_MAX || speedup > RXECC_SPEEDUP_MAX)
		return -1;
	rxecc_dcqcn_load_profile(&q, prof);
	rxecc_scale_params(&q, times, ref, line_kbps * speedup);
	rxecc_scale_params(&q, rates, line_kbps, ref);
	rxecc_scale_params(&q, bytes, 1, speedup);
	*p = q;
	return 0;
}

static u64 rxecc_us(u32 us)
{
	return (u64)us * NSEC_PER_USEC_;
}

u64 rxecc_dcqcn_max_kbps(const struct rxecc_dcqcn_params *p, u64 line_kbps)
{
	return p->rp_max_rate_kbps ? p->rp_max_rate_kbps : line_kbps;
}

u64 rxecc_dcqcn_tx_ns(u64 bytes, u64 kbps)
{
	return div64_u64(bytes * 8000000ULL, kbps ? kbps : 1);
}

u64 rxecc_dcqcn_pace_due(const struct rxecc_dcqcn_pace *pc, u64 kbps)
{
	if (!pc->bytes)
		return 0;
	return pc->t + rxecc_dcqcn_tx_ns(pc->bytes, kbps);
}

u64 rxecc_dcqcn_pace_start(const struct rxecc_dcqcn_pace *pc, u64 kbps)
{
	u64 due = rxecc_dcqcn_pace_due(pc, kbps);

	return due > RXECC_PACE_EARLY_NS ? due - RXECC_PACE_EARLY_NS : 0;
}

void rxecc_dcqcn_pace_hold(struct rxecc_dcqcn_pace *pc)
{
	pc->held = 1;
}

void rxecc_dcqcn_pace_sent(struct rxecc_dcqcn_pace *pc, u64 kbps, u64 bytes, u64 now)
{
	u64 due = rxecc_dcqcn_pace_due(pc, kbps);
	/* held back, or within the packet time of one that was behind */
	bool late = pc->held ||
		    (pc->behind && now < pc->last + rxecc_dcqcn_tx_ns(pc->bytes, kbps));
	u64 credit = late ? RXECC_PACE_LATE_NS : RXECC_PACE_CREDIT_NS;
	u64 floor = now > credit ? now - credit : 0;
	u8 behind = 0;

	if (!pc->bytes || due > now + RXECC_PACE_EARLY_NS) {
		pc->t = now;		/* the first, or one that may not wait */
	} else if (due >= now) {
		pc->t = due;		/* early, within the allowance */
	} else {			/* late */
		behind = late;
		if (due < floor) {
			if (late)
				pc->late_ns += floor - due;
			else
				pc->idle_ns += floor - due;
			due = floor;
		}
		pc->t = due;
	}
	pc->bytes = bytes;
	pc->last = now;
	pc->held = 0;
	pc->behind = behind;
}

/* base^n for a Q30 base <= 1.0, in Q30. */
static u64 rxecc_pow_q30(u64 base, u64 n)
{
	u64 r = 1ULL << 30;

	while (n && r) {
		if (n & 1)
			r = (r * base) >> 30;
		base = (base * base) >> 30;
		n >>= 1;
	}
	return r;
}

/* Apply the alpha periods that ended by @t. */
static void rxecc_alpha_to(struct rxecc_dcqcn_rp *rp,
			   const struct rxecc_dcqcn_params *p, u64 t)
{
	u64 per = rxecc_us(p->rp_dce_tcp_rtt ? p->rp_dce_tcp_rtt : 1);
	u64 g = p->rp_dce_tcp_g;
	u64 n;

	if (t < rp->t_alpha)
		return;
	n = div64_u64(t - rp->t_alpha, per) + 1;
	rp->t_alpha += n * per;
	if (rp->alpha_cnp) {
		rp->alpha = (u32)(((u64)rp->alpha * g >> 10) +
				  ((1024 - g) << (RXECC_ALPHA_SHIFT - 10)));
		rp->alpha_cnp = 0;
		n--;
	}
	if (n)
		rp->alpha = (u32)(((u64)rp->alpha * rxecc_pow_q30(g << 20, n)) >> 30);
}

static void rxecc_cut(struct rxecc_dcqcn_rp *rp,
		      const struct rxecc_dcqcn_params *p, u64 now)
{
	u64 dec, rc, floor;

	if (p->rp_clamp_tgt_rate || (p->rp_clamp_tgt_rate_ati && rp->t_stage))
		rp->rt = rp->rc;
	dec = (rp->rc * rp->alpha) >> (10 + p->rp_gd);
	rc = dec >= rp->rc ? 0 : rp->rc - dec;
	floor = div64_u64(rp->rc * p->rp_min_dec_fac, 100);
	if (rc < floor)
		rc = floor;
	if (rc < p->rp_min_rate_kbps)
		rc = p->rp_min_rate_kbps;
	if (rc > rp->rc)
		rc = rp->rc;
	rp->rc = rc;
	rp->t_stage = 0;
	rp->bc_stage = 0;
	rp->bytes = 0;
	rp->t_next_inc = now + rxecc_us(p->rp_time_reset);
	rp->t_last_cut = now;
	rp->cut_pending = 0;
	rp->last_event = RXECC_EV_CUT;
}

/* One increase event; the stages are those before the event. */
/* What the next increase event adds to Rt, by the stages it finds. */
static u64 rxecc_stage_inc(const struct rxecc_dcqcn_rp *rp,
			   const struct rxecc_dcqcn_params *p)
{
	u32 t = rp->t_stage;
	u32 bc = p->rp_byte_reset ? rp->bc_stage : t;
	u32 hi = t > bc ? t : bc;
	u32 lo = t > bc ? bc : t;
	u32 f = p->rp_threshold;

	if (hi < f)
		return 0;	/* fast recovery */
	return lo > f ? p->rp_hai_rate_kbps : p->rp_ai_rate_kbps;
}

static void rxecc_increase(struct rxecc_dcqcn_rp *rp,
			   const struct rxecc_dcqcn_params *p, u64 max,
			   enum rxecc_dcqcn_event src)
{
	rp->rt += rxecc_stage_inc(rp, p);
	if (rp->rt > max)
		rp->rt = max;
	rp->rc = (rp->rt + rp->rc + 1) / 2;
	if (rp->rc > rp->rt)
		rp->rc = rp->rt;
	if (src == RXECC_EV_TIMER)
		rp->t_stage += rp->t_stage != RXECC_STAGE_MAX;
	else
		rp->bc_stage += rp->bc_stage != RXECC_STAGE_MAX;
	rp->last_event = (u8)src;
}

/*
 * How many of the timer events due at t_next_inc, t_next_inc + @per, ...
 * up to @until can be taken in one step: those for which rxecc_increase()
 * adds the same amount to Rt and Rc. That holds while the stage rule stays
 * the same (fast recovery below F, additive at F, one rule above F) and
 * the distance Rt - Rc is at its fixed point for the rule's step, which it
 * reaches within some 30 events (it halves towards the step each event),
 * as long as Rt stays at or below the maximum. 0: take the next one alone.
 * A run never releases the limiter: Rc stays below Rt and the maximum.
 */
static u64 rxecc_timer_run(const struct rxecc_dcqcn_rp *rp,
			   const struct rxecc_dcqcn_params *p, u64 max,
			   u64 per, u64 until)
{
	u32 t = rp->t_stage, f = p->rp_threshold;
	u64 inc = rxecc_stage_inc(rp, p), gap = rp->rt - rp->rc, n;

	/* Rt at (or, after the maximum was lowered, above) the maximum: one by one */
	if ((gap + inc) / 2 != gap || rp->rt >= max)
		return 0;
	n = div64_u64(until - rp->t_next_inc, per) + 1;
	if (t < f && n > f - t)
		n = f - t;
	else if (t == f)
		n = 1;
	if (inc && n > div64_u64(max - rp->rt, inc))
		n = div64_u64(max - rp->rt, inc);
	return n;
}

/* Take @n timer events found by rxecc_timer_run() at once. */
static void rxecc_timer_run_take(struct rxecc_dcqcn_rp *rp,
				 const struct rxecc_dcqcn_params *p, u64 n,
				 u64 per)
{
	u64 inc = rxecc_stage_inc(rp, p);
	u32 t = rp->t_stage;

	rp->rt += n * inc;
	rp->rc += n * inc;
	rp->t_stage = n > RXECC_STAGE_MAX - t ? RXECC_STAGE_MAX : t + (u32)n;
	rp->t_next_inc += n * per;
	rp->last_event = RXECC_EV_TIMER;
}

static bool rxecc_release_if_done(struct rxecc_dcqcn_rp *rp, u64 max)
{
	if (rp->rc < max || rp->rt < max)
		return false;
	rp->active = 0;
	rp->rc = max;
	rp->rt = max;
	rp->cut_pending = 0;
	rp->last_event = RXECC_EV_RELEASE;
	return true;
}

bool rxecc_dcqcn_rp_advance(struct rxecc_dcqcn_rp *rp,
			    const struct rxecc_dcqcn_params *p,
			    u64 line_kbps, u64 now)
{
	u64 max = rxecc_dcqcn_max_kbps(p, line_kbps);
	u64 per = rxecc_us(p->rp_time_reset ? p->rp_time_reset : 1);
	u64 rc = rp->rc, rt = rp->rt;
	u64 t_cut, t, n;
	unsigned int i;

	if (!rp->active)
		return false;
	for (i = 0; i < RXECC_MAX_ADVANCE_STEPS; i++) {
		t_cut = rp->cut_pending ?
			rp->t_last_cut + rxecc_us(p->rp_rate_reduce_monitor_period) :
			U64_MAX_;
		t = t_cut <= rp->t_next_inc ? t_cut : rp->t_next_inc;
		if (t > now)
			break;
		if (t_cut <= rp->t_next_inc) {
			rxecc_alpha_to(rp, p, t);
			rxecc_cut(rp, p, t_cut);
			continue;
		}
		/* timer events before the cut (if any) and up to now */
		n = rxecc_timer_run(rp, p, max, per, t_cut <= now ? t_cut - 1 : now);
		if (n > 1) {
			rxecc_timer_run_take(rp, p, n, per);
		} else {
			rxecc_alpha_to(rp, p, t);
			rp->t_next_inc += per;
			rxecc_increase(rp, p, max, RXECC_EV_TIMER);
		}
		if (rxecc_release_if_done(rp, max))
			return true;
	}
	if (i == RXECC_MAX_ADVANCE_STEPS && rp->t_next_inc <= now)
		/* A safety bound (never reached: see rxecc_timer_run()). */
		rp->t_next_inc = now + per;
	rxecc_alpha_to(rp, p, now);
	/* A lowered rp_max_rate applies at once. */
	if (rp->rt > max)
		rp->rt = max;
	if (rp->rc > max)
		rp->rc = max;
	return rp->rc != rc || rp->rt != rt;
}

bool rxecc_dcqcn_rp_sent(struct rxecc_dcqcn_rp *rp,
			 const struct rxecc_dcqcn_params *p,
			 u64 line_kbps, u64 bytes, u64 now)
{
	u64 b = (u64)p->rp_byte_reset * RXECC_BYTE_RESET_UNIT;
	u64 max = rxecc_dcqcn_max_kbps(p, line_kbps);
	bool changed = rxecc_dcqcn_rp_advance(rp, p, line_kbps, now);

	if (!rp->active || !b)
		return changed;
	rp->bytes += bytes;
	while (rp->bytes >= b) {
		rp->bytes -= b;
		rxecc_increase(rp, p, max, RXECC_EV_BYTES);
		changed = true;
		if (rxecc_release_if_done(rp, max))
			break;
	}
	return changed;
}

enum rxecc_dcqcn_cnp_result
rxecc_dcqcn_rp_cnp(struct rxecc_dcqcn_rp *rp, const struct rxecc_dcqcn_params *p,
		   u64 line_kbps, u64 now)
{
	u64 max = rxecc_dcqcn_max_kbps(p, line_kbps);

	rxecc_dcqcn_rp_advance(rp, p, line_kbps, now);
	if (!rp->active) {
		rp->active = 1;
		rp->rc = max;
		rp->rt = max;
		rp->alpha = p->rp_initial_alpha_value << (RXECC_ALPHA_SHIFT - 10);
		rp->t_stage = 0;
		rp->bc_stage = 0;
		rp->bytes = 0;
		rp->t_alpha = now + rxecc_us(p->rp_dce_tcp_rtt ? p->rp_dce_tcp_rtt : 1);
		rp->alpha_cnp = 1;
		rp->cut_pending = 0;
		if (p->rp_rate_to_set_on_first_cnp_kbps) {
			u64 r = p->rp_rate_to_set_on_first_cnp_kbps;

			rp->rc = r < max ? r : max;
			rp->rt = rp->rc;
			rp->t_next_inc = now + rxecc_us(p->rp_time_reset);
			rp->t_last_cut = now;
			rp->last_event = RXECC_EV_FIRST_CNP;
			return RXECC_CNP_FIRST;
		}
		rxecc_cut(rp, p, now);
		return RXECC_CNP_CUT;
	}
	rp->alpha_cnp = 1;
	if (rp->cut_pending)
		return RXECC_CNP_COALESCED;
	if (now - rp->t_last_cut >= rxecc_us(p->rp_rate_reduce_monitor_period)) {
		rxecc_cut(rp, p, now);
		return RXECC_CNP_CUT;
	}
	rp->cut_pending = 1;
	return RXECC_CNP_COALESCED;
}

enum rxecc_dcqcn_np_action
rxecc_dcqcn_np_ce(struct rxecc_dcqcn_np *np, const struct rxecc_dcqcn_params *p,
		  u64 now, u64 *when)
{
	u64 gap = rxecc_us(p->np_min_time_between_cnps);

	if (np->pending)
		return RXECC_NP_PENDING;
	if (!np->sent || now - np->t_last_cnp >= gap) {
		np->sent = 1;
		np->t_last_cnp = now;
		return RXECC_NP_SEND;
	}
	np->pending = 1;
	*when = np->t_last_cnp + gap;
	return RXECC_NP_DEFER;
}

bool rxecc_dcqcn_np_timer(struct rxecc_dcqcn_np *np, u64 now)
{
	if (!np->pending)
		return false;
	np->pending = 0;
	np->sent = 1;
	np->t_last_cnp = now;
	return true;
}
