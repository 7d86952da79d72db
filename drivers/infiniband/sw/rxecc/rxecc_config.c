// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * rxecc's configuration: every device has its own (struct rxecc_dev_config),
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
#define RXECC_SW_BOOT(n, a, field, t, lo, hi, def, ...) .field = def,
static struct rxecc_dev_config rxecc_cc_boot = {
	.profile = RXECC_PROFILE_MLX5,
	RXECC_SWITCHES(RXECC_SW_BOOT)
};

static bool rxecc_cc_boot_loaded;
static struct rxecc_dev_config __rcu *rxecc_cc_defaults = RCU_INITIALIZER(&rxecc_cc_boot);
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

struct rxecc_dev_config *rxecc_cc_defaults_locked(void)
{
	lockdep_assert_held(&rxecc_cc_mutex);
	return rcu_dereference_protected(rxecc_cc_defaults,
					 lockdep_is_held(&rxecc_cc_mutex));
}

static void rxecc_cc_free(struct rxecc_dev_config *old)
{
	if (old && old != &rxecc_cc_boot)
		kfree_rcu(old, rcu);
}

/* Install @new (allocated with kmalloc) as the defaults. */
void rxecc_cc_replace_defaults(struct rxecc_dev_config *new)
{
	rxecc_cc_free(rcu_replace_pointer(rxecc_cc_defaults, new,
					  lockdep_is_held(&rxecc_cc_mutex)));
}

/* Install @new (allocated with kmalloc) as the configuration of @rxe. */
void rxecc_cc_replace(struct rxe_dev *rxe, struct rxecc_dev_config *new)
{
	struct rxecc_dev_config *old;

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
	struct rxecc_dev_config *cfg;

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
 * time, and reading a parameter shows the current defaults). One per DCQCN
 * parameter (rxecc_dcqcn.h, mlx5 names), its argument the index in the
 * table, and one per switch (rxecc.h), its argument -1 - the switch's index.
 */
static bool rxecc_param_is_switch(int idx)
{
	return idx < 0;
}

static int rxecc_param_switch(int idx)
{
	return -1 - idx;
}

#define RXECC_SW_RANGE(n, a, f, t, lo, hi, ...) \
	[RXECC_SW_##n] = { lo, hi },
static const u32 rxecc_sw_range[RXECC_NUM_SWITCHES][2] = {
	RXECC_SWITCHES(RXECC_SW_RANGE)
};

static const char rxecc_msg_stall_critical[] =
	"device_stall_critical_watermark: 0 (off) or 80..8000 ms";
static const char rxecc_msg_stall_minor[] =
	"device_stall_minor_watermark: 0 (85 % of the critical one) or 80..8000 ms";
static const char rxecc_msg_stall_order[] =
	"device_stall_minor_watermark: above device_stall_critical_watermark";
static const char rxecc_msg_xon[] = "pfc_rx_xon: not below pfc_rx_xoff";

static int rxecc_cfg_fault(struct rxecc_cfg_fault *f, const char *msg, int sw, int other)
{
	f->msg = msg;
	f->sw = sw;
	f->other = other;
	return -ERANGE;
}

/*
 * The rules across switches, beyond each value's range, that netlink
 * (rxecc_nl_build()) and the module parameters both apply: 0, or -ERANGE
 * with the rule broken in @f. The pause-storm watermarks are 0 or
 * 80..8000 ms, minor not above critical; XON below XOFF.
 */
int rxecc_dev_config_check(const struct rxecc_dev_config *c, struct rxecc_cfg_fault *f)
{
	if (c->pfc_stall_critical && c->pfc_stall_critical < RXECC_PFC_STALL_MIN_MS)
		return rxecc_cfg_fault(f, rxecc_msg_stall_critical,
				       RXECC_SW_device_stall_critical_watermark,
				       RXECC_SW_device_stall_critical_watermark);
	if (c->pfc_stall_minor && c->pfc_stall_minor < RXECC_PFC_STALL_MIN_MS)
		return rxecc_cfg_fault(f, rxecc_msg_stall_minor,
				       RXECC_SW_device_stall_minor_watermark,
				       RXECC_SW_device_stall_minor_watermark);
	if (c->pfc_stall_minor && c->pfc_stall_critical &&
	    c->pfc_stall_minor > c->pfc_stall_critical)
		return rxecc_cfg_fault(f, rxecc_msg_stall_order,
				       RXECC_SW_device_stall_minor_watermark,
				       RXECC_SW_device_stall_critical_watermark);
	if (c->pfc_rx_xoff && c->pfc_rx_xon >= c->pfc_rx_xoff)
		return rxecc_cfg_fault(f, rxecc_msg_xon,
				       RXECC_SW_pfc_rx_xon, RXECC_SW_pfc_rx_xoff);
	return 0;
}

#define RXECC_SW_SET(n, a, field, ...) \
	case RXECC_SW_##n: \
		new->field = v; \
		break;

/* -ERANGE: out of the switch's range; -EDOM: breaks the rule in @f. */
static int rxecc_switch_set(struct rxecc_dev_config *new, int sw, u32 v,
			    struct rxecc_cfg_fault *f)
{
	if (v < rxecc_sw_range[sw][0] || v > rxecc_sw_range[sw][1])
		return -ERANGE;
	switch (sw) {
	RXECC_SWITCHES(RXECC_SW_SET)
	}
	return rxecc_dev_config_check(new, f) ? -EDOM : 0;
}

#define RXECC_SW_GET(n, a, field, ...) \
	case RXECC_SW_##n: \
		return cfg->field;

static u32 rxecc_switch_get(const struct rxecc_dev_config *cfg, int sw)
{
	switch (sw) {
	RXECC_SWITCHES(RXECC_SW_GET)
	}
	return 0;
}

#define RXECC_SW_MASK_MASK true
#define RXECC_SW_MASK_NUM false
#define RXECC_SW_IS_MASK(n, a, f, t, lo, hi, def, check, show, ...) \
	[RXECC_SW_##n] = RXECC_SW_MASK_##show,
static const bool rxecc_sw_mask[RXECC_NUM_SWITCHES] = {
	RXECC_SWITCHES(RXECC_SW_IS_MASK)
};

static int rxecc_param_update(int idx, u32 v, struct rxecc_cfg_fault *f)
{
	struct rxecc_dev_config *new;
	int err = 0;

	mutex_lock(&rxecc_cc_mutex);
	rxecc_cc_load_boot();
	new = kmemdup(rxecc_cc_defaults_locked(), sizeof(*new), GFP_KERNEL);
	if (!new) {
		err = -ENOMEM;
		goto out;
	}
	if (rxecc_param_is_switch(idx)) {
		err = rxecc_switch_set(new, rxecc_param_switch(idx), v, f);
	} else if (rxecc_dcqcn_param_set(&new->dcqcn, idx, v) ||
		   rxecc_dcqcn_params_check(&new->dcqcn)) {
		err = -ERANGE;
	} else {
		new->profile = rxecc_cc_profile_of(&new->dcqcn);
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
	struct rxecc_cfg_fault f;
	u32 v;
	int err;

	err = kstrtou32(val, 0, &v);
	if (err)
		return err;
	err = rxecc_param_update(idx, v, &f);
	if (err == -EDOM) {
		/* the value is in range, the configuration it makes is not */
		pr_warn("%s=%u: %s\n", kp->name, v, f.msg);
		return -EINVAL;
	}
	if (err == -ERANGE) {
		if (!rxecc_param_is_switch(idx))
			pr_warn("%s: %u is outside %u..%u\n", kp->name, v,
				rxecc_dcqcn_param_descs[idx].min,
				rxecc_dcqcn_param_descs[idx].max);
		else
			pr_warn("%s: %u is outside %u..%u\n", kp->name, v,
				rxecc_sw_range[rxecc_param_switch(idx)][0],
				rxecc_sw_range[rxecc_param_switch(idx)][1]);
		return -EINVAL;
	}
	return err;
}

static int rxecc_param_get(char *buf, const struct kernel_param *kp)
{
	int idx = rxecc_param_idx(kp);
	struct rxecc_dev_config *cfg;
	u32 v;

	rcu_read_lock();
	cfg = rcu_dereference(rxecc_cc_defaults);
	if (rxecc_param_is_switch(idx))
		v = rxecc_switch_get(cfg, rxecc_param_switch(idx));
	else
		v = rxecc_dcqcn_param_get(&cfg->dcqcn, idx);
	rcu_read_unlock();
	if (rxecc_param_is_switch(idx) && rxecc_sw_mask[rxecc_param_switch(idx)])
		return sysfs_emit(buf, "0x%02x\n", v);
	return sysfs_emit(buf, "%u\n", v);
}

static const struct kernel_param_ops rxecc_param_ops = {
	.set = rxecc_param_set,
	.get = rxecc_param_get,
};

#define RXECC_DCQCN_MODPARAM(n, desc) \
	module_param_cb(n, &rxecc_param_ops, (void *)(long)RXECC_DCQCN_P_##n, 0444); \
	MODULE_PARM_DESC(n, desc);
#define RXECC_DCQCN_MODPARAM_P(n, attr, lo, hi, unit, desc) RXECC_DCQCN_MODPARAM(n, desc)
#define RXECC_DCQCN_MODPARAM_R(n, attr, lo, hi, desc) RXECC_DCQCN_MODPARAM(n, desc)
RXECC_DCQCN_PARAMS(RXECC_DCQCN_MODPARAM_P, RXECC_DCQCN_MODPARAM_R)

#define RXECC_SW_MODPARAM(n, a, f, t, lo, hi, def, check, show, desc) \
	module_param_cb(n, &rxecc_param_ops, (void *)(long)(-1 - RXECC_SW_##n), 0444); \
	MODULE_PARM_DESC(n, desc);
RXECC_SWITCHES(RXECC_SW_MODPARAM)

static int rxecc_profile_set(const char *val, const struct kernel_param *kp)
{
	struct rxecc_dev_config *new;
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
 * The port speed, Mbit/s: the device's link_speed if set, else what the
 * netdev reports (ethtool), else RXECC_DEFAULT_LINK_MBPS. @cfg may be NULL
 * (a device being deallocated). DCQCN's line rate and the PFC pause quanta
 * are both measured at it.
 */
u32 rxecc_link_mbps(struct rxe_dev *rxe, const struct rxecc_dev_config *cfg)
{
	u32 mbps;

	if (cfg && cfg->link_speed)
		return cfg->link_speed;
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
