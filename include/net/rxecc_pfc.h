/* SPDX-License-Identifier: GPL-2.0 */
/*
 * IEEE 802.1Qbb priority flow control frames, shared by the rxecc endpoint
 * (rdma_rxecc.ko) and the switch-port qdisc (sch_pfc.ko).
 *
 *   DA 01:80:C2:00:00:01, SA, EtherType 0x8808 (MAC control),
 *   opcode 0x0101, class-enable vector (16 bits, bit p = priority p, the
 *   upper 8 zero), 8 x 16-bit pause times (priority 0 first) in quanta of
 *   512 bit times, zero padding to the 60-byte minimum frame.
 *
 * The 802.3x PAUSE (opcode 0x0001, one time for the whole link) is parsed
 * as a frame that pauses every priority.
 *
 * A MAC honours MAC control frames only from its link partner: the
 * destination is the reserved group address, which no bridge forwards, and
 * the frame is never VLAN-tagged (the stack delivers a frame with a VLAN ID
 * to a VLAN device, or as one for another host if there is none; a
 * priority tag, VID 0, it strips as from any frame). Anything else is not a
 * pause for this port, whatever its opcode says.
 */
#ifndef _NET_RXECC_PFC_H
#define _NET_RXECC_PFC_H

#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/if_ether.h>
#include <linux/if_vlan.h>
#include <linux/math64.h>
#include <linux/netdevice.h>
#include <linux/pkt_sched.h>
#include <linux/skbuff.h>
#include <net/rtnetlink.h>
#include <net/rxecc_pfc_refresh.h>

#define PFC_OPCODE		0x0101
#define PFC_OPCODE_PAUSE	0x0001
#define PFC_NUM_PRIO		8
/* opcode, class-enable vector, eight times */
#define PFC_BODY_LEN		(2 + 2 + 2 * PFC_NUM_PRIO)

static const u8 pfc_group_addr[ETH_ALEN] __aligned(2) = {
	0x01, 0x80, 0xc2, 0x00, 0x00, 0x01
};

struct pfc_frame {
	u8 enable;			/* bit p: time[p] is valid */
	u16 time[PFC_NUM_PRIO];		/* quanta; 0 = resume now (XON) */
};

/*
 * A macvlan or ipvlan device (their taps too): one of several children of
 * one link, which is the lower device's.
 */
static inline bool pfc_dev_is_link_child(const struct net_device *dev)
{
	const char *kind = dev->rtnl_link_ops ? dev->rtnl_link_ops->kind : "";

	return netif_is_macvlan(dev) || !strcmp(kind, "ipvlan") || !strcmp(kind, "ipvtap");
}

/*
 * Parse the MAC control frame in @skb (data at the opcode, as a packet_type
 * handler sees it). Returns 0, -EOPNOTSUPP for another MAC control opcode,
 * -EPERM for a frame not from the link partner (another destination, a
 * frame for another host, one that came in on a VLAN device), or -EINVAL
 * for a malformed PFC frame (short, or upper vector bits set).
 */
static inline int pfc_frame_parse(const struct sk_buff *skb, struct pfc_frame *f)
{
	__be16 body[PFC_BODY_LEN / 2];
	u16 op, cev;
	int p;

	if (!skb_mac_header_was_set(skb) || skb_mac_header_len(skb) < ETH_HLEN ||
	    !ether_addr_equal_unaligned(eth_hdr(skb)->h_dest, pfc_group_addr) ||
	    skb->pkt_type == PACKET_OTHERHOST || is_vlan_dev(skb->dev))
		return -EPERM;
	if (skb_copy_bits(skb, 0, body, sizeof(u16)))
		return -EINVAL;
	op = be16_to_cpu(body[0]);
	if (op == PFC_OPCODE_PAUSE) {
		if (skb_copy_bits(skb, 0, body, 2 * sizeof(u16)))
			return -EINVAL;
		f->enable = 0xff;
		for (p = 0; p < PFC_NUM_PRIO; p++)
			f->time[p] = be16_to_cpu(body[1]);
		return 0;
	}
	if (op != PFC_OPCODE)
		return -EOPNOTSUPP;
	if (skb_copy_bits(skb, 0, body, sizeof(body)))
		return -EINVAL;
	cev = be16_to_cpu(body[1]);
	if (cev & 0xff00)
		return -EINVAL;
	f->enable = cev;
	for (p = 0; p < PFC_NUM_PRIO; p++)
		f->time[p] = be16_to_cpu(body[2 + p]);
	return 0;
}

/*
 * A PFC frame from @dev: priorities in @enable get @quanta (0 = XON), the
 * others are not enabled. NULL if out of memory.
 */
static inline struct sk_buff *pfc_frame_build(struct net_device *dev, u8 enable,
					      u8 xoff, u16 quanta)
{
	struct sk_buff *skb;
	struct ethhdr *eth;
	__be16 *body;
	int p;

	skb = alloc_skb(LL_RESERVED_SPACE(dev) + ETH_ZLEN, GFP_ATOMIC);
	if (!skb)
		return NULL;
	skb_reserve(skb, LL_RESERVED_SPACE(dev));
	eth = skb_put_zero(skb, ETH_ZLEN);
	ether_addr_copy(eth->h_dest, pfc_group_addr);
	ether_addr_copy(eth->h_source, dev->dev_addr);
	eth->h_proto = htons(ETH_P_PAUSE);
	body = (__be16 *)(eth + 1);
	body[0] = htons(PFC_OPCODE);
	body[1] = htons(enable);
	for (p = 0; p < PFC_NUM_PRIO; p++)
		if (enable & xoff & BIT(p))
			body[2 + p] = htons(quanta);
	skb_reset_mac_header(skb);
	skb->dev = dev;
	skb->protocol = htons(ETH_P_PAUSE);
	skb->priority = TC_PRIO_CONTROL;
	return skb;
}

/* Add priority @p to the PFC frame @skb built by pfc_frame_build(). */
static inline void pfc_frame_add(struct sk_buff *skb, int p, bool xoff, u16 quanta)
{
	__be16 *body = (__be16 *)(eth_hdr(skb) + 1);

	body[1] |= htons(BIT(p));
	body[2 + p] = xoff ? htons(quanta) : 0;
}

/*
 * May a switch port send PFC frames out of @dev, the port traffic came in
 * from? Only out of an Ethernet link: not a bridge (a PFC frame is link
 * local; the bridge's ports are the links), not a tunnel (it would carry
 * the frame to its remote end), nothing without a MAC.
 */
static inline bool pfc_port_dev_ok(const struct net_device *dev)
{
	const char *kind = dev->rtnl_link_ops ? dev->rtnl_link_ops->kind : "";

	return dev->type == ARPHRD_ETHER && !(dev->flags & IFF_LOOPBACK) &&
	       dev->addr_len == ETH_ALEN && !netif_is_bridge_master(dev) &&
	       strcmp(kind, "vxlan") && strcmp(kind, "geneve") &&
	       strcmp(kind, "gretap") && strcmp(kind, "ip6gretap");
}

#endif /* _NET_RXECC_PFC_H */
