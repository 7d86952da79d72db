// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * rxecc: module identity, module init and exit, and the module's own
 * device registry.
 *
 * rxe unregisters its devices on unload with ib_unregister_driver(), which
 * takes every device with driver id RDMA_DRIVER_RXE, including those of
 * another module with the same id. rxecc keeps a list of the devices it
 * registered and unregisters exactly those: all of them on unload, those of
 * one network namespace when the namespace goes away.
 */
#include <linux/module.h>
#include <linux/mutex.h>
#include <rdma/rdma_netlink.h>
#include <rdma/ib_verbs.h>
#include <net/net_namespace.h>
#include "rxe.h"
#include "rxecc.h"

MODULE_DESCRIPTION("Soft RoCE with ECN/CNP, DCQCN and PFC awareness (derived from rdma_rxe)");
MODULE_ALIAS_RDMA_LINK(RXECC_LINK_TYPE);

static LIST_HEAD(rxecc_devices);
static DEFINE_MUTEX(rxecc_devices_mutex);	/* guards rxecc_devices */

/*
 * Module init, before rxe's (sockets, link type): the defaults, the QP state
 * cache, the generic netlink family and the PFC frame handler. Undone in
 * reverse by rxecc_module_exit(), after rxe's exit removed every device.
 */
int rxecc_module_init(void)
{
	int err;

	rxecc_config_init();
	err = rxecc_qp_cache_init();
	if (err)
		goto err_config;
	err = rxecc_nl_init();
	if (err)
		goto err_cache;
	err = rxecc_pfc_init();
	if (err)
		goto err_nl;
	return 0;

err_nl:
	rxecc_nl_exit();
err_cache:
	rxecc_qp_cache_exit();
err_config:
	rxecc_config_exit();
	return err;
}

void rxecc_module_exit(void)
{
	rxecc_pfc_exit();
	rxecc_nl_exit();
	rxecc_qp_cache_exit();
	rxecc_config_exit();
}

void rxecc_dev_init(struct rxe_dev *rxe, struct net_device *ndev)
{
	INIT_LIST_HEAD(&rxe->cc.node);
	rxe->cc.ndev = ndev;
	rxe->cc.net = dev_net(ndev);
	netdev_hold(ndev, &rxe->cc.ndev_tracker, GFP_KERNEL);
	rxe->cc.ndev_held = true;
	rxecc_pfc_dev_init(rxe);
	rxecc_retry_dev_init(rxe);
}

/*
 * Called before ib_register_device(): takes the namespace's RoCE sockets
 * (binding UDP 4791 there for the first device) and puts the device on the
 * list. After ib_register_device() returns, the device may already be gone
 * again (a concurrent unregistration), so this cannot come later.
 */
int rxecc_dev_registering(struct rxe_dev *rxe)
{
	int err;

	rxecc_dev_speed(rxe);
	err = rxecc_cc_dev_init(rxe);
	if (err)
		return err;
	err = rxecc_net_get(rxe->cc.net, rxe->cc.ndev);
	if (err) {
		rxecc_cc_dev_exit(rxe);
		return err;
	}
	rxe->cc.net_held = true;

	mutex_lock(&rxecc_devices_mutex);
	list_add_tail(&rxe->cc.node, &rxecc_devices);
	mutex_unlock(&rxecc_devices_mutex);
	return 0;
}

/*
 * ib_register_device() has named the device (rxe_enable_driver()): netlink
 * lookups may find it from now on. Before, it is on the list without a
 * name or an index.
 */
void rxecc_dev_registered(struct rxe_dev *rxe)
{
	/* the name and index set before; pairs with rxecc_dev_visible() */
	smp_store_release(&rxe->cc.visible, true);
}

/* On the list and named: a device netlink may show (lock held). */
static bool rxecc_dev_visible(struct rxe_dev *rxe, struct net *net)
{
	/* pairs with rxecc_dev_registered(): then the name is there */
	return net_eq(rxe->cc.net, net) && smp_load_acquire(&rxe->cc.visible);
}

/*
 * Called from rxe_dealloc() (also for a device whose registration failed)
 * and on a registration failure; safe to call twice. The sockets are let go
 * before the device leaves the list: a namespace's exit waits for its
 * devices to leave the list and then releases what is left.
 */
void rxecc_dev_cleanup(struct rxe_dev *rxe)
{
	if (rxe->cc.net_held) {
		rxe->cc.net_held = false;
		rxecc_net_put(rxe->cc.net);
	}
	mutex_lock(&rxecc_devices_mutex);
	list_del_init(&rxe->cc.node);
	mutex_unlock(&rxecc_devices_mutex);
	rxecc_pfc_dev_exit(rxe);
	rxecc_retry_dev_exit(rxe);
	rxecc_cc_dev_exit(rxe);
	if (rxe->cc.ndev_held) {
		rxe->cc.ndev_held = false;
		netdev_put(rxe->cc.ndev, &rxe->cc.ndev_tracker);
	}
}

void rxecc_devices_lock(void)
{
	mutex_lock(&rxecc_devices_mutex);
}

void rxecc_devices_unlock(void)
{
	mutex_unlock(&rxecc_devices_mutex);
}

struct rxe_dev *rxecc_dev_find(struct net *net, const char *name, u32 index)
{
	struct rxe_dev *rxe;

	lockdep_assert_held(&rxecc_devices_mutex);
	list_for_each_entry(rxe, &rxecc_devices, cc.node) {
		if (!rxecc_dev_visible(rxe, net))
			continue;
		if (name ? !strcmp(dev_name(&rxe->ib_dev.dev), name) :
			   rxe->ib_dev.index == index)
			return rxe;
	}
	return NULL;
}

struct rxe_dev *rxecc_dev_next(struct net *net, u32 index)
{
	struct rxe_dev *rxe, *best = NULL;

	lockdep_assert_held(&rxecc_devices_mutex);
	list_for_each_entry(rxe, &rxecc_devices, cc.node) {
		if (!rxecc_dev_visible(rxe, net) || rxe->ib_dev.index < index)
			continue;
		if (!best || rxe->ib_dev.index < best->ib_dev.index)
			best = rxe;
	}
	return best;
}

bool rxecc_owns(const struct ib_device *ibdev)
{
	return ibdev->ops.owner == THIS_MODULE;
}

static struct rxe_dev *rxecc_first_device(struct net *net)
{
	struct rxe_dev *rxe;

	list_for_each_entry(rxe, &rxecc_devices, cc.node)
		if (!net || net_eq(rxe->cc.net, net))
			return rxe;
	return NULL;
}

/*
 * A device on the list has not been deallocated yet (rxe_dealloc() takes it
 * off under the lock), so taking a reference to its struct device under the
 * lock is safe. ib_unregister_device() waits for an unregistration already in
 * progress (netdev removal queues one) and returns after rxe_dealloc() ran.
 * On unload this runs after the link type is unregistered, so no new device
 * can appear.
 */
void rxecc_unregister_devices(struct net *net)
{
	struct rxe_dev *rxe;

	mutex_lock(&rxecc_devices_mutex);
	while ((rxe = rxecc_first_device(net))) {
		get_device(&rxe->ib_dev.dev);
		mutex_unlock(&rxecc_devices_mutex);

		ib_unregister_device(&rxe->ib_dev);

		mutex_lock(&rxecc_devices_mutex);
		/* Deallocated devices are off the list; never spin on one. */
		if (WARN_ON_ONCE(!list_empty(&rxe->cc.node)))
			list_del_init(&rxe->cc.node);
		put_device(&rxe->ib_dev.dev);
	}
	mutex_unlock(&rxecc_devices_mutex);
}
