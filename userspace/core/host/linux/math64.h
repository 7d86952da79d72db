/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The one kernel helper of <linux/math64.h> the DCQCN core uses, for its
 * host build (drivers/infiniband/sw/rxecc/rxecc_dcqcn.c compiled into the
 * tool, the simulation and the unit tests). Only that file sees this
 * directory.
 */
#ifndef RXECC_HOST_LINUX_MATH64_H
#define RXECC_HOST_LINUX_MATH64_H

#include "rxecc_dcqcn_host.h"

static inline u64 div64_u64(u64 dividend, u64 divisor)
{
	return dividend / divisor;
}

#endif /* RXECC_HOST_LINUX_MATH64_H */
