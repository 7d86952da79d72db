// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * rxecc: module identity and the module's own device registry.
 *
 * rxe unregisters its devices on unload with ib_unregister_driver(), which
 * takes every device with driver id RDMA_DRIVER_RXE, including those of
 * another module with the same id. rxecc keeps a list of the devices it
 * registered and unregisters exactly those.
 */
#include <linux/module.h>
#include <linux/mutex.h>
#include <rdma/rdma_netlink.h>
#include <rdma/ib_verbs.h>
#include "rxe.h"
#include "rxecc.h"

MODULE_DESCRIPTION("Soft RoCE with ECN/CNP, DCQCN and PFC awareness (derived from rdma_rxe)");
MODULE_ALIAS_RDMA_LINK(RXECC_LINK_TYPE);

static LIST_HEAD(rxecc_devices);
static DEFINE_MUTEX(rxecc_devices_lock);	/* guards rxecc_devices */

void rxecc_dev_init(struct rxe_dev *rxe)
{
	INIT_LIST_HEAD(&rxe->cc.node);
}

/* Called before ib_register_device(): after it returns, the device may
 * already be gone again (a concurrent unregistration).
 */
void rxecc_dev_registering(struct rxe_dev *rxe)
{
	mutex_lock(&rxecc_devices_lock);
	list_add_tail(&rxe->cc.node, &rxecc_devices);
	mutex_unlock(&rxecc_devices_lock);
}

/* Called from rxe_dealloc(), and when registration failed. */
void rxecc_dev_cleanup(struct rxe_dev *rxe)
{
	mutex_lock(&rxecc_devices_lock);
	list_del_init(&rxe->cc.node);
	mutex_unlock(&rxecc_devices_lock);
}

bool rxecc_owns(const struct ib_device *ibdev)
{
	return ibdev->ops.owner == THIS_MODULE;
}

/*
 * Unregister every device of this module. Called on unload after the link
 * type is unregistered, so no new device can appear. A device on the list
 * has not been deallocated yet (rxe_dealloc() takes it off under the lock),
 * so taking a reference to its struct device under the lock is safe.
 * ib_unregister_device() waits for an unregistration already in progress
 * (netdev removal queues one) and returns once rxe_dealloc() has run.
 */
void rxecc_unregister_all(void)
{
	struct rxe_dev *rxe;

	mutex_lock(&rxecc_devices_lock);
	while ((rxe = list_first_entry_or_null(&rxecc_devices, struct rxe_dev,
					       cc.node))) {
		list_del_init(&rxe->cc.node);
		get_device(&rxe->ib_dev.dev);
		mutex_unlock(&rxecc_devices_lock);

		ib_unregister_device(&rxe->ib_dev);
		put_device(&rxe->ib_dev.dev);

		mutex_lock(&rxecc_devices_lock);
	}
	mutex_unlock(&rxecc_devices_lock);
}

int rxecc_report_init_error(int err)
{
	if (err == -EADDRINUSE)
		pr_err("UDP port %u is already bound: another soft-RoCE driver holds it (is rdma_rxe loaded? unload it with 'modprobe -r rdma_rxe')\n",
		       ROCE_V2_UDP_DPORT);
	else
		pr_err("initialisation failed: %d\n", err);
	return err;
}
