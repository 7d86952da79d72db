/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The kernel's fixed-width type names for a host build of the DCQCN core
 * (drivers/infiniband/sw/rxecc/rxecc_dcqcn.c). The module build includes
 * <linux/types.h> instead.
 */
#ifndef RXECC_DCQCN_HOST_H
#define RXECC_DCQCN_HOST_H

#include <stdbool.h> /* NOLINT(modernize-deprecated-headers): a C header */
#include <stddef.h>  /* NOLINT(modernize-deprecated-headers): a C header */
#include <stdint.h>  /* NOLINT(modernize-deprecated-headers): a C header */

typedef uint8_t u8;   /* NOLINT(modernize-use-using): a C header */
typedef uint32_t u32; /* NOLINT(modernize-use-using): a C header */
typedef uint64_t u64; /* NOLINT(modernize-use-using): a C header */

#endif /* RXECC_DCQCN_HOST_H */
