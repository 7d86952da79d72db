/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How long a PFC pause lasts, and how often a sender of PFC refreshes an
 * XOFF: at a switch port (sch_pfc) and at an endpoint (rdma_rxecc).
 *
 * Plain C, no kernel API: both modules and the host unit tests
 * (userspace/tests/pfc_refresh_test.cpp) compile this same code.
 *
 * A sender refreshes an XOFF before it lapses, at half its pause time, as
 * switches and NICs do (in hardware). In software each frame costs CPU
 * time, and the pause time comes from options a namespace's administrator
 * sets: `quanta 1 link_speed 1000000` made it 0.5 ns, and the refresh timer
 * re-armed at once for as long as a port stayed above XON. So the interval
 * has floors:
 *  - a switch port (any quanta, any link speed): 1 ms, and 4 packet times
 *    at the port's rate (a refresh per packet time or so is all a queue
 *    can use). A pause shorter than that lapses between refreshes.
 *  - an endpoint (always 65535 quanta): 100 us, which is half the pause up
 *    to 167 Gbit/s and still below the pause up to 335 Gbit/s, so that a
 *    pause stays continuous at every speed up to that; at 1 Tbit/s (33.5 us
 *    pauses) it lapses, and the refreshes cost 10,000 frames a second at
 *    most.
 */
#ifndef RXECC_PFC_REFRESH_H
#define RXECC_PFC_REFRESH_H

#ifdef __KERNEL__
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/types.h>
#else
#include "rxecc_pfc_refresh_host.h"
#endif

#define PFC_QUANTUM_BITS	512	/* one quantum: 512 bit times */
#define PFC_QUANTA_MAX		0xffff
#define PFC_NS_PER_S		1000000000ULL

#define PFC_PORT_REFRESH_MIN_NS		1000000ULL	/* 1 ms */
#define PFC_PORT_REFRESH_PACKETS	4
#define PFC_ENDPOINT_REFRESH_MIN_NS	100000ULL	/* 100 us */

/* Nanoseconds that @quanta pause a link of @mbps Mbit/s. */
static inline u64 pfc_quanta_ns(u32 quanta, u32 mbps)
{
	return div64_u64((u64)quanta * PFC_QUANTUM_BITS * 1000, mbps ? mbps : 1);
}

/*
 * A switch port's refresh interval: half the pause of @quanta at @link_speed,
 * at least PFC_PORT_REFRESH_MIN_NS and PFC_PORT_REFRESH_PACKETS times a
 * @frame_bytes packet at @rate_bps (at the link speed without a rate; at
 * most a second for that term).
 */
static inline u64 pfc_port_refresh_ns(u32 quanta, u32 link_speed, u64 rate_bps,
				      u64 frame_bytes)
{
	u64 bps = rate_bps ? rate_bps : (u64)(link_speed ? link_speed : 1) * 1000000;
	u64 bits = min_t(u64, frame_bytes * 8 * PFC_PORT_REFRESH_PACKETS, 1ULL << 32);
	u64 pkts = min_t(u64, div64_u64(bits * PFC_NS_PER_S, bps), PFC_NS_PER_S);
	u64 half = pfc_quanta_ns(quanta, link_speed) / 2;

	return max_t(u64, max_t(u64, half, PFC_PORT_REFRESH_MIN_NS), pkts);
}

/* An endpoint's refresh interval: its XOFF carries PFC_QUANTA_MAX. */
static inline u64 pfc_endpoint_refresh_ns(u32 link_speed)
{
	return max_t(u64, pfc_quanta_ns(PFC_QUANTA_MAX, link_speed) / 2,
		     PFC_ENDPOINT_REFRESH_MIN_NS);
}

#endif /* RXECC_PFC_REFRESH_H */
