#!/usr/bin/make -f
# SPDX-License-Identifier: GPL-2.0
#
# The DKMS build of rdma_rxecc.ko and sch_pfc.ko (dkms.conf:
# debian/rxecc-dkms.dkms). DKMS runs it in its copy of /usr/src/rxecc-VERSION:
#
#   dkms.mk derive KVER=<kernel>                  PRE_BUILD: its output reaches the user
#   make -f dkms.mk KVER=<kernel> KDIR=<headers>  MAKE: its output goes to make.log
#
# It derives the rxe sources for KVER's kernel line as `make` does
# (ci/derive.sh: /usr/src/linux-source-X.Y.tar.xz and patches/X.Y; it names the
# package to install when the tarball is missing, and says so when rxecc has
# no series for the line), then builds both modules with kbuild through the
# top-level Kbuild. Not the top-level Makefile: it builds the userspace (cmake)
# by default and resolves its own KVER, where DKMS gives the kernel.

KVER ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KVER)/build
TOP  := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))

.PHONY: modules derive

modules: derive
	$(MAKE) -C $(KDIR) M=$(TOP) modules

# Always from the linux-source tarball of the kernel's line, whatever KSRC or
# KSRC_TARBALL (derive.sh's overrides for developers) the environment holds.
# The second run (MAKE after PRE_BUILD) finds derive.sh's stamp and returns at once.
derive:
	@env -u KSRC -u KSRC_TARBALL KVER='$(KVER)' RXECC_DERIVED='$(TOP)/build/kernel/rxecc' RXECC_DKMS=1 \
		'$(TOP)/ci/derive.sh'
