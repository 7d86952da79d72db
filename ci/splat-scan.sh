#!/bin/bash
# Fail (exit 1) if any of the given guest logs holds a kernel splat: an oops,
# BUG, WARNING, lockdep, KASAN/KMSAN/UBSAN, refcount or list corruption
# report, a hung task, a soft or hard lockup, a kmemleak report or a panic.
# Prints each offending line with its file.
set -u
pattern='Oops|BUG:|WARNING:|------------\[ cut here \]|Kernel panic|general protection fault|'\
'possible recursive locking|possible circular locking|inconsistent lock state|'\
'lock held when returning|suspicious RCU usage|lockdep|KASAN:|KMSAN:|UBSAN:|'\
'refcount_t:|list_add corruption|list_del corruption|list_add_tail corruption|'\
'unreferenced object|kmemleak:.*new suspected|blocked for more than|soft lockup|hard LOCKUP|'\
'Call Trace:|ODEBUG:|double free|use-after-free|stack-protector'
# Between "rxecc-fault: injection on" and "... off" (fault.sh, in the kernel
# log) allocations fail on purpose, and the kernel reports an allocation that
# fails without __GFP_NOWARN with a stack trace (warn_alloc: "page allocation
# failure:", "vmalloc error:"): those reports, up to the end of their trace,
# are not splats. Anything else in the window still is.
numbered() {
	awk '/rxecc-fault: injection on/ { inj = 1 } /rxecc-fault: injection off/ { inj = 0 }
		inj && /(page allocation failure|vmalloc error): / { skip = 1 }
		skip { if (/<\/TASK>/) skip = 0; next }
		{ print NR ":" $0 }' "$1"
}
found=0
for f in "$@"; do
	[ -f "$f" ] || continue
	# "traps: prog[pid] general protection fault ..." is a user-space crash
	# the kernel reports, not a kernel splat; "rcu: RCU lockdep checking is
	# enabled" and the like are a debug kernel's boot banner.
	if numbered "$f" | grep -aE "$pattern" |
		grep -avE '\] traps: |: segfault at |\] rcu: .* is enabled\.?$' >/tmp/splat.$$; then
		found=1
		sed "s|^|splat: $f:|" /tmp/splat.$$ | head -n 20 >&2
	fi
done
rm -f /tmp/splat.$$
exit $found
