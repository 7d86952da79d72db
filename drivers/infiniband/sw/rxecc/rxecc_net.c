// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * rxecc: RoCEv2 UDP sockets per network namespace.
 *
 * rxe 6.1 binds UDP port 4791 once, in init_net, when the module loads. rxecc
 * binds it (IPv4 and IPv6) in the namespace of a device's netdev when the
 * first rxecc device appears there, and releases it with the last one. So a
 * device made with `ip netns exec NS rdma link add ...` receives in NS, and
 * the module loads even while another soft-RoCE driver holds the port in
 * some namespace; only a device that would need that same port fails.
 *
 * When a namespace goes away, its netdevs are unregistered first (which
 * queues the unregistration of their rxecc devices); the pernet exit below
 * then waits for those devices to be gone before the sockets are released,
 * so nothing of rxecc outlives the namespace.
 */
#include <linux/module.h>
#include <linux/mutex.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/udp_tunnel.h>
#include "rxe.h"
#include "rxe_loc.h"
#include "rxecc.h"

struct rxecc_net {
	struct mutex lock;	/* guards the fields below */
	struct socket *sk4;
	struct socket *sk6;
	unsigned int users;	/* rxecc devices on netdevs of this namespace */
};

static unsigned int rxecc_net_id __read_mostly;

static struct rxecc_net *rxecc_net(struct net *net)
{
	return net_generic(net, rxecc_net_id);
}

static void rxecc_net_release(struct rxecc_net *rn)
{
	rxe_release_udp_tunnel(rn->sk6);
	rxe_release_udp_tunnel(rn->sk4);
	rn->sk6 = NULL;
	rn->sk4 = NULL;
}

/* Bind UDP 4791 in @net for a device on @ndev, or count one more user. */
int rxecc_net_get(struct net *net, struct net_device *ndev)
{
	struct rxecc_net *rn = rxecc_net(net);
	struct socket *sk;
	int err = 0;

	mutex_lock(&rn->lock);
	if (rn->users) {
		rn->users++;
		goto out;
	}

	sk = rxe_setup_udp_tunnel(net, htons(ROCE_V2_UDP_DPORT), false);
	if (IS_ERR(sk)) {
		err = PTR_ERR(sk);
		goto fail;
	}
	rn->sk4 = sk;

	if (IS_ENABLED(CONFIG_IPV6)) {
		sk = rxe_setup_udp_tunnel(net, htons(ROCE_V2_UDP_DPORT), true);
		if (IS_ERR(sk)) {
			err = PTR_ERR(sk);
			if (err != -EAFNOSUPPORT) {
				rxecc_net_release(rn);
				goto fail;
			}
			pr_warn("IPv6 is not supported, no UDPv6 socket for %s\n",
				netdev_name(ndev));
			err = 0;
		} else {
			rn->sk6 = sk;
		}
	}
	rn->users = 1;
	goto out;

fail:
	if (err == -EADDRINUSE)
		pr_err("%s: UDP port %u is already bound in the network namespace of %s: another soft-RoCE driver holds it (is rdma_rxe loaded with a device in this namespace?)\n",
		       netdev_name(ndev), ROCE_V2_UDP_DPORT, netdev_name(ndev));
	else
		pr_err("%s: cannot create the RoCE UDP sockets: %d\n",
		       netdev_name(ndev), err);
out:
	mutex_unlock(&rn->lock);
	return err;
}

/* One user fewer; the last one releases the sockets. Process context. */
void rxecc_net_put(struct net *net)
{
	struct rxecc_net *rn = rxecc_net(net);

	mutex_lock(&rn->lock);
	if (!WARN_ON(!rn->users) && !--rn->users)
		rxecc_net_release(rn);
	mutex_unlock(&rn->lock);
}

static int __net_init rxecc_net_init_net(struct net *net)
{
	struct rxecc_net *rn = rxecc_net(net);

	mutex_init(&rn->lock);
	return 0;
}

static void __net_exit rxecc_net_exit_net(struct net *net)
{
	struct rxecc_net *rn = rxecc_net(net);

	/* Devices whose netdevs lived here: wait for them to be gone. */
	rxecc_unregister_devices(net);

	mutex_lock(&rn->lock);
	WARN_ON(rn->users);
	rxecc_net_release(rn);
	rn->users = 0;
	mutex_unlock(&rn->lock);
	mutex_destroy(&rn->lock);
}

static struct pernet_operations rxecc_net_ops = {
	.init = rxecc_net_init_net,
	.exit = rxecc_net_exit_net,
	.id = &rxecc_net_id,
	.size = sizeof(struct rxecc_net),
};

int rxecc_net_register(void)
{
	return register_pernet_subsys(&rxecc_net_ops);
}

void rxecc_net_unregister(void)
{
	unregister_pernet_subsys(&rxecc_net_ops);
}
