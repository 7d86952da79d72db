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
#include <linux/types.h>

/* `rdma link add NAME type rxecc netdev DEV` */
#define RXECC_LINK_TYPE "rxecc"

struct rxe_dev;
struct ib_device;
struct net;
struct net_device;
struct socket;

/*
 * State rxecc keeps in every struct rxe_dev (field `cc`). It must stay the
 * LAST member of struct rxe_dev: while the in-tree rdma_rxe is loaded too, its
 * netdev notifier looks devices up by netdev and driver id and can find an
 * rxecc device; it then works on it as on its own struct rxe_dev, which is
 * harmless only as long as every field it knows sits where it expects it.
 */
struct rxecc_dev {
	struct list_head node;	/* on the module's own device list */
	struct net *net;	/* namespace of the netdev (no reference) */
	bool net_held;		/* counted as a user of the namespace's sockets */
};

/* Device lifetime hooks (rxe.c, rxe_verbs.c). */
void rxecc_dev_init(struct rxe_dev *rxe);
int rxecc_dev_registering(struct rxe_dev *rxe);
void rxecc_dev_cleanup(struct rxe_dev *rxe);

/*
 * True if @ibdev belongs to this module. rxe and rxecc share the driver id
 * RDMA_DRIVER_RXE (librxe binds on it), so a lookup by driver id can return
 * a device of the in-tree rdma_rxe; it must never be taken for ours.
 */
bool rxecc_owns(const struct ib_device *ibdev);

/*
 * Unregister the devices of this module whose netdev is in @net (all of them
 * if @net is NULL) and wait until they are gone. Process context.
 */
void rxecc_unregister_devices(struct net *net);

/* Per-namespace RoCE UDP sockets (rxecc_net.c; rxe_net.c's init/exit). */
int rxecc_net_register(void);
void rxecc_net_unregister(void);
int rxecc_net_get(struct net *net, struct net_device *ndev);
void rxecc_net_put(struct net *net);

/* rxe_net.c's UDP tunnel helpers, no longer static. */
struct socket *rxe_setup_udp_tunnel(struct net *net, __be16 port, bool ipv6);
void rxe_release_udp_tunnel(struct socket *sk);

#endif /* RXECC_H */
