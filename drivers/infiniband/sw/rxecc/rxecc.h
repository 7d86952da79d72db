/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * rxecc: what rdma_rxecc adds to the rxe driver it is derived from.
 *
 * The rxe sources are extracted from the kernel tree at build time and get
 * small hooks from the quilt series in patches/; every hook calls into the
 * functions declared here, so the logic stays in rxecc's own files.
 */
#ifndef RXECC_H
#define RXECC_H

#include <linux/list.h>

/* `rdma link add NAME type rxecc netdev DEV` */
#define RXECC_LINK_TYPE "rxecc"

struct rxe_dev;
struct ib_device;

/* State rxecc keeps in every struct rxe_dev (field `cc`). */
struct rxecc_dev {
	struct list_head node;	/* on the module's own device list */
};

/* Device lifetime hooks (rxe.c, rxe_verbs.c). */
void rxecc_dev_init(struct rxe_dev *rxe);
void rxecc_dev_registering(struct rxe_dev *rxe);
void rxecc_dev_cleanup(struct rxe_dev *rxe);

/*
 * True if @ibdev belongs to this module. rxe and rxecc share the driver id
 * RDMA_DRIVER_RXE (librxe binds on it), so a lookup by driver id can return
 * a device of the in-tree rdma_rxe; it must never be taken for ours.
 */
bool rxecc_owns(const struct ib_device *ibdev);

/* Module init/exit hooks (rxe.c). */
int rxecc_report_init_error(int err);
void rxecc_unregister_all(void);

#endif /* RXECC_H */
