// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * rxecc congestion control: ECN-capable transport, the DCQCN notification
 * point (CE mark in, CNP out) and reaction point (CNP in, per-QP rate
 * limiter), on top of the fixed-point core in rxecc_dcqcn.c.
 *
 * Where rxe calls in (patches/0004):
 *   rxe_prepare()      -> rxecc_tx_tos(): ECT on data, DSCP/priority of CNPs
 *   rxe_requester()    -> rxecc_rp_wait(): gate before a packet is built
 *   read_reply()       -> rxecc_rp_wait(): gate for RDMA READ responses
 *   rxe_rcv()          -> rxecc_rcv_cnp() for opcode 0x81, rxecc_np_rcv()
 *                         for every accepted packet
 *   QP init/reset/cleanup, the netdev notifier, fill_res_qp_entry.
 *
 * Every device has its own configuration (struct rxecc_cc_config), set over
 * netlink (rxecc_nl.c) and read under RCU; it starts as a copy of the
 * defaults, which the module parameters set at load time.
 */
#include <linux/ethtool.h>
#include <linux/if_vlan.h>
#include <linux/module.h>
#include <linux/rtnetlink.h>
#include <net/inet_ecn.h>
#include <net/ipv6.h>
#include <net/sch_generic.h>
#include <rdma/rdma_netlink.h>
#include <rdma/restrack.h>
#include "rxe.h"
#include "rxe_loc.h"
#include "rxecc.h"

#define CREATE_TRACE_POINTS
#include "rxecc_trace.h"

#define RXECC_DEFAULT_LINE_MBPS 10000
#define RXECC_WIRE_OVERHEAD (ETH_HLEN + sizeof(struct iphdr) + \
			     sizeof(struct udphdr) + RXE_ICRC_SIZE)

/*
 * The defaults new devices copy. Until the first write they are the boot
 * set, the mlx5 profile with every priority enabled and ECT(0) on data.
 */
static struct rxecc_cc_config rxecc_cc_boot = {
	.profile = RXECC_PROFILE_MLX5,
	.rp_enable = 0xff,
	.np_enable = 0xff,
	.ecn = INET_ECN_ECT_0,
	.roce_prio = RXECC_ROCE_PRIO_DSCP,
};

static bool rxecc_cc_boot_loaded;
static struct rxecc_cc_config __rcu *rxecc_cc_defaults = RCU_INITIALIZER(&rxecc_cc_boot);
DEFINE_MUTEX(rxecc_cc_mutex);	/* serialises writers of every configuration */

/* The boot set's values, before the first module parameter or module init. */
static void rxecc_cc_load_boot(void)
{
	int d;

	lockdep_assert_held(&rxecc_cc_mutex);
	if (rxecc_cc_boot_loaded)
		return;
	rxecc_dcqcn_load_profile(&rxecc_cc_boot.dcqcn, RXECC_PROFILE_MLX5);
	/* mlx5's default DSCP map: the three top bits of the DSCP */
	for (d = 0; d < ARRAY_SIZE(rxecc_cc_boot.dscp2prio); d++)
		rxecc_cc_boot.dscp2prio[d] = d >> 3;
	rxecc_cc_boot_loaded = true;
}

struct rxecc_cc_config *rxecc_cc_defaults_locked(void)
{
	lockdep_assert_held(&rxecc_cc_mutex);
	return rcu_dereference_protected(rxecc_cc_defaults,
					 lockdep_is_held(&rxecc_cc_mutex));
}

static void rxecc_cc_free(struct rxecc_cc_config *old)
{
	if (old && old != &rxecc_cc_boot)
		kfree_rcu(old, rcu);
}

/* Install @new (allocated with kmalloc) as the defaults. */
void rxecc_cc_replace_defaults(struct rxecc_cc_config *new)
{
	rxecc_cc_free(rcu_replace_pointer(rxecc_cc_defaults, new,
					  lockdep_is_held(&rxecc_cc_mutex)));
}

/* Install @new (allocated with kmalloc) as the configuration of @rxe. */
void rxecc_cc_replace(struct rxe_dev *rxe, struct rxecc_cc_config *new)
{
	struct rxecc_cc_config *old;

	old = rcu_replace_pointer(rxe->cc.cfg, new, lockdep_is_held(&rxecc_cc_mutex));
	rxecc_pfc_cfg_changed(rxe, new);
	rxecc_cc_free(old);
}

/* The profile whose values @p equals, or -1 (custom). */
int rxecc_cc_profile_of(const struct rxecc_dcqcn_params *p)
{
	struct rxecc_dcqcn_params prof;
	int i;

	for (i = 0; i < RXECC_NUM_PROFILES; i++) {
		rxecc_dcqcn_load_profile(&prof, i);
		if (!memcmp(&prof, p, sizeof(prof)))
			return i;
	}
	return -1;
}

/* Module init, before any device exists. */
int rxecc_cc_init(void)
{
	int err;

	mutex_lock(&rxecc_cc_mutex);
	rxecc_cc_load_boot();
	mutex_unlock(&rxecc_cc_mutex);
	err = rxecc_nl_init();
	if (err)
		return err;
	err = rxecc_pfc_init();
	if (err)
		rxecc_nl_exit();
	return err;
}

void rxecc_cc_exit(void)
{
	rxecc_pfc_exit();
	rxecc_nl_exit();
	mutex_lock(&rxecc_cc_mutex);
	rxecc_cc_replace_defaults(&rxecc_cc_boot);
	mutex_unlock(&rxecc_cc_mutex);
	rcu_barrier();
}

/* Before the device is registered: it starts with a copy of the defaults. */
int rxecc_cc_dev_init(struct rxe_dev *rxe)
{
	struct rxecc_cc_config *cfg;

	mutex_lock(&rxecc_cc_mutex);
	cfg = kmemdup(rxecc_cc_defaults_locked(), sizeof(*cfg), GFP_KERNEL);
	if (cfg)
		rxecc_cc_replace(rxe, cfg);
	mutex_unlock(&rxecc_cc_mutex);
	return cfg ? 0 : -ENOMEM;
}

/* Deallocation (or a failed registration): no QP is left to read it. */
void rxecc_cc_dev_exit(struct rxe_dev *rxe)
{
	mutex_lock(&rxecc_cc_mutex);
	rxecc_cc_replace(rxe, NULL);
	mutex_unlock(&rxecc_cc_mutex);
}

static struct rxecc_cc_config *rxecc_qp_cfg(struct rxe_qp *qp)
{
	return rcu_dereference(to_rdev(qp->ibqp.device)->cc.cfg);
}

/*
 * Module parameters: the initial defaults, given at load time (read only
 * afterwards; `rxecc dcqcn set defaults ...` changes the defaults at run
 * time, and reading a parameter shows the current defaults). The DCQCN ones
 * carry the mlx5 names; each points at its index in rxecc_dcqcn_param_descs.
 * The others have negative indices.
 */
enum {
	RXECC_PARAM_RP_ENABLE = -1,
	RXECC_PARAM_NP_ENABLE = -2,
	RXECC_PARAM_ECN = -3,
};

static int rxecc_param_update(int idx, u32 v)
{
	struct rxecc_cc_config *new;
	int err = 0;

	mutex_lock(&rxecc_cc_mutex);
	rxecc_cc_load_boot();
	new = kmemdup(rxecc_cc_defaults_locked(), sizeof(*new), GFP_KERNEL);
	if (!new) {
		err = -ENOMEM;
		goto out;
	}
	switch (idx) {
	case RXECC_PARAM_RP_ENABLE:
	case RXECC_PARAM_NP_ENABLE:
		if (v > 0xff)
			err = -ERANGE;
		else if (idx == RXECC_PARAM_RP_ENABLE)
			new->rp_enable = v;
		else
			new->np_enable = v;
		break;
	case RXECC_PARAM_ECN:
		if (v > INET_ECN_ECT_0)
			err = -ERANGE;
		else
			new->ecn = v;
		break;
	default:
		if (rxecc_dcqcn_param_set(&new->dcqcn, idx, v) ||
		    rxecc_dcqcn_params_check(&new->dcqcn))
			err = -ERANGE;
		else
			new->profile = rxecc_cc_profile_of(&new->dcqcn);
		break;
	}
	if (err) {
		kfree(new);
		goto out;
	}
	rxecc_cc_replace_defaults(new);
out:
	mutex_unlock(&rxecc_cc_mutex);
	return err;
}

static int rxecc_param_idx(const struct kernel_param *kp)
{
	return (int)(long)kp->arg;
}

static int rxecc_param_set(const char *val, const struct kernel_param *kp)
{
	int idx = rxecc_param_idx(kp);
	u32 v;
	int err;

	err = kstrtou32(val, 0, &v);
	if (err)
		return err;
	err = rxecc_param_update(idx, v);
	if (err == -ERANGE) {
		if (idx >= 0)
			pr_warn("%s: %u is outside %u..%u\n", kp->name, v,
				rxecc_dcqcn_param_descs[idx].min,
				rxecc_dcqcn_param_descs[idx].max);
		else
			pr_warn("%s: %u is out of range\n", kp->name, v);
		return -EINVAL;
	}
	return err;
}

static int rxecc_param_get(char *buf, const struct kernel_param *kp)
{
	int idx = rxecc_param_idx(kp);
	struct rxecc_cc_config *cfg;
	u32 v;

	rcu_read_lock();
	cfg = rcu_dereference(rxecc_cc_defaults);
	if (idx == RXECC_PARAM_RP_ENABLE)
		v = cfg->rp_enable;
	else if (idx == RXECC_PARAM_NP_ENABLE)
		v = cfg->np_enable;
	else if (idx == RXECC_PARAM_ECN)
		v = cfg->ecn;
	else
		v = rxecc_dcqcn_param_get(&cfg->dcqcn, idx);
	rcu_read_unlock();
	if (idx == RXECC_PARAM_RP_ENABLE || idx == RXECC_PARAM_NP_ENABLE)
		return sysfs_emit(buf, "0x%02x\n", v);
	return sysfs_emit(buf, "%u\n", v);
}

static const struct kernel_param_ops rxecc_param_ops = {
	.set = rxecc_param_set,
	.get = rxecc_param_get,
};

module_param_cb(rp_clamp_tgt_rate, &rxecc_param_ops, (void *)0L, 0444);
MODULE_PARM_DESC(rp_clamp_tgt_rate, "Rt = Rc on every rate cut (bool, mlx5 0)");
module_param_cb(rp_clamp_tgt_rate_ati, &rxecc_param_ops, (void *)1L, 0444);
MODULE_PARM_DESC(rp_clamp_tgt_rate_ati, "Rt = Rc on a cut after a timer increase (bool, mlx5 1)");
module_param_cb(rp_time_reset, &rxecc_param_ops, (void *)2L, 0444);
MODULE_PARM_DESC(rp_time_reset, "Time between rate increase events (us, mlx5 300)");
module_param_cb(rp_byte_reset, &rxecc_param_ops, (void *)3L, 0444);
MODULE_PARM_DESC(rp_byte_reset, "Bytes between rate increase events (64 B units, 0 off, mlx5 32767)");
module_param_cb(rp_threshold, &rxecc_param_ops, (void *)4L, 0444);
MODULE_PARM_DESC(rp_threshold, "Increase events of fast recovery, F (mlx5 1)");
module_param_cb(rp_ai_rate, &rxecc_param_ops, (void *)5L, 0444);
MODULE_PARM_DESC(rp_ai_rate, "Additive increase step (Mbit/s, mlx5 5)");
module_param_cb(rp_hai_rate, &rxecc_param_ops, (void *)6L, 0444);
MODULE_PARM_DESC(rp_hai_rate, "Hyper increase step (Mbit/s, mlx5 50)");
module_param_cb(rp_max_rate, &rxecc_param_ops, (void *)7L, 0444);
MODULE_PARM_DESC(rp_max_rate, "Rate ceiling (Mbit/s, 0 = port speed)");
module_param_cb(rp_min_dec_fac, &rxecc_param_ops, (void *)8L, 0444);
MODULE_PARM_DESC(rp_min_dec_fac, "A cut keeps at least this share of the rate (%, mlx5 50)");
module_param_cb(rp_min_rate, &rxecc_param_ops, (void *)9L, 0444);
MODULE_PARM_DESC(rp_min_rate, "Rate floor (Mbit/s, mlx5 1)");
module_param_cb(rp_rate_to_set_on_first_cnp, &rxecc_param_ops, (void *)10L, 0444);
MODULE_PARM_DESC(rp_rate_to_set_on_first_cnp, "Rate after the first CNP (Mbit/s, 0 = cut, mlx5 0)");
module_param_cb(rp_dce_tcp_g, &rxecc_param_ops, (void *)11L, 0444);
MODULE_PARM_DESC(rp_dce_tcp_g, "Alpha gain G, g = 1 - G/1024 (mlx5 1019)");
module_param_cb(rp_dce_tcp_rtt, &rxecc_param_ops, (void *)12L, 0444);
MODULE_PARM_DESC(rp_dce_tcp_rtt, "Alpha update period (us, mlx5 1)");
module_param_cb(rp_rate_reduce_monitor_period, &rxecc_param_ops, (void *)13L, 0444);
MODULE_PARM_DESC(rp_rate_reduce_monitor_period, "Minimum time between cuts (us, mlx5 4)");
module_param_cb(rp_initial_alpha_value, &rxecc_param_ops, (void *)14L, 0444);
MODULE_PARM_DESC(rp_initial_alpha_value, "Alpha on the first CNP (1/1024, mlx5 1023)");
module_param_cb(rp_gd, &rxecc_param_ops, (void *)15L, 0444);
MODULE_PARM_DESC(rp_gd, "Cut = Rc * alpha / 2^gd, alpha in 1/1024 (mlx5 11)");
module_param_cb(np_min_time_between_cnps, &rxecc_param_ops, (void *)16L, 0444);
MODULE_PARM_DESC(np_min_time_between_cnps, "Minimum gap between CNPs of a QP (us, mlx5 4)");
module_param_cb(np_cnp_dscp, &rxecc_param_ops, (void *)17L, 0444);
MODULE_PARM_DESC(np_cnp_dscp, "DSCP of CNPs (mlx5 48)");
module_param_cb(np_cnp_prio, &rxecc_param_ops, (void *)18L, 0444);
MODULE_PARM_DESC(np_cnp_prio, "802.1p priority of CNPs (mlx5 6)");
module_param_cb(rp_ai_rate_kbps, &rxecc_param_ops, (void *)19L, 0444);
MODULE_PARM_DESC(rp_ai_rate_kbps, "Additive increase step (kbit/s; rp_ai_rate in kbit/s)");
module_param_cb(rp_hai_rate_kbps, &rxecc_param_ops, (void *)20L, 0444);
MODULE_PARM_DESC(rp_hai_rate_kbps, "Hyper increase step (kbit/s; rp_hai_rate in kbit/s)");
module_param_cb(rp_max_rate_kbps, &rxecc_param_ops, (void *)21L, 0444);
MODULE_PARM_DESC(rp_max_rate_kbps, "Rate ceiling (kbit/s, 0 = port speed; rp_max_rate in kbit/s)");
module_param_cb(rp_min_rate_kbps, &rxecc_param_ops, (void *)22L, 0444);
MODULE_PARM_DESC(rp_min_rate_kbps, "Rate floor (kbit/s; rp_min_rate in kbit/s)");
module_param_cb(rp_rate_to_set_on_first_cnp_kbps, &rxecc_param_ops, (void *)23L, 0444);
MODULE_PARM_DESC(rp_rate_to_set_on_first_cnp_kbps,
		 "Rate after the first CNP (kbit/s, 0 = cut; rp_rate_to_set_on_first_cnp in kbit/s)");
module_param_cb(rp_enable, &rxecc_param_ops, (void *)(long)RXECC_PARAM_RP_ENABLE, 0444);
MODULE_PARM_DESC(rp_enable, "Reaction point on, bit per priority (0xff)");
module_param_cb(np_enable, &rxecc_param_ops, (void *)(long)RXECC_PARAM_NP_ENABLE, 0444);
MODULE_PARM_DESC(np_enable, "Notification point on, bit per priority (0xff)");
module_param_cb(ecn, &rxecc_param_ops, (void *)(long)RXECC_PARAM_ECN, 0444);
MODULE_PARM_DESC(ecn, "ECN of data packets: 0 as the AV says, 1 ECT(1), 2 ECT(0) (2)");

static int rxecc_profile_set(const char *val, const struct kernel_param *kp)
{
	struct rxecc_cc_config *new;
	char name[16];
	int prof;

	strscpy(name, val, sizeof(name));
	strim(name);
	prof = rxecc_dcqcn_profile_find(name);
	if (prof < 0) {
		pr_warn("profile: unknown profile '%s' (mlx5, paper, lab)\n", name);
		return -EINVAL;
	}
	mutex_lock(&rxecc_cc_mutex);
	rxecc_cc_load_boot();
	new = kmemdup(rxecc_cc_defaults_locked(), sizeof(*new), GFP_KERNEL);
	if (new) {
		rxecc_dcqcn_load_profile(&new->dcqcn, prof);
		new->profile = prof;
		rxecc_cc_replace_defaults(new);
	}
	mutex_unlock(&rxecc_cc_mutex);
	return new ? 0 : -ENOMEM;
}

static int rxecc_profile_get(char *buf, const struct kernel_param *kp)
{
	int prof;

	rcu_read_lock();
	prof = rcu_dereference(rxecc_cc_defaults)->profile;
	rcu_read_unlock();
	return sysfs_emit(buf, "%s\n", prof < 0 ? "custom" :
			  rxecc_dcqcn_profile_names[prof]);
}

static const struct kernel_param_ops rxecc_profile_ops = {
	.set = rxecc_profile_set,
	.get = rxecc_profile_get,
};

module_param_cb(profile, &rxecc_profile_ops, NULL, 0444);
MODULE_PARM_DESC(profile, "DCQCN profile of the defaults: mlx5 (default), paper or lab; parameters after it on the command line change it");

/* Port speed, under RTNL. */
static void rxecc_dev_speed_locked(struct rxe_dev *rxe)
{
	struct ethtool_link_ksettings lk;
	u32 mbps = RXECC_DEFAULT_LINE_MBPS;

	ASSERT_RTNL();
	if (!__ethtool_get_link_ksettings(rxe->ndev, &lk) &&
	    lk.base.speed && lk.base.speed != SPEED_UNKNOWN)
		mbps = lk.base.speed;
	WRITE_ONCE(rxe->cc.line_kbps, (u64)mbps * 1000);
}

void rxecc_dev_speed(struct rxe_dev *rxe)
{
	rtnl_lock();
	rxecc_dev_speed_locked(rxe);
	rtnl_unlock();
}

void rxecc_netdev_event(struct rxe_dev *rxe, unsigned long event)
{
	if (event == NETDEV_UP || event == NETDEV_CHANGE)
		rxecc_dev_speed_locked(rxe);
	else if (event == NETDEV_UNREGISTER)
		rxecc_pfc_netdev_gone(rxe);
}

/* The line rate of @qp's port, kbit/s (RCU read lock held for @cfg). */
static u64 rxecc_line_kbps(struct rxe_qp *qp, const struct rxecc_cc_config *cfg)
{
	return (u64)rxecc_link_mbps(to_rdev(qp->ibqp.device), cfg) * 1000;
}

/* The priority of a connected QP's traffic. */
static u8 rxecc_qp_prio(struct rxe_qp *qp, const struct rxecc_cc_config *cfg)
{
	return rxecc_cfg_prio(cfg, qp->pri_av.grh.traffic_class);
}

static bool rxecc_qp_connected(struct rxe_qp *qp)
{
	return qp_type(qp) == IB_QPT_RC || qp_type(qp) == IB_QPT_UC;
}

static void rxecc_trace_rate(struct rxe_qp *qp, const struct rxecc_dcqcn_rp *rp)
{
	trace_rxecc_rate(dev_name(&qp->ibqp.device->dev), qp_num(qp),
			 rp->last_event, rp->rc, rp->rt, rp->alpha,
			 rp->t_stage, rp->bc_stage);
}

static enum hrtimer_restart rxecc_rl_timer_fn(struct hrtimer *t)
{
	struct rxecc_qp *cc = container_of(t, struct rxecc_qp, rl_timer);
	struct rxe_qp *qp = container_of(cc, struct rxe_qp, cc);
	unsigned long flags;
	bool req, resp;

	spin_lock_irqsave(&cc->lock, flags);
	req = cc->wait_req;
	resp = cc->wait_resp;
	cc->wait_req = 0;
	cc->wait_resp = 0;
	spin_unlock_irqrestore(&cc->lock, flags);
	/* Tasks already cleaned up ignore this (task->destroyed). */
	if (req)
		rxe_sched_task(&qp->req.task);
	if (resp)
		rxe_sched_task(&qp->resp.task);
	return HRTIMER_NORESTART;
}

static int rxecc_send_cnp(struct rxe_qp *qp);

static enum hrtimer_restart rxecc_np_timer_fn(struct hrtimer *t)
{
	struct rxecc_qp *cc = container_of(t, struct rxecc_qp, np_timer);
	struct rxe_qp *qp = container_of(cc, struct rxe_qp, cc);
	unsigned long flags;
	bool send;

	/* A QP on its way out has no references left: nothing to send. */
	if (!rxe_get(qp))
		return HRTIMER_NORESTART;
	spin_lock_irqsave(&cc->lock, flags);
	send = rxecc_dcqcn_np_timer(&cc->np, ktime_get_ns());
	spin_unlock_irqrestore(&cc->lock, flags);
	if (send && qp->valid)
		rxecc_send_cnp(qp);
	rxe_put(qp);
	return HRTIMER_NORESTART;
}

void rxecc_qp_init(struct rxe_qp *qp)
{
	struct rxecc_qp *cc = &qp->cc;

	spin_lock_init(&cc->lock);
	hrtimer_init(&cc->rl_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	cc->rl_timer.function = rxecc_rl_timer_fn;
	hrtimer_init(&cc->np_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	cc->np_timer.function = rxecc_np_timer_fn;
	rxecc_pfc_qp_init(qp);
	cc->ready = true;
}

/*
 * Cleanup (before the QP's tasks are cleaned up) or reset: from now on no
 * path arms the timers or puts the QP on a PFC list (they check @stopped
 * under the lock they arm under), and a callback still running is waited
 * for, so nothing schedules the QP's tasks after this returns.
 */
static void rxecc_qp_stop_timers(struct rxe_qp *qp)
{
	struct rxecc_qp *cc = &qp->cc;
	unsigned long flags;

	if (!cc->ready)
		return;
	spin_lock_irqsave(&cc->lock, flags);
	WRITE_ONCE(cc->stopped, true);
	cc->wait_req = 0;
	cc->wait_resp = 0;
	spin_unlock_irqrestore(&cc->lock, flags);
	rxecc_pfc_qp_forget(qp);
	hrtimer_cancel(&cc->rl_timer);
	hrtimer_cancel(&cc->np_timer);
}

/* Process context: modify_qp to RESET. */
void rxecc_qp_reset(struct rxe_qp *qp)
{
	struct rxecc_qp *cc = &qp->cc;
	unsigned long flags;

	rxecc_qp_stop_timers(qp);
	spin_lock_irqsave(&cc->lock, flags);
	memset(&cc->rp, 0, sizeof(cc->rp));
	memset(&cc->np, 0, sizeof(cc->np));
	memset(&cc->pace, 0, sizeof(cc->pace));
	cc->wait_req = 0;
	cc->wait_resp = 0;
	WRITE_ONCE(cc->stopped, false);
	spin_unlock_irqrestore(&cc->lock, flags);
}

/*
 * rxe_qp_do_cleanup(), after the QP's tasks are cleaned up (they can no
 * longer arm the limiter) and before its socket goes; no references are
 * left, so the receive path cannot arm the CNP timer either.
 */
void rxecc_qp_cleanup(struct rxe_qp *qp)
{
	rxecc_qp_stop_timers(qp);
}

u8 rxecc_tx_tos(struct rxe_pkt_info *pkt, struct sk_buff *skb, u8 tclass)
{
	struct rxecc_cc_config *cfg;
	u8 tos;

	rcu_read_lock();
	cfg = rxecc_qp_cfg(pkt->qp);
	if (pkt->mask & RXECC_CNP_MASK) {
		/* CNPs: their own DSCP and priority, never ECN-capable. */
		tos = cfg->dcqcn.np_cnp_dscp << 2;
		skb->priority = cfg->dcqcn.np_cnp_prio;
	} else {
		tos = cfg->ecn ? (tclass & ~INET_ECN_MASK) | cfg->ecn : tclass;
		skb->priority = rxecc_cfg_prio(cfg, tclass);
	}
	rcu_read_unlock();
	return tos;
}

/*
 * The reaction point's gate: true if the QP must wait before it sends a
 * packet of @payload bytes (the limiter timer is armed and will schedule the
 * requester or, with @resp, the responder). Called before anything of the
 * packet is built or committed. A QP that never saw a CNP, or whose rate has
 * recovered to the maximum, costs one read here.
 */
bool rxecc_rp_wait(struct rxe_qp *qp, int opcode, u32 payload, bool resp)
{
	struct rxecc_qp *cc = &qp->cc;
	struct rxecc_cc_config *cfg;
	struct rxecc_dcqcn_rp snap;
	unsigned long flags;
	bool changed, wait = false;
	u64 now, bytes, line, due, late = 0, idle = 0;

	if (likely(!READ_ONCE(cc->rp.active)))
		return false;

	bytes = payload + RXECC_WIRE_OVERHEAD + rxe_opcode[opcode].length;
	rcu_read_lock();
	cfg = rxecc_qp_cfg(qp);
	line = rxecc_line_kbps(qp, cfg);
	spin_lock_irqsave(&cc->lock, flags);
	now = ktime_get_ns();
	if (!(cfg->rp_enable & BIT(rxecc_qp_prio(qp, cfg)))) {
		/* The reaction point was switched off for this priority. */
		changed = cc->rp.active;
		memset(&cc->rp, 0, sizeof(cc->rp));
		memset(&cc->pace, 0, sizeof(cc->pace));
		goto out;
	}
	changed = rxecc_dcqcn_rp_advance(&cc->rp, &cfg->dcqcn, line, now);
	if (!cc->rp.active)
		goto out;
	due = rxecc_dcqcn_pace_start(&cc->pace, cc->rp.rc);
	if (now < due && !cc->stopped) {
		if (resp)
			cc->wait_resp = 1;
		else
			cc->wait_req = 1;
		cc->rl_deferred++;
		rxecc_dcqcn_pace_hold(&cc->pace);
		/*
		 * The next timer increase event may raise the rate and make the
		 * packet due sooner: look again then.
		 */
		if (cc->rp.t_next_inc > now && cc->rp.t_next_inc < due)
			due = cc->rp.t_next_inc;
		/* never later than a wake-up already due (rxecc_tx_defer()) */
		if (!hrtimer_is_queued(&cc->rl_timer) ||
		    ktime_before(ns_to_ktime(due), hrtimer_get_expires(&cc->rl_timer)))
			hrtimer_start(&cc->rl_timer, ns_to_ktime(due), HRTIMER_MODE_ABS_SOFT);
		wait = true;
		goto out;
	}
	late = cc->pace.late_ns;
	idle = cc->pace.idle_ns;
	rxecc_dcqcn_pace_sent(&cc->pace, cc->rp.rc, bytes, now);
	/* whole microseconds of the QP's running sums, carried exactly */
	late = div_u64(cc->pace.late_ns, NSEC_PER_USEC) - div_u64(late, NSEC_PER_USEC);
	idle = div_u64(cc->pace.idle_ns, NSEC_PER_USEC) - div_u64(idle, NSEC_PER_USEC);
	changed |= rxecc_dcqcn_rp_sent(&cc->rp, &cfg->dcqcn, line, bytes, now);
out:
	snap = cc->rp;
	spin_unlock_irqrestore(&cc->lock, flags);
	rcu_read_unlock();
	if (wait)
		rxe_counter_inc(to_rdev(qp->ibqp.device), RXECC_CNT_RP_TX_DEFERRED);
	if (late || idle) {
		struct rxe_dev *rxe = to_rdev(qp->ibqp.device);

		atomic64_add(late, &rxe->stats_counters[RXECC_CNT_RP_PACE_LATE_US]);
		atomic64_add(idle, &rxe->stats_counters[RXECC_CNT_RP_PACE_IDLE_US]);
	}
	if (changed)
		rxecc_trace_rate(qp, &snap);
	return wait;
}

/*
 * The QP waits for the time one MTU-sized packet takes on the link, at least
 * @min_ns: its timer schedules the requester or, with @resp, the responder
 * then, never later than a wake-up already due. False if the QP is being
 * cleaned up or reset (nothing arms its timer): it must not wait then.
 */
#define RXECC_TX_RETRY_MIN_NS	10000

static bool rxecc_tx_defer(struct rxe_qp *qp, const struct rxecc_cc_config *cfg,
			   bool resp, u64 min_ns)
{
	u64 mbps = rxecc_link_mbps(to_rdev(qp->ibqp.device), cfg);
	struct rxecc_qp *cc = &qp->cc;
	unsigned long flags;
	ktime_t when;
	u64 wait;

	wait = max_t(u64, div64_u64((u64)(qp->mtu + RXECC_WIRE_OVERHEAD) * 8000, mbps),
		     min_ns);
	bool armed = false;

	spin_lock_irqsave(&cc->lock, flags);
	if (cc->stopped)
		goto out;
	armed = true;
	if (resp)
		cc->wait_resp = 1;
	else
		cc->wait_req = 1;
	when = ns_to_ktime(ktime_get_ns() + wait);
	if (!hrtimer_is_queued(&cc->rl_timer) ||
	    ktime_before(when, hrtimer_get_expires(&cc->rl_timer)))
		hrtimer_start(&cc->rl_timer, when, HRTIMER_MODE_ABS_SOFT);
out:
	spin_unlock_irqrestore(&cc->lock, flags);
	return armed;
}

/*
 * Bytes queued in the host's own egress qdisc that packets of priority @prio
 * leaving @dev enter: the root qdisc's backlog, or on a multiqueue root (mq,
 * mqprio) the backlog of the transmit queues of @prio's traffic class (all
 * of them without classes). RCU read side held.
 */
static u32 rxecc_egress_backlog(struct net_device *dev, u8 prio)
{
	struct Qdisc *q = rcu_dereference(dev->qdisc);
	unsigned int first = 0, n, i;
	u32 qlen, backlog, sum = 0;

	if (!(q->flags & TCQ_F_MQROOT)) {
		qdisc_qstats_qlen_backlog(q, &qlen, &backlog);
		return backlog;
	}
	n = dev->real_num_tx_queues;
	if (netdev_get_num_tc(dev)) {
		int tc = netdev_get_prio_tc_map(dev, prio);

		first = dev->tc_to_txq[tc].offset;
		n = dev->tc_to_txq[tc].count;
	}
	for (i = first; i < first + n && i < dev->real_num_tx_queues; i++) {
		q = rcu_dereference(netdev_get_tx_queue(dev, i)->qdisc);
		qdisc_qstats_qlen_backlog(q, &qlen, &backlog);
		sum += backlog;
	}
	return sum;
}

/*
 * The local egress queue: while the qdisc the QP's packets enter holds
 * tx_qlimit bytes or more, the QP waits a packet time instead of adding to
 * it (and, when it fills, being dropped there).
 */
static bool rxecc_egress_wait(struct rxe_qp *qp, bool resp)
{
	struct rxe_dev *rxe = to_rdev(qp->ibqp.device);
	struct net_device *dev = rxe->ndev;
	struct rxecc_cc_config *cfg;
	bool wait = false;

	rcu_read_lock();
	cfg = rxecc_qp_cfg(qp);
	if (likely(!cfg->tx_qlimit))
		goto out;
	if (is_vlan_dev(dev))
		dev = vlan_dev_real_dev(dev);
	if (rxecc_egress_backlog(dev, rxecc_qp_prio(qp, cfg)) >= cfg->tx_qlimit)
		wait = rxecc_tx_defer(qp, cfg, resp, RXECC_TX_RETRY_MIN_NS);
out:
	rcu_read_unlock();
	if (wait)
		rxe_counter_inc(rxe, RXECC_CNT_TX_QUEUE_DEFERRED);
	return wait;
}

bool rxecc_tx_wait(struct rxe_qp *qp, int opcode, u32 payload, bool resp)
{
	return rxecc_pfc_wait(qp, resp) || rxecc_egress_wait(qp, resp) ||
	       rxecc_rp_wait(qp, opcode, payload, resp);
}

/* A packet the local stack dropped is built again after a packet time. */
static void rxecc_tx_retry(struct rxe_qp *qp, bool resp)
{
	rcu_read_lock();
	rxecc_tx_defer(qp, rxecc_qp_cfg(qp), resp, RXECC_TX_RETRY_MIN_NS);
	rcu_read_unlock();
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
 * own packets. rxe 6.1 answered the drop with an RNR NAK, which is no answer
 * to a read (only a request that needs a receive WQE can be RNR NAKed), in
 * the middle of the response, with the PSN of the request being served: the
 * requester's completer, expecting the next response packet at that PSN,
 * took the NAK for an out-of-sequence response and failed the QP (and its
 * WQE with a success status: rxe_completer()'s WARN in COMPST_ERROR). The
 * read also stayed in progress meanwhile, so that the next request to arrive
 * was taken for it (see rxecc_tx_nomem()).
 */
void rxecc_read_reply_dropped(struct rxe_qp *qp)
{
	rxecc_tx_retry(qp, true);
}

/*
 * The requester, or with @resp the responder sending an RDMA READ response,
 * could not allocate the packet's socket buffer (GFP_ATOMIC). rxe 6.1 failed
 * the WQE and stopped the QP for that (the requester), or sent an RNR NAK in
 * the middle of the read response while keeping the read in progress, so that
 * the next request was answered with the read's data (the responder). A NIC
 * short of buffers holds the packet back instead, and so does rxecc: nothing
 * of the packet is committed yet (the caller puts back what it took), so the
 * QP waits RXECC_TX_NOMEM_WAIT_NS (time for reclaim, instead of failing again
 * at once) and builds it again. Its retransmit timer keeps running meanwhile.
 * Returns false, and rxe goes on as before, when the packet cannot be built
 * for another reason: its source GID (address) is gone.
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

/*
 * rxe asks for an ACK at the end of a message and every RXE_MAX_PKT_PER_ACK
 * packets. A paced RC QP asks more often when that many packets take a
 * quarter of its transport timeout or more at its rate: otherwise a long
 * message at a low rate outlasts the timeout, which then retransmits data
 * that was only held back by the limiter. It asks every n packets, n the
 * packets that fit in a quarter of the timeout at Rc (at least 1), so the
 * ACKs, each a packet to build, send and take, stay few at high rates. n
 * follows Rc, not what the fabric drains: a QP whose Rc is still far above
 * its share asks as rarely as rxe does, as it would without DCQCN. A QP whose
 * priority PFC paused a moment ago asks with every packet
 * (rxecc_pfc_ack_req()). Called with qp->req.noack_pkts already counting
 * this packet.
 */
#define RXECC_ACK_TIMEOUT_SHARE	4

bool rxecc_rp_ack_req(struct rxe_qp *qp)
{
	u64 rc, pkt_ns, budget_ns, n;

	if (rxecc_pfc_ack_req(qp))
		return true;
	if (!READ_ONCE(qp->cc.rp.active) || !qp->qp_timeout_jiffies)
		return false;
	rc = READ_ONCE(qp->cc.rp.rc);
	pkt_ns = rxecc_dcqcn_tx_ns(qp->mtu + RXECC_WIRE_OVERHEAD, rc);
	budget_ns = (u64)jiffies_to_msecs(qp->qp_timeout_jiffies) * NSEC_PER_MSEC /
		    RXECC_ACK_TIMEOUT_SHARE;
	n = pkt_ns ? div64_u64(budget_ns, pkt_ns) : RXE_MAX_PKT_PER_ACK;
	return qp->req.noack_pkts >= max_t(u64, n, 1);
}

/* Build and send a CNP to the peer of @qp (its sender of CE-marked data). */
static int rxecc_send_cnp(struct rxe_qp *qp)
{
	struct rxe_dev *rxe = to_rdev(qp->ibqp.device);
	int paylen = RXE_BTH_BYTES + RXECC_CNP_RESERVED + RXE_ICRC_SIZE;
	struct rxe_pkt_info pkt = {};
	struct sk_buff *skb;
	unsigned long flags;
	int err = -ENOMEM;

	if (qp->resp.state != QP_STATE_READY) {
		err = -EINVAL;
		goto fail;
	}
	skb = rxe_init_packet(rxe, &qp->pri_av, paylen, &pkt);
	if (!skb)
		goto fail;
	pkt.rxe = rxe;
	pkt.qp = qp;
	pkt.opcode = RXECC_OPCODE_CNP;
	pkt.mask |= rxe_opcode[RXECC_OPCODE_CNP].mask;
	pkt.paylen = paylen;
	pkt.psn = 0;
	bth_init(&pkt, RXECC_OPCODE_CNP, 0, 0, 0, IB_DEFAULT_PKEY_FULL,
		 qp->attr.dest_qp_num, 0, 0);
	bth_set_becn(&pkt, 1);
	memset(pkt.hdr + RXE_BTH_BYTES, 0, RXECC_CNP_RESERVED);
	err = rxe_prepare(&qp->pri_av, &pkt, skb);
	if (err) {
		kfree_skb(skb);
		goto fail;
	}
	err = rxe_xmit_packet(qp, &pkt, skb);
	if (err)
		goto fail;
	rxe_counter_inc(rxe, RXECC_CNT_NP_CNP_SENT);
	spin_lock_irqsave(&qp->cc.lock, flags);
	qp->cc.cnp_sent++;
	spin_unlock_irqrestore(&qp->cc.lock, flags);
	trace_rxecc_cnp_sent(dev_name(&rxe->ib_dev.dev), qp_num(qp),
			     qp->attr.dest_qp_num);
	return 0;
fail:
	rxe_counter_inc(rxe, RXECC_CNT_NP_CNP_SEND_ERR);
	return err;
}

static u8 rxecc_rcv_dsfield(struct sk_buff *skb)
{
	if (skb->protocol == htons(ETH_P_IP))
		return ip_hdr(skb)->tos;
	return ipv6_get_dsfield(ipv6_hdr(skb));
}

/*
 * Every packet rxe accepted (header and ICRC checked) passes here before it
 * is queued to the responder or the completer: its wait in the receive
 * backlog (PFC) and the count of CE marks.
 */
void rxecc_np_rcv(struct rxe_pkt_info *pkt, struct sk_buff *skb)
{
	u8 ds = rxecc_rcv_dsfield(skb);

	rxecc_pfc_rx(pkt->rxe, skb, ds);
	if (unlikely(INET_ECN_is_ce(ds)))
		rxe_counter_inc(pkt->rxe, RXECC_CNT_NP_ECN_MARKED);
}

/*
 * Notification point: a packet the responder or the completer found in
 * sequence (its PSN the one expected). Only then does a CE mark earn the
 * sender a CNP: a forged packet with a guessed QPN and the wrong PSN, CE
 * marked, must not make this host send CNPs to its peer.
 */
void rxecc_np_in_seq(struct rxe_qp *qp, struct rxe_pkt_info *pkt)
{
	u8 ds = rxecc_rcv_dsfield(PKT_TO_SKB(pkt));
	struct rxecc_cc_config *cfg;
	enum rxecc_dcqcn_np_action act = RXECC_NP_PENDING;
	unsigned long flags;
	u64 when = 0;
	bool on;

	if (likely(!INET_ECN_is_ce(ds)))
		return;
	/*
	 * CNPs go to the data sender: for requests, the requester; for RDMA
	 * READ responses (ACKs with payload), the responder. Plain ACKs and
	 * multicast get none.
	 */
	if (!qp || !rxecc_qp_connected(qp) ||
	    !((pkt->mask & RXE_REQ_MASK) ||
	      ((pkt->mask & RXE_ACK_MASK) && (pkt->mask & RXE_PAYLOAD_MASK))))
		return;

	rcu_read_lock();
	cfg = rxecc_qp_cfg(qp);
	on = cfg->np_enable & BIT(cfg->dscp2prio[ds >> 2]);
	if (on) {
		spin_lock_irqsave(&qp->cc.lock, flags);
		act = qp->cc.stopped ? RXECC_NP_PENDING :
		      rxecc_dcqcn_np_ce(&qp->cc.np, &cfg->dcqcn, ktime_get_ns(), &when);
		if (act == RXECC_NP_DEFER)
			hrtimer_start(&qp->cc.np_timer, ns_to_ktime(when),
				      HRTIMER_MODE_ABS_SOFT);
		spin_unlock_irqrestore(&qp->cc.lock, flags);
	}
	rcu_read_unlock();
	if (on && act == RXECC_NP_SEND)
		rxecc_send_cnp(qp);
}

/*
 * The CNP came from the QP's peer (its destination address) to the QP's own
 * address (its source address), the path the QP's packets take.
 */
static bool rxecc_cnp_on_path(struct rxe_qp *qp, struct sk_buff *skb)
{
	struct rxe_av *av = &qp->pri_av;

	if (skb->protocol == htons(ETH_P_IP))
		return av->network_type == RXE_NETWORK_TYPE_IPV4 &&
		       ip_hdr(skb)->saddr == av->dgid_addr._sockaddr_in.sin_addr.s_addr &&
		       ip_hdr(skb)->daddr == av->sgid_addr._sockaddr_in.sin_addr.s_addr;
	return av->network_type == RXE_NETWORK_TYPE_IPV6 &&
	       ipv6_addr_equal(&ipv6_hdr(skb)->saddr,
			       &av->dgid_addr._sockaddr_in6.sin6_addr) &&
	       ipv6_addr_equal(&ipv6_hdr(skb)->daddr,
			       &av->sgid_addr._sockaddr_in6.sin6_addr);
}

/*
 * The CNP's P_Key is the QP's: rxe has the default partition only, as
 * rxe_rcv() checks for every other packet.
 */
static bool rxecc_cnp_pkey_ok(struct rxe_pkt_info *pkt)
{
	return (bth_pkey(pkt) & 0x7fff) == (IB_DEFAULT_PKEY_FULL & 0x7fff);
}

/*
 * Reaction point: a packet with opcode 0x81. It consumes the packet and the
 * device reference rxe's receive path took, like rxe_rcv() does.
 */
void rxecc_rcv_cnp(struct rxe_pkt_info *pkt, struct sk_buff *skb)
{
	struct rxe_dev *rxe = pkt->rxe;
	struct rxe_qp *qp = NULL;
	struct rxecc_cc_config *cfg;
	enum rxecc_dcqcn_cnp_result res;
	struct rxecc_dcqcn_rp snap;
	enum rxe_counters drop;
	enum ib_qp_state state;
	unsigned long flags;
	bool changed;
	u32 qpn = bth_qpn(pkt);

	if (pkt->paylen != RXE_BTH_BYTES + RXECC_CNP_RESERVED + RXE_ICRC_SIZE ||
	    bth_tver(pkt) != BTH_TVER || rxe_icrc_check(skb, pkt)) {
		drop = RXECC_CNT_RP_CNP_DROP_MALFORMED;
		goto drop;
	}
	if (!rxecc_cnp_pkey_ok(pkt)) {
		drop = RXECC_CNT_RP_CNP_DROP_PKEY;
		goto drop;
	}
	if (qpn <= 1 || qpn == IB_MULTICAST_QPN) {
		drop = RXECC_CNT_RP_CNP_DROP_UNKNOWN_QP;
		goto drop;
	}
	qp = rxe_pool_get_index(&rxe->qp_pool, qpn);
	if (!qp) {
		drop = RXECC_CNT_RP_CNP_DROP_UNKNOWN_QP;
		goto drop;
	}
	/*
	 * A QP sends data in RTS (requests) and from RTR on (RDMA READ
	 * responses: a perftest server stays in RTR).
	 */
	state = READ_ONCE(qp->attr.qp_state);
	if (!qp->valid || !rxecc_qp_connected(qp) ||
	    (state != IB_QPS_RTR && state != IB_QPS_RTS && state != IB_QPS_SQD)) {
		drop = RXECC_CNT_RP_CNP_DROP_QP_STATE;
		goto drop;
	}
	if (!rxecc_cnp_on_path(qp, skb)) {
		drop = RXECC_CNT_RP_CNP_DROP_SRC;
		goto drop;
	}

	rcu_read_lock();
	cfg = rxecc_qp_cfg(qp);
	if (!(cfg->rp_enable & BIT(rxecc_qp_prio(qp, cfg)))) {
		rcu_read_unlock();
		rxe_counter_inc(rxe, RXECC_CNT_RP_CNP_IGNORED);
		goto out;
	}
	spin_lock_irqsave(&qp->cc.lock, flags);
	changed = !qp->cc.rp.active;
	/* a limiter that starts again starts its pacer afresh: no credit */
	if (changed)
		memset(&qp->cc.pace, 0, sizeof(qp->cc.pace));
	res = rxecc_dcqcn_rp_cnp(&qp->cc.rp, &cfg->dcqcn, rxecc_line_kbps(qp, cfg),
				 ktime_get_ns());
	changed |= res != RXECC_CNP_COALESCED;
	qp->cc.cnp_handled++;
	snap = qp->cc.rp;
	spin_unlock_irqrestore(&qp->cc.lock, flags);
	rcu_read_unlock();

	rxe_counter_inc(rxe, RXECC_CNT_RP_CNP_HANDLED);
	trace_rxecc_cnp_handled(dev_name(&rxe->ib_dev.dev), qpn, res, snap.rc,
				snap.rt, snap.alpha);
	if (changed)
		rxecc_trace_rate(qp, &snap);
	goto out;

drop:
	rxe_counter_inc(rxe, drop);
	rxe_counter_inc(rxe, RXECC_CNT_RP_CNP_IGNORED);
out:
	if (qp)
		rxe_put(qp);
	kfree_skb(skb);
	ib_device_put(&rxe->ib_dev);
}

void rxecc_qp_snapshot(struct rxe_qp *qp, struct rxecc_qp_snap *s)
{
	struct rxecc_qp *cc = &qp->cc;
	struct rxecc_cc_config *cfg;
	unsigned long flags;
	u64 line;

	rcu_read_lock();
	cfg = rxecc_qp_cfg(qp);
	line = rxecc_line_kbps(qp, cfg);
	spin_lock_irqsave(&cc->lock, flags);
	rxecc_dcqcn_rp_advance(&cc->rp, &cfg->dcqcn, line, ktime_get_ns());
	s->rp = cc->rp;
	s->cnp_handled = cc->cnp_handled;
	s->cnp_sent = cc->cnp_sent;
	s->rl_deferred = cc->rl_deferred;
	spin_unlock_irqrestore(&cc->lock, flags);
	if (!s->rp.active) {
		s->rp.rc = rxecc_dcqcn_max_kbps(&cfg->dcqcn, line);
		s->rp.rt = s->rp.rc;
	}
	s->prio = rxecc_qp_prio(qp, cfg);
	rcu_read_unlock();
}

void rxecc_qp_clear_counts(struct rxe_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->cc.lock, flags);
	qp->cc.cnp_handled = 0;
	qp->cc.cnp_sent = 0;
	qp->cc.rl_deferred = 0;
	spin_unlock_irqrestore(&qp->cc.lock, flags);
}

/* Did the process reading about @qp (netlink dumps run in it) create it? */
bool rxecc_qp_of_current(struct rxe_qp *qp)
{
	struct task_struct *owner = qp->ibqp.res.task;

	return owner && !rdma_is_kernel_res(&qp->ibqp.res) &&
	       task_tgid(owner) == task_tgid(current);
}

/*
 * `rdma res show qp -dd`: rxecc's state of the QP, for an administrator of
 * its namespace or the QP's own process (as QP_GET of the rxecc family).
 */
int rxecc_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct rxe_dev *rxe = to_rdev(ibqp->device);
	struct rxecc_qp_snap s;
	struct nlattr *table;

	if (!ns_capable_noaudit(rxe->cc.net->user_ns, CAP_NET_ADMIN) &&
	    !rxecc_qp_of_current(to_rqp(ibqp)))
		return 0;
	rxecc_qp_snapshot(to_rqp(ibqp), &s);
	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_string(msg, "cc", s.rp.active ? "limited" : "line-rate") ||
	    rdma_nl_put_driver_u64(msg, "rc_kbps", s.rp.rc) ||
	    rdma_nl_put_driver_u64(msg, "rt_kbps", s.rp.rt) ||
	    rdma_nl_put_driver_u32(msg, "alpha_ppm", rxecc_alpha_ppm(s.rp.alpha)) ||
	    rdma_nl_put_driver_u32(msg, "t_stage", s.rp.t_stage) ||
	    rdma_nl_put_driver_u32(msg, "bc_stage", s.rp.bc_stage) ||
	    rdma_nl_put_driver_u64(msg, "cnp_handled", s.cnp_handled) ||
	    rdma_nl_put_driver_u64(msg, "cnp_sent", s.cnp_sent) ||
	    rdma_nl_put_driver_u64(msg, "rl_deferred", s.rl_deferred)) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}
