// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * rxecc's configuration: every device has its own (struct rxecc_cc_config),
 * set over netlink (rxecc_nl.c) and read under RCU; it starts as a copy of
 * the defaults, which the module parameters (mlx5 names) set at load time.
 * Also the port speed rates and PFC pause times are measured at.
 */
#include <linux/ethtool.h>
#include <linux/module.h>
#include <linux/rtnetlink.h>
#include <net/inet_ecn.h>
#include "rxe.h"
#include "rxecc.h"

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
	/* mlx5's default stall prevention timeout */
	.pfc_stall_critical = RXECC_PFC_STALL_MAX_MS,
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

/* Module init, before the first module parameter is read back. */
void rxecc_config_init(void)
{
	mutex_lock(&rxecc_cc_mutex);
	rxecc_cc_load_boot();
	mutex_unlock(&rxecc_cc_mutex);
}

/* Module exit, after the last device: the defaults' memory goes. */
void rxecc_config_exit(void)
{
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

/*
 * The port speed, Mbit/s: the device's link_mbps if set, else what the
 * netdev reports (ethtool), else RXECC_DEFAULT_LINK_MBPS. @cfg may be NULL
 * (a device being deallocated). DCQCN's line rate and the PFC pause quanta
 * are both measured at it.
 */
u32 rxecc_link_mbps(struct rxe_dev *rxe, const struct rxecc_cc_config *cfg)
{
	u32 mbps;

	if (cfg && cfg->link_mbps)
		return cfg->link_mbps;
	mbps = READ_ONCE(rxe->cc.port_mbps);
	return mbps ? mbps : RXECC_DEFAULT_LINK_MBPS;
}

/* What the netdev reports, under RTNL (0: unknown). */
static void rxecc_dev_speed_locked(struct rxe_dev *rxe)
{
	struct ethtool_link_ksettings lk;
	u32 mbps = 0;

	ASSERT_RTNL();
	if (!__ethtool_get_link_ksettings(rxe->cc.ndev, &lk) &&
	    lk.base.speed != SPEED_UNKNOWN)
		mbps = lk.base.speed;
	WRITE_ONCE(rxe->cc.port_mbps, mbps);
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
