# rxecc: soft-RoCE with ECN/CNP, DCQCN and PFC, derived from the kernel's rxe.
#
#   make deps       install what the build, the guests and the tests need (root)
#   make            derive the rxe sources, build rdma_rxecc.ko and the userspace side
#   make check      deps + build + host unit tests + static checks + guest selftests; ends with
#                   'N passed, N failed'. The static checks (ci/lint.sh, before the guests): W=1 +
#                   sparse build, checkpatch --strict on own files and patches, clang-format,
#                   shellcheck, pyflakes; clang-tidy is make lint's (.ci/run runs it after check)
#   make demo       the congestion lab: a 3:1 incast in four modes, table, plots, checks (docs/lab.md;
#                   SCENARIO=FILE, RUNS=N repeats it and reports the spread, CHECK=1 fails on an
#                   unmet one: ci/demo.sh exits 3, make 2)
#   make lab-mutants    the lab's mechanisms broken one at a time, their expectations required to fail (DCQCN
#                   that cannot cut, no PFC at the switch, no watchdog, one ECMP uplink) and
#                   each scenario unbroken; docs/lab.md (not in check: about 20 minutes)
#   make bench      rdma_rxecc against stock rdma_rxe in one guest boot (ratios, JSON)
#   make profile    one trial of the bench with perf around every client: out/profile/profile.md
#   make soak       the congestion workload for SOAK_TIME s (default 600), reports what grew (not in check)
#   make lint       W=1 + sparse build, checkpatch, clang-format, clang-tidy, shellcheck,
#                   pyflakes (all but clang-tidy also in check)
#   make kernel-debug   the debug guest kernel (KASAN, UBSAN, lockdep, kmemleak, fault
#                   injection), cached outside the repo (RXECC_CACHE, default ~/.cache/rxecc)
#   make check-debug    the guest selftests on it, failing on any report (not in check)
#   make shell      interactive guest with rdma_rxecc loaded and an rxecc device up
#   make install / uninstall    the modules (rdma_rxecc, sch_pfc) for the guest kernel, the rxecc tool
#                   (PREFIX, default /usr/local), its man page and completion
#   make check-packages   deps + make deb + a guest that installs the packages, has DKMS build
#                   the modules, loads them by their aliases, runs perftest and purges them
#                   (selftests/rxecc/packages.sh; not in check: minutes of DKMS under TCG)
#   make deb        the Debian packages rxecc-dkms (the modules through DKMS) and rxecc-utils
#                   (the tool) in build/deb/, with dpkg-buildpackage and lintian (ci/deb.sh;
#                   installs the packaging tools and Build-Depends when missing, root)
#   make clean / distclean    remove build products / all of build/
#
# Variables: OUT (where demo, bench and soak write; default out/), PREFIX, DESTDIR
# (make install), KSRC (unpacked kernel tree to derive from; default: the
# linux-source-X.Y tarball of the kernel line), KVER (the kernel to build for
# and boot the guests with: a version, or a line such as 6.12 for its newest
# installed kernel; default: the one linux-image-amd64 installed, Debian 12's
# 6.1; `make deps KVER=6.12` installs a line), KDIR (headers to build against;
# default: /lib/modules/$KVER/build), W, C (kbuild's warning level and sparse).

TOP        := $(CURDIR)
# KVER as given (make deps KVER=6.12 installs that line), then as ci/kver.sh
# resolves it (a line to its newest installed kernel; none: Debian 12's 6.1).
KVER_ARG   := $(KVER)
KVER_REAL  := $(shell KVER='$(KVER)' $(TOP)/ci/kver.sh 2>/dev/null)
ifneq ($(KVER_REAL),)
override KVER := $(KVER_REAL)
endif
KDIR       ?= /lib/modules/$(KVER)/build
BUILD      := $(TOP)/build
DERIVED    := $(BUILD)/kernel/rxecc
MODULE     := $(DERIVED)/rdma_rxecc.ko
UBUILD     := $(BUILD)/userspace
JOBS       ?= $(shell nproc)
OUT        ?= $(TOP)/out
DESTDIR    ?=
export KSRC KVER

.PHONY: all deps derive module userspace check check-host check-guest bench profile demo lab-mutants soak \
	shell install uninstall deb check-packages clean distclean lint kernel-debug check-debug

all: module userspace

deps:
	@KVER='$(KVER_ARG)' $(TOP)/ci/deps.sh

derive:
	@$(TOP)/ci/derive.sh

module: derive
	@test -d "$(KDIR)" || { echo "make: no kernel headers at KDIR=$(KDIR) (run 'make deps')" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(TOP) -j$(JOBS) modules

# W=1 + sparse build, checkpatch on own files and patches, clang-format/tidy,
# shellcheck and pyflakes.
lint: userspace
	@$(TOP)/ci/lint.sh

userspace:
	@cmake -S $(TOP)/userspace -B $(UBUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(UBUILD) -j$(JOBS) -- --no-print-directory

check-host: userspace
	@$(TOP)/ci/host-tests.sh $(UBUILD)

check-guest: module
	@$(TOP)/ci/selftests.sh

check: deps
	@$(MAKE) --no-print-directory all
	@$(TOP)/ci/check.sh

kernel-debug: deps
	@$(TOP)/ci/kernel-debug.sh

check-debug: deps
	@$(MAKE) --no-print-directory all
	@$(TOP)/ci/check-debug.sh

bench: deps
	@$(MAKE) --no-print-directory all
	@$(TOP)/ci/bench.sh $(OUT)

# One trial of the bench with every client under perf: out/profile/profile.md.
profile: deps
	@$(MAKE) --no-print-directory all
	@PERF=1 TRIALS=$(or $(TRIALS),1) $(TOP)/ci/bench.sh $(OUT)/profile

# The lab's variables, passed to ci/demo.sh only when given on make's command
# line (make would take an exported SENDERS or RATE from the environment).
LAB_VARS   := SCENARIO RUNS CHECK SENDERS RATE DURATION PROFILE MODES
lab_args    = $(foreach v,$(LAB_VARS),$(if $(filter command line,$(origin $(v))),'$(v)=$(subst ','\'',$($(v)))'))

demo: deps
	@$(MAKE) --no-print-directory all
	@$(TOP)/ci/demo.sh $(OUT) $(lab_args)

# The lab's mechanisms broken one at a time, their expectations required to fail, and each
# scenario unbroken (ci/lab-mutants.sh; not in check: about 20 minutes).
lab-mutants: deps
	@$(MAKE) --no-print-directory all
	@$(TOP)/ci/lab-mutants.sh $(OUT)

soak: deps
	@$(MAKE) --no-print-directory all
	@$(TOP)/ci/soak.sh $(OUT)

shell: module
	@$(TOP)/ci/vm.sh --interactive --name shell --smp 2 -- $(TOP)/ci/guest/shell.sh

# Install the built modules for the guest kernel under extra/ (debug info
# stripped) and run depmod, so that `rdma link add ... type rxecc` loads
# rdma_rxecc by its alias and `tc qdisc add ... pfc` loads sch_pfc by its
# name; and the rxecc tool with its man page and bash completion under
# PREFIX. Run `make` first; DESTDIR installs into another root.
PREFIX     ?= /usr/local
INSTALLED  := $(DESTDIR)/lib/modules/$(KVER)/extra/rdma_rxecc.ko
PFC_MODULE := $(TOP)/net/sched/sch_pfc.ko
INSTALLED_PFC := $(DESTDIR)/lib/modules/$(KVER)/extra/sch_pfc.ko
TOOL_FILES := $(DESTDIR)$(PREFIX)/sbin/rxecc \
	$(DESTDIR)$(PREFIX)/share/man/man8/rxecc.8 \
	$(DESTDIR)$(PREFIX)/share/bash-completion/completions/rxecc
install:
	@test -f $(MODULE) || { echo "make install: $(MODULE) is not built (run 'make' first)" >&2; exit 1; }
	@test -x $(UBUILD)/rxecc || { echo "make install: $(UBUILD)/rxecc is not built (run 'make' first)" >&2; exit 1; }
	@test -f $(PFC_MODULE) || { echo "make install: $(PFC_MODULE) is not built (run 'make' first)" >&2; exit 1; }
	@v=$$(modinfo -F vermagic $(MODULE) | cut -d' ' -f1); [ "$$v" = "$(KVER)" ] || \
		{ echo "make install: $(MODULE) is built for $$v, not for KVER=$(KVER) (run 'make KVER=$(KVER)' first)" >&2; exit 1; }
	install -D -m 644 $(MODULE) $(INSTALLED)
	strip --strip-debug $(INSTALLED)
	install -D -m 644 $(PFC_MODULE) $(INSTALLED_PFC)
	strip --strip-debug $(INSTALLED_PFC)
	depmod $(if $(DESTDIR),-b $(DESTDIR)) $(KVER)
	install -D -m 755 $(UBUILD)/rxecc $(DESTDIR)$(PREFIX)/sbin/rxecc
	install -D -m 644 $(TOP)/userspace/tool/rxecc.8 $(DESTDIR)$(PREFIX)/share/man/man8/rxecc.8
	install -D -m 644 $(TOP)/userspace/tool/rxecc.bash-completion \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/rxecc

uninstall:
	rm -f $(INSTALLED) $(INSTALLED_PFC) $(TOOL_FILES)
	depmod $(if $(DESTDIR),-b $(DESTDIR)) $(KVER)

deb:
	@$(TOP)/ci/deb.sh

check-packages: deps
	@$(MAKE) --no-print-directory deb
	@RXECC_TESTS_LIST=$(TOP)/selftests/rxecc/tests-packages.list $(TOP)/ci/check-packages.sh

clean:
	-test -d $(DERIVED) && $(MAKE) -C $(KDIR) M=$(TOP) clean
	rm -rf $(UBUILD)

distclean:
	rm -rf $(BUILD)
