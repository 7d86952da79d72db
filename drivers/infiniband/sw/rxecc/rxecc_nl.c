// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The generic netlink family "rxecc" (include/uapi/rdma/rxecc_netlink.h):
 * per-device DCQCN configuration and the defaults of new devices, port
 * counters, QPs with their congestion state, change notifications.
 *
 * Requests run in parallel (parallel_ops: no genl_mutex around them). Every
 * operation takes rxecc_cc_mutex, which serialises them over the
 * configuration; device lookups and everything done with the device found
 * also run under rxecc_devices_lock(), which keeps it from being
 * deallocated (lock order: devices, then cc). Only devices whose netdev is
 * in the requester's network namespace are visible.
 */
#include <linux/module.h>
#include <net/genetlink.h>
#include <rdma/rxecc_netlink.h>
#include "rxe.h"
#include "rxe_hw_counters.h"
#include "rxecc.h"

static struct genl_family rxecc_nl_family;

enum { RXECC_NL_MCGRP_CONFIG };

/* Configuration changes are for the namespace's administrators. */
static const struct genl_multicast_group rxecc_nl_mcgrps[] = {
	[RXECC_NL_MCGRP_CONFIG] = {
		.name = RXECC_GENL_MCGRP_CONFIG,
		.flags = GENL_MCAST_CAP_NET_ADMIN,
	},
};

/*
 * DCQCN values: the ranges of the core's parameter table, filled in at init
 * (the same table the module parameters and the tool use).
 */
static struct netlink_range_validation rxecc_nl_ranges[RXECC_DCQCN_NUM_PARAMS];
#define RXECC_NL_DCQCN_POLICY(n, attr, ...) \
	[RXECC_DCQCN_A_##attr] = NLA_POLICY_FULL_RANGE(NLA_U32, \
						    &rxecc_nl_ranges[RXECC_DCQCN_P_##n]),
static const struct nla_policy rxecc_nl_dcqcn_policy[RXECC_DCQCN_A_MAX + 1] = {
	RXECC_DCQCN_PARAMS(RXECC_NL_DCQCN_POLICY, RXECC_NL_DCQCN_POLICY)
};

/* The table's order is the attributes' numbering (uapi). */
#define RXECC_NL_DCQCN_SAME(n, attr, ...) \
	static_assert((int)RXECC_DCQCN_A_##attr == (int)RXECC_DCQCN_P_##n + 1);
RXECC_DCQCN_PARAMS(RXECC_NL_DCQCN_SAME, RXECC_NL_DCQCN_SAME)
static_assert((int)RXECC_DCQCN_A_MAX == (int)RXECC_DCQCN_NUM_PARAMS);

/* "rp_time_reset: out of range 1..1000000 us": extack needs static text. */
static char rxecc_nl_range_msg[RXECC_DCQCN_NUM_PARAMS][96];
/* "rp_ai_rate and rp_ai_rate_kbps: one rate, ...", for the Mbit/s names */
static char rxecc_nl_twice_msg[RXECC_DCQCN_NUM_PARAMS][128];

/* The switches' ranges (rxecc.h), for the policy of those checked there */
#define RXECC_NL_SW_RANGE(n, a, f, t, lo, hi, ...) \
	[RXECC_SW_##n] = { .min = lo, .max = hi },
static struct netlink_range_validation rxecc_nl_sw_ranges[RXECC_NUM_SWITCHES] = {
	RXECC_SWITCHES(RXECC_NL_SW_RANGE)
};

/* PROFILE_KBPS: 1 kbit/s up to 400 Gbit/s */
static struct netlink_range_validation rxecc_nl_profile_kbps_range = {
	.min = 1, .max = 400000000
};

/* PROFILE_SPEEDUP: 1 up to RXECC_SPEEDUP_MAX */
static struct netlink_range_validation rxecc_nl_speedup_range = {
	.min = 1, .max = RXECC_SPEEDUP_MAX
};

#define RXECC_NL_DEV_POLICY \
	[RXECC_ATTR_DEV_INDEX] = { .type = NLA_U32 }, \
	[RXECC_ATTR_DEV_NAME] = { .type = NLA_NUL_STRING, .len = IB_DEVICE_NAME_MAX - 1 }

#define RXECC_NLA_u8	NLA_U8
#define RXECC_NLA_u32	NLA_U32
#define RXECC_NL_SW_POL_RANGE(n, t) \
	NLA_POLICY_FULL_RANGE(RXECC_NLA_##t, &rxecc_nl_sw_ranges[RXECC_SW_##n])
#define RXECC_NL_SW_POL_TYPE(n, t) { .type = RXECC_NLA_##t }
#define RXECC_NL_SW_POLICY(n, attr, f, t, lo, hi, def, check, ...) \
	[RXECC_ATTR_##attr] = RXECC_NL_SW_POL_##check(n, t),

#define RXECC_NL_CFG_POLICY \
	[RXECC_ATTR_NETDEV] = { .type = NLA_REJECT, \
				.reject_message = "NETDEV is read only" }, \
	[RXECC_ATTR_LINE_KBPS] = { .type = NLA_REJECT, \
				   .reject_message = "LINE_KBPS is read only" }, \
	[RXECC_ATTR_PROFILE] = { .type = NLA_NUL_STRING, .len = 15 }, \
	[RXECC_ATTR_DCQCN] = { .type = NLA_NESTED }, \
	[RXECC_ATTR_DSCP2PRIO] = NLA_POLICY_EXACT_LEN(64), \
	[RXECC_ATTR_PROFILE_KBPS] = NLA_POLICY_FULL_RANGE(NLA_U32, &rxecc_nl_profile_kbps_range), \
	[RXECC_ATTR_PROFILE_SPEEDUP] = NLA_POLICY_FULL_RANGE(NLA_U32, &rxecc_nl_speedup_range), \
	RXECC_SWITCHES(RXECC_NL_SW_POLICY)

static const struct nla_policy rxecc_nl_dev_policy[RXECC_ATTR_DEV_NAME + 1] = {
	RXECC_NL_DEV_POLICY,
};

static const struct nla_policy rxecc_nl_set_policy[RXECC_ATTR_MAX + 1] = {
	RXECC_NL_DEV_POLICY,
	RXECC_NL_CFG_POLICY
};

/* The defaults have no device: the device attributes are rejected. */
static const struct nla_policy rxecc_nl_defaults_policy[RXECC_ATTR_MAX + 1] = {
	[RXECC_ATTR_DEV_INDEX] = { .type = NLA_REJECT,
				   .reject_message = "the defaults belong to no device" },
	[RXECC_ATTR_DEV_NAME] = { .type = NLA_REJECT,
				  .reject_message = "the defaults belong to no device" },
	RXECC_NL_CFG_POLICY
};

static struct net *rxecc_nl_net(struct sk_buff *skb)
{
	return sock_net(skb->sk);
}

/*
 * The device a request names, with rxecc_devices_lock() held. Every failure
 * says what was wrong with which attribute. A device of another driver is
 * named as such only if the RDMA core lets the caller's namespace see it
 * (`rdma dev` shows it there): one it hides (exclusive netns mode) gets the
 * answer a name nobody has gets, so that no name leaks across namespaces.
 */
static struct rxe_dev *rxecc_nl_dev(struct sk_buff *skb, struct nlattr **attrs,
				    struct netlink_ext_ack *extack)
{
	struct nlattr *name = attrs[RXECC_ATTR_DEV_NAME];
	struct nlattr *index = attrs[RXECC_ATTR_DEV_INDEX];
	struct ib_device *other;
	struct rxe_dev *rxe;

	lockdep_assert_held(&rxecc_cc_mutex);
	if (!name && !index) {
		NL_SET_ERR_MSG(extack, "a device is required (DEV_NAME or DEV_INDEX)");
		return ERR_PTR(-EINVAL);
	}
	if (name) {
		rxe = rxecc_dev_find(rxecc_nl_net(skb), nla_data(name), 0);
		if (rxe)
			return rxe;
		other = ib_device_get_by_name(nla_data(name), RDMA_DRIVER_UNKNOWN);
		if (other) {
			bool foreign = !rxecc_owns(other) &&
				       rdma_dev_access_netns(other, rxecc_nl_net(skb));

			ib_device_put(other);
			if (foreign) {
				NL_SET_ERR_MSG_ATTR(extack, name,
						    "DEV_NAME: not an rxecc device");
				return ERR_PTR(-EOPNOTSUPP);
			}
		}
		NL_SET_ERR_MSG_ATTR(extack, name,
				    "DEV_NAME: no rxecc device of that name in this network namespace");
		return ERR_PTR(-ENODEV);
	}
	rxe = rxecc_dev_find(rxecc_nl_net(skb), NULL, nla_get_u32(index));
	if (!rxe) {
		NL_SET_ERR_MSG_ATTR(extack, index,
				    "DEV_INDEX: no rxecc device with that index in this network namespace");
		return ERR_PTR(-ENODEV);
	}
	return rxe;
}

static int rxecc_nl_put_dev(struct sk_buff *msg, struct rxe_dev *rxe)
{
	if (nla_put_u32(msg, RXECC_ATTR_DEV_INDEX, rxe->ib_dev.index) ||
	    nla_put_string(msg, RXECC_ATTR_DEV_NAME, dev_name(&rxe->ib_dev.dev)) ||
	    nla_put_string(msg, RXECC_ATTR_NETDEV, rxe->cc.ndev->name))
		return -EMSGSIZE;
	return 0;
}

#define RXECC_NL_SW_PUT(n, attr, field, t, ...) \
	nla_put_##t(msg, RXECC_ATTR_##attr, cfg->field) ||

static int rxecc_nl_put_cfg(struct sk_buff *msg, const struct rxecc_dev_config *cfg)
{
	struct nlattr *nest;
	unsigned int i;

	if (nla_put_string(msg, RXECC_ATTR_PROFILE, cfg->profile < 0 ? "custom" :
			   rxecc_dcqcn_profile_names[cfg->profile]) ||
	    RXECC_SWITCHES(RXECC_NL_SW_PUT)
	    nla_put(msg, RXECC_ATTR_DSCP2PRIO, sizeof(cfg->dscp2prio), cfg->dscp2prio))
		return -EMSGSIZE;
	nest = nla_nest_start(msg, RXECC_ATTR_DCQCN);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < rxecc_dcqcn_num_params; i++)
		if (nla_put_u32(msg, i + 1, rxecc_dcqcn_param_get(&cfg->dcqcn, i))) {
			nla_nest_cancel(msg, nest);
			return -EMSGSIZE;
		}
	nla_nest_end(msg, nest);
	return 0;
}

/* A configuration message: of @rxe, or of the defaults if @rxe is NULL. */
static int rxecc_nl_fill_cfg(struct sk_buff *msg, u8 cmd, u32 portid, u32 seq,
			     int flags, struct rxe_dev *rxe)
{
	struct rxecc_dev_config *cfg;
	void *hdr;

	lockdep_assert_held(&rxecc_cc_mutex);
	hdr = genlmsg_put(msg, portid, seq, &rxecc_nl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (rxe) {
		cfg = rcu_dereference_protected(rxe->cc.cfg,
						lockdep_is_held(&rxecc_cc_mutex));
		if (rxecc_nl_put_dev(msg, rxe) ||
		    nla_put_u64_64bit(msg, RXECC_ATTR_LINE_KBPS,
				      (u64)rxecc_link_mbps(rxe, cfg) * 1000,
				      RXECC_ATTR_PAD))
			goto cancel;
	} else {
		cfg = rxecc_cc_defaults_locked();
	}
	if (rxecc_nl_put_cfg(msg, cfg))
		goto cancel;
	genlmsg_end(msg, hdr);
	return 0;
cancel:
	genlmsg_cancel(msg, hdr);
	return -EMSGSIZE;
}

/*
 * Announce the configuration of @rxe to the group in its namespace, or that
 * of the defaults in @net, the namespace of the administrator who changed
 * them (the defaults are the module's; other namespaces read them when they
 * ask).
 */
static void rxecc_nl_notify(struct rxe_dev *rxe, struct net *net)
{
	struct sk_buff *msg;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return;
	if (rxecc_nl_fill_cfg(msg, RXECC_CMD_CONFIG_NTF, 0, 0, 0, rxe)) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_multicast_netns(&rxecc_nl_family, rxe ? rxe->cc.net : net, msg, 0,
				RXECC_NL_MCGRP_CONFIG, GFP_KERNEL);
}

/*
 * The DCQCN values of a set request into @p. Each value is range checked
 * first, so the error names the parameter; the policy then catches the rest
 * (unknown attributes, wrong lengths).
 */
static int rxecc_nl_parse_dcqcn(struct nlattr *nest, struct rxecc_dcqcn_params *p,
				struct netlink_ext_ack *extack)
{
	struct nlattr *tb[RXECC_DCQCN_A_MAX + 1];
	const struct rxecc_dcqcn_param_desc *d;
	struct nlattr *a;
	int rem, i, err;
	u32 v;

	nla_for_each_nested(a, nest, rem) {
		i = nla_type(a) - 1;
		if (i < 0 || i >= RXECC_DCQCN_NUM_PARAMS || nla_len(a) != sizeof(u32))
			continue;
		d = &rxecc_dcqcn_param_descs[i];
		v = nla_get_u32(a);
		if (v < d->min || v > d->max) {
			if (extack) {
				extack->_msg = rxecc_nl_range_msg[i];
				NL_SET_BAD_ATTR(extack, a);
			}
			return -ERANGE;
		}
	}
	err = nla_parse_nested(tb, RXECC_DCQCN_A_MAX, nest, rxecc_nl_dcqcn_policy,
			       extack);
	if (err)
		return err;
	/* A rate in Mbit/s and in kbit/s: one value, so one of the two. */
	for (i = 0; i < RXECC_DCQCN_NUM_PARAMS; i++) {
		unsigned int base = rxecc_dcqcn_param_base(i);

		if (base != i && tb[i + 1] && tb[base + 1]) {
			if (extack) {
				extack->_msg = rxecc_nl_twice_msg[i];
				NL_SET_BAD_ATTR(extack, tb[base + 1]);
			}
			return -EINVAL;
		}
	}
	for (i = 0; i < RXECC_DCQCN_NUM_PARAMS; i++)
		if (tb[i + 1])
			rxecc_dcqcn_param_set(p, i, nla_get_u32(tb[i + 1]));
	return 0;
}

/* Each switch's attribute, to blame in a rule it breaks */
#define RXECC_NL_SW_ATTR(n, a, ...) \
	[RXECC_SW_##n] = RXECC_ATTR_##a,
static const u16 rxecc_nl_sw_attr[RXECC_NUM_SWITCHES] = {
	RXECC_SWITCHES(RXECC_NL_SW_ATTR)
};

#define RXECC_NL_SW_GET(n, attr, field, t, ...) \
	if (attrs[RXECC_ATTR_##attr]) \
		new->field = nla_get_##t(attrs[RXECC_ATTR_##attr]);

/*
 * The configuration a set request asks for, built on @old: the profile
 * first, then the values given. Checked as a whole; nothing is installed
 * here.
 */
static struct rxecc_dev_config *rxecc_nl_build(const struct rxecc_dev_config *old,
					       struct nlattr **attrs,
					       struct netlink_ext_ack *extack)
{
	struct rxecc_dev_config *new;
	struct rxecc_cfg_fault fault;
	struct nlattr *a;
	int prof = -1, err = -EINVAL;

	new = kmemdup(old, sizeof(*new), GFP_KERNEL);
	if (!new)
		return ERR_PTR(-ENOMEM);
	a = attrs[RXECC_ATTR_PROFILE];
	if (a) {
		prof = rxecc_dcqcn_profile_find(nla_data(a));
		if (prof < 0) {
			NL_SET_ERR_MSG_ATTR(extack, a,
					    "PROFILE: unknown DCQCN profile (mlx5, paper, lab)");
			goto fail;
		}
		rxecc_dcqcn_load_profile(&new->dcqcn, prof);
	}
	if (attrs[RXECC_ATTR_PROFILE_SPEEDUP] && !attrs[RXECC_ATTR_PROFILE_KBPS]) {
		NL_SET_ERR_MSG_ATTR(extack, attrs[RXECC_ATTR_PROFILE_SPEEDUP],
				    "PROFILE_SPEEDUP needs PROFILE_KBPS");
		goto fail;
	}
	if (attrs[RXECC_ATTR_PROFILE_KBPS]) {
		u32 speedup = 1;

		if (!a) {
			NL_SET_ERR_MSG_ATTR(extack, attrs[RXECC_ATTR_PROFILE_KBPS],
					    "PROFILE_KBPS needs PROFILE");
			goto fail;
		}
		if (attrs[RXECC_ATTR_PROFILE_SPEEDUP])
			speedup = nla_get_u32(attrs[RXECC_ATTR_PROFILE_SPEEDUP]);
		if (rxecc_dcqcn_scale_profile(&new->dcqcn, prof,
					      nla_get_u32(attrs[RXECC_ATTR_PROFILE_KBPS]),
					      speedup)) {
			NL_SET_ERR_MSG_ATTR(extack, a,
					    "PROFILE: cannot be scaled (only mlx5 and paper have a reference rate)");
			goto fail;
		}
	}
	if (attrs[RXECC_ATTR_DCQCN]) {
		err = rxecc_nl_parse_dcqcn(attrs[RXECC_ATTR_DCQCN], &new->dcqcn, extack);
		if (err)
			goto fail;
	}
	if (rxecc_dcqcn_params_check(&new->dcqcn)) {
		/* In range one by one: the floor above the ceiling. */
		NL_SET_ERR_MSG_ATTR(extack, attrs[RXECC_ATTR_DCQCN] ?: a,
				    "dcqcn: rp_min_rate is above rp_max_rate (kbit/s: rp_min_rate_kbps, rp_max_rate_kbps)");
		err = -ERANGE;
		goto fail;
	}
	a = attrs[RXECC_ATTR_ECN];
	if (a && nla_get_u8(a) > RXECC_ECN_ECT0) {
		NL_SET_ERR_MSG_ATTR(extack, a,
				    "ECN: out of range 0..2 (0 as the address vector says, 1 ECT(1), 2 ECT(0))");
		err = -ERANGE;
		goto fail;
	}
	RXECC_SWITCHES(RXECC_NL_SW_GET)
	err = rxecc_dev_config_check(new, &fault);
	if (err) {
		/* fault.msg: static text (rxecc_dev_config_check()) */
		if (extack) {
			extack->_msg = fault.msg;
			NL_SET_BAD_ATTR(extack, attrs[rxecc_nl_sw_attr[fault.sw]] ?:
					attrs[rxecc_nl_sw_attr[fault.other]]);
		}
		goto fail;
	}
	a = attrs[RXECC_ATTR_DSCP2PRIO];
	if (a) {
		const u8 *map = nla_data(a);
		int d;

		for (d = 0; d < ARRAY_SIZE(new->dscp2prio); d++) {
			if (map[d] > 7) {
				NL_SET_ERR_MSG_ATTR(extack, a,
						    "DSCP2PRIO: a priority above 7");
				err = -ERANGE;
				goto fail;
			}
		}
		memcpy(new->dscp2prio, map, sizeof(new->dscp2prio));
	}
	new->profile = rxecc_cc_profile_of(&new->dcqcn);
	return new;
fail:
	kfree(new);
	return ERR_PTR(err);
}

/* The reply to DEFAULTS_GET. */
static int rxecc_nl_reply_defaults(struct genl_info *info)
{
	struct sk_buff *msg;
	int err;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	err = rxecc_nl_fill_cfg(msg, info->genlhdr->cmd, info->snd_portid,
				info->snd_seq, 0, NULL);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

static int rxecc_nl_dev_set(struct sk_buff *skb, struct genl_info *info)
{
	struct rxecc_dev_config *new;
	struct rxe_dev *rxe;
	int err = 0;

	rxecc_devices_lock();
	mutex_lock(&rxecc_cc_mutex);
	rxe = rxecc_nl_dev(skb, info->attrs, info->extack);
	if (IS_ERR(rxe)) {
		err = PTR_ERR(rxe);
		goto out;
	}
	new = rxecc_nl_build(rcu_dereference_protected(rxe->cc.cfg,
						       lockdep_is_held(&rxecc_cc_mutex)),
			     info->attrs, info->extack);
	if (IS_ERR(new)) {
		err = PTR_ERR(new);
		goto out;
	}
	rxecc_cc_replace(rxe, new);
	rxecc_nl_notify(rxe, NULL);
out:
	mutex_unlock(&rxecc_cc_mutex);
	rxecc_devices_unlock();
	return err;
}

static int rxecc_nl_defaults_get(struct sk_buff *skb, struct genl_info *info)
{
	int err;

	mutex_lock(&rxecc_cc_mutex);
	err = rxecc_nl_reply_defaults(info);
	mutex_unlock(&rxecc_cc_mutex);
	return err;
}

static int rxecc_nl_defaults_set(struct sk_buff *skb, struct genl_info *info)
{
	struct rxecc_dev_config *new;
	int err = 0;

	mutex_lock(&rxecc_cc_mutex);
	new = rxecc_nl_build(rxecc_cc_defaults_locked(), info->attrs, info->extack);
	if (IS_ERR(new)) {
		err = PTR_ERR(new);
	} else {
		rxecc_cc_replace_defaults(new);
		rxecc_nl_notify(NULL, genl_info_net(info));
	}
	mutex_unlock(&rxecc_cc_mutex);
	return err;
}

/* The port counters, by their hw_counters names and in their table's order. */
static int rxecc_nl_fill_stats(struct sk_buff *msg, u32 portid, u32 seq,
			       int flags, struct rxe_dev *rxe)
{
	struct rdma_hw_stats *stats;
	struct nlattr *all, *one;
	void *hdr;
	int i, n, err = -EMSGSIZE;

	stats = rxe_ib_alloc_hw_port_stats(&rxe->ib_dev, 1);
	if (!stats)
		return -ENOMEM;
	n = rxe_ib_get_hw_stats(&rxe->ib_dev, stats, 1, 0);
	hdr = genlmsg_put(msg, portid, seq, &rxecc_nl_family, flags,
			  RXECC_CMD_STATS_GET);
	if (!hdr)
		goto out;
	if (rxecc_nl_put_dev(msg, rxe))
		goto cancel;
	all = nla_nest_start(msg, RXECC_ATTR_STATS);
	if (!all)
		goto cancel;
	for (i = 0; i < n; i++) {
		one = nla_nest_start(msg, RXECC_ATTR_STAT);
		if (!one ||
		    nla_put_string(msg, RXECC_STAT_A_NAME, stats->descs[i].name) ||
		    nla_put_u64_64bit(msg, RXECC_STAT_A_VALUE, stats->value[i],
				      RXECC_STAT_A_PAD))
			goto cancel;
		nla_nest_end(msg, one);
	}
	nla_nest_end(msg, all);
	genlmsg_end(msg, hdr);
	err = 0;
	goto out;
cancel:
	genlmsg_cancel(msg, hdr);
out:
	rdma_free_hw_stats_struct(stats);
	return err;
}

/* A message about one device: its configuration or its counters. */
typedef int (*rxecc_nl_fill_fn)(struct sk_buff *msg, u32 portid, u32 seq,
				int flags, struct rxe_dev *rxe);

static int rxecc_nl_fill_dev_cfg(struct sk_buff *msg, u32 portid, u32 seq,
				 int flags, struct rxe_dev *rxe)
{
	return rxecc_nl_fill_cfg(msg, RXECC_CMD_DEV_GET, portid, seq, flags, rxe);
}

/* doit of the per-device reads: the named device. */
static int rxecc_nl_get_one(struct sk_buff *skb, struct genl_info *info,
			    rxecc_nl_fill_fn fill)
{
	struct sk_buff *msg;
	struct rxe_dev *rxe;
	int err;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	rxecc_devices_lock();
	mutex_lock(&rxecc_cc_mutex);
	rxe = rxecc_nl_dev(skb, info->attrs, info->extack);
	err = IS_ERR(rxe) ? PTR_ERR(rxe) :
	      fill(msg, info->snd_portid, info->snd_seq, 0, rxe);
	mutex_unlock(&rxecc_cc_mutex);
	rxecc_devices_unlock();
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

/*
 * dumpit of the per-device reads: every visible device in index order;
 * cb->args[0] is the next index.
 */
static int rxecc_nl_dump_all(struct sk_buff *skb, struct netlink_callback *cb,
			     rxecc_nl_fill_fn fill)
{
	struct rxe_dev *rxe;
	int err = 0;

	rxecc_devices_lock();
	mutex_lock(&rxecc_cc_mutex);
	while ((rxe = rxecc_dev_next(rxecc_nl_net(skb), cb->args[0]))) {
		err = fill(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			   NLM_F_MULTI, rxe);
		if (err)
			break;
		cb->args[0] = rxe->ib_dev.index + 1;
	}
	mutex_unlock(&rxecc_cc_mutex);
	rxecc_devices_unlock();
	/* A full message ends this part of the dump; it goes on from there. */
	return err == -EMSGSIZE && skb->len ? skb->len : err ?: skb->len;
}

static int rxecc_nl_dev_get(struct sk_buff *skb, struct genl_info *info)
{
	return rxecc_nl_get_one(skb, info, rxecc_nl_fill_dev_cfg);
}

static int rxecc_nl_dev_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	return rxecc_nl_dump_all(skb, cb, rxecc_nl_fill_dev_cfg);
}

static int rxecc_nl_stats_get(struct sk_buff *skb, struct genl_info *info)
{
	return rxecc_nl_get_one(skb, info, rxecc_nl_fill_stats);
}

static int rxecc_nl_stats_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	return rxecc_nl_dump_all(skb, cb, rxecc_nl_fill_stats);
}

/*
 * The next QP of @rxe with a number >= *@qpn, with a reference, or NULL.
 * rxe_pool_get_index() refuses QPs on their way out.
 */
static struct rxe_qp *rxecc_nl_next_qp(struct rxe_dev *rxe, unsigned long *qpn)
{
	struct rxe_qp *qp;

	while (xa_find(&rxe->qp_pool.xa, qpn, ULONG_MAX, XA_PRESENT)) {
		qp = rxe_pool_get_index(&rxe->qp_pool, *qpn);
		if (qp)
			return qp;
		(*qpn)++;
	}
	return NULL;
}

static int rxecc_nl_reset(struct sk_buff *skb, struct genl_info *info)
{
	unsigned long qpn = 0;
	struct rxe_dev *rxe;
	struct rxe_qp *qp;
	int i, err = 0;

	rxecc_devices_lock();
	mutex_lock(&rxecc_cc_mutex);
	rxe = rxecc_nl_dev(skb, info->attrs, info->extack);
	if (IS_ERR(rxe)) {
		err = PTR_ERR(rxe);
		goto out;
	}
	for (i = 0; i < RXE_NUM_OF_COUNTERS; i++)
		atomic64_set(&rxe->stats_counters[i], 0);
	while ((qp = rxecc_nl_next_qp(rxe, &qpn))) {
		rxecc_qp_clear_counts(qp);
		rxe_put(qp);
		qpn++;
	}
out:
	mutex_unlock(&rxecc_cc_mutex);
	rxecc_devices_unlock();
	return err;
}

static int rxecc_nl_fill_qp(struct sk_buff *msg, u32 portid, u32 seq,
			    struct rxe_dev *rxe, struct rxe_qp *qp)
{
	struct rxecc_qp_snap s;
	struct nlattr *nest;
	void *hdr;

	rxecc_qp_snapshot(qp, &s);
	hdr = genlmsg_put(msg, portid, seq, &rxecc_nl_family, NLM_F_MULTI,
			  RXECC_CMD_QP_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (rxecc_nl_put_dev(msg, rxe))
		goto cancel;
	nest = nla_nest_start(msg, RXECC_ATTR_QP);
	if (!nest ||
	    nla_put_u32(msg, RXECC_QP_A_QPN, qp_num(qp)) ||
	    nla_put_u8(msg, RXECC_QP_A_TYPE, qp_type(qp)) ||
	    nla_put_u8(msg, RXECC_QP_A_STATE, READ_ONCE(qp->attr.qp_state)) ||
	    nla_put_u32(msg, RXECC_QP_A_DEST_QPN, qp->attr.dest_qp_num) ||
	    nla_put_u8(msg, RXECC_QP_A_PRIO, s.prio) ||
	    nla_put_u8(msg, RXECC_QP_A_LIMITED, s.rp.active) ||
	    nla_put_u64_64bit(msg, RXECC_QP_A_RATE_KBPS, s.rp.rc, RXECC_QP_A_PAD) ||
	    nla_put_u64_64bit(msg, RXECC_QP_A_TARGET_KBPS, s.rp.rt, RXECC_QP_A_PAD) ||
	    nla_put_u32(msg, RXECC_QP_A_ALPHA_PPM, rxecc_alpha_ppm(s.rp.alpha)) ||
	    nla_put_u32(msg, RXECC_QP_A_T_STAGE, s.rp.t_stage) ||
	    nla_put_u32(msg, RXECC_QP_A_BC_STAGE, s.rp.bc_stage) ||
	    nla_put_u64_64bit(msg, RXECC_QP_A_CNP_HANDLED, s.cnp_handled, RXECC_QP_A_PAD) ||
	    nla_put_u64_64bit(msg, RXECC_QP_A_CNP_SENT, s.cnp_sent, RXECC_QP_A_PAD) ||
	    nla_put_u64_64bit(msg, RXECC_QP_A_RP_TX_DEFERRED, s.rp_tx_deferred,
			      RXECC_QP_A_PAD))
		goto cancel;
	nla_nest_end(msg, nest);
	genlmsg_end(msg, hdr);
	return 0;
cancel:
	genlmsg_cancel(msg, hdr);
	return -EMSGSIZE;
}

/*
 * Who asked for a QP dump, judged once, when the request came (its socket
 * and its task): the dump goes on in whichever task reads the socket
 * later, which may be another process with other rights (a socket passed
 * on, or read by a privileged process on an unprivileged user's behalf).
 * cb->args[3]: the requester's thread group (a reference, put at the end),
 * [4]: 1 if it administers the namespace.
 */
static int rxecc_nl_qp_dump_start(struct netlink_callback *cb)
{
	cb->args[3] = (long)get_pid(task_tgid(current));
	cb->args[4] = netlink_net_capable(cb->skb, CAP_NET_ADMIN);
	return 0;
}

static int rxecc_nl_qp_dump_done(struct netlink_callback *cb)
{
	put_pid((struct pid *)cb->args[3]);
	return 0;
}

/*
 * One message per QP. cb->args[0]: index of the device being dumped, [1]:
 * next QP number, [2]: 1 if the request named one device. The locks are
 * let go every RXECC_NL_QP_CHUNK QPs walked (a reader who may see few of
 * them walks them all before the message fills): a dump of many QPs does
 * not hold configuration and device teardown back for its whole length.
 * The cursor then finds the device again by its index.
 */
#define RXECC_NL_QP_CHUNK	64

static int rxecc_nl_qp_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	const struct genl_dumpit_info *info = genl_dumpit_info(cb);
	const struct rxecc_reader r = {
		.tgid = (struct pid *)cb->args[3],
		.admin = cb->args[4],
	};
	unsigned int walked = 0;
	struct rxe_dev *rxe;
	struct rxe_qp *qp;
	unsigned long qpn;
	int err = 0;

	rxecc_devices_lock();
	mutex_lock(&rxecc_cc_mutex);
	if (!cb->args[0] && !cb->args[2] &&
	    (rxecc_dumpit_attrs(info)[RXECC_ATTR_DEV_NAME] ||
	     rxecc_dumpit_attrs(info)[RXECC_ATTR_DEV_INDEX])) {
		rxe = rxecc_nl_dev(skb, rxecc_dumpit_attrs(info), cb->extack);
		if (IS_ERR(rxe)) {
			err = PTR_ERR(rxe);
			goto out;
		}
		cb->args[0] = rxe->ib_dev.index;
		cb->args[2] = 1;
	}
again:
	while ((rxe = rxecc_dev_next(rxecc_nl_net(skb), cb->args[0]))) {
		if (cb->args[2] && rxe->ib_dev.index != cb->args[0])
			break;
		if (rxe->ib_dev.index != cb->args[0]) {
			cb->args[0] = rxe->ib_dev.index;
			cb->args[1] = 0;
		}
		qpn = cb->args[1];
		while ((qp = rxecc_nl_next_qp(rxe, &qpn))) {
			err = !rxecc_qp_visible(qp, &r) ? 0 :
			      rxecc_nl_fill_qp(skb, NETLINK_CB(cb->skb).portid,
					       cb->nlh->nlmsg_seq, rxe, qp);
			rxe_put(qp);
			if (err)
				goto out;
			cb->args[1] = ++qpn;
			if (++walked % RXECC_NL_QP_CHUNK)
				continue;
			mutex_unlock(&rxecc_cc_mutex);
			rxecc_devices_unlock();
			cond_resched();
			rxecc_devices_lock();
			mutex_lock(&rxecc_cc_mutex);
			goto again;
		}
		if (cb->args[2])
			break;
		cb->args[0]++;
		cb->args[1] = 0;
	}
out:
	mutex_unlock(&rxecc_cc_mutex);
	rxecc_devices_unlock();
	if (err == -EMSGSIZE && skb->len)
		return skb->len;
	/* A named device that is done: end the dump. */
	if (!err && cb->args[2])
		cb->args[0] = U32_MAX;
	return err ?: skb->len;
}

static const struct genl_ops rxecc_nl_ops[] = {
	{
		.cmd = RXECC_CMD_DEV_GET,
		.doit = rxecc_nl_dev_get,
		.dumpit = rxecc_nl_dev_dump,
		.policy = rxecc_nl_dev_policy,
		.maxattr = ARRAY_SIZE(rxecc_nl_dev_policy) - 1,
	},
	{
		.cmd = RXECC_CMD_DEV_SET,
		.doit = rxecc_nl_dev_set,
		.policy = rxecc_nl_set_policy,
		.maxattr = ARRAY_SIZE(rxecc_nl_set_policy) - 1,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = RXECC_CMD_DEFAULTS_GET,
		.doit = rxecc_nl_defaults_get,
	},
	{
		.cmd = RXECC_CMD_DEFAULTS_SET,
		.doit = rxecc_nl_defaults_set,
		.policy = rxecc_nl_defaults_policy,
		.maxattr = ARRAY_SIZE(rxecc_nl_defaults_policy) - 1,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = RXECC_CMD_STATS_GET,
		.doit = rxecc_nl_stats_get,
		.dumpit = rxecc_nl_stats_dump,
		.policy = rxecc_nl_dev_policy,
		.maxattr = ARRAY_SIZE(rxecc_nl_dev_policy) - 1,
	},
	{
		.cmd = RXECC_CMD_STATS_RESET,
		.doit = rxecc_nl_reset,
		.policy = rxecc_nl_dev_policy,
		.maxattr = ARRAY_SIZE(rxecc_nl_dev_policy) - 1,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = RXECC_CMD_QP_GET,
		.start = rxecc_nl_qp_dump_start,
		.dumpit = rxecc_nl_qp_dump,
		.done = rxecc_nl_qp_dump_done,
		.policy = rxecc_nl_dev_policy,
		.maxattr = ARRAY_SIZE(rxecc_nl_dev_policy) - 1,
	},
};

/*
 * parallel_ops: every operation takes the locks it needs itself, and the
 * genl mutex, which the genl core would otherwise hold around each call,
 * would make a long QP dump (thousands of QPs, few of them the reader's)
 * hold back every other genl family's requests, in every namespace.
 */
static struct genl_family rxecc_nl_family = {
	.name = RXECC_GENL_NAME,
	.version = RXECC_GENL_VERSION,
	.netnsok = true,
	.parallel_ops = true,
	.module = THIS_MODULE,
	.ops = rxecc_nl_ops,
	.n_ops = ARRAY_SIZE(rxecc_nl_ops),
	.mcgrps = rxecc_nl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(rxecc_nl_mcgrps),
};

int rxecc_nl_init(void)
{
	const struct rxecc_dcqcn_param_desc *d;
	unsigned int i;

	for (i = 0; i < RXECC_DCQCN_NUM_PARAMS; i++) {
		d = &rxecc_dcqcn_param_descs[i];
		rxecc_nl_ranges[i].min = d->min;
		rxecc_nl_ranges[i].max = d->max;
		snprintf(rxecc_nl_range_msg[i], sizeof(rxecc_nl_range_msg[i]),
			 "%s: out of range %u..%u %s", d->name, d->min, d->max,
			 d->unit);
		if (rxecc_dcqcn_param_base(i) != i)
			snprintf(rxecc_nl_twice_msg[i], sizeof(rxecc_nl_twice_msg[i]),
				 "%s and %s: one rate, give one of the two", d->name,
				 rxecc_dcqcn_param_descs[rxecc_dcqcn_param_base(i)].name);
	}
	return genl_register_family(&rxecc_nl_family);
}

void rxecc_nl_exit(void)
{
	genl_unregister_family(&rxecc_nl_family);
}
