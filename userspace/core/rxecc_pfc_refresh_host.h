/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What <net/rxecc_pfc_refresh.h> takes from the kernel, for a host build
 * (userspace/tests/pfc_refresh_test.cpp): the fixed-width type names and
 * the kernel's 64-bit division and typed min/max.
 */
#ifndef RXECC_PFC_REFRESH_HOST_H
#define RXECC_PFC_REFRESH_HOST_H

#include "rxecc_dcqcn_host.h"

static inline u64 div64_u64(u64 a, u64 b) { return a / b; }
static inline u64 pfc_host_max(u64 a, u64 b) { return a > b ? a : b; }
static inline u64 pfc_host_min(u64 a, u64 b) { return a < b ? a : b; }
/* (only ever used with u64 here) */
#define max_t(t, a, b) pfc_host_max((a), (b))
#define min_t(t, a, b) pfc_host_min((a), (b))

#endif /* RXECC_PFC_REFRESH_HOST_H */
