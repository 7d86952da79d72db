// SPDX-License-Identifier: GPL-2.0
// cx16_flags: does this x86-64 CPU (a guest's emulated one) leave EFLAGS as
// the architecture says around CMPXCHG16B? The instruction sets ZF and leaves
// every other flag bit alone, so after "POPF; ADD; CMPXCHG16B" the only bits
// that can be set are the arithmetic flags, IF and the always-one bit 1.
// QEMU 7.2's TCG computes the flags of CMPXCHG16B from a lazy-flags state it
// did not bring up to date: EFLAGS then holds bits of the ADD's operand (TF,
// DF, IOPL, reserved bits). The guest harness (ci/vm.sh) takes the
// instruction out of the guest's CPU model for that reason.
//
//   cx16_flags [ITERATIONS]
// Exit 0: the flags were right every time, or the CPU has no CMPXCHG16B
// (says which); 1: a wrong EFLAGS (the first few printed); 2: bad usage.
#include <cpuid.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <thread>

namespace {

// the 16 bytes CMPXCHG16B compares and exchanges
struct alignas(16) Pair {
    uint64_t lo = 0;
    uint64_t hi = 0;
};

// Bits CMPXCHG16B may leave set here: CF, PF, AF, ZF, SF, OF; IF; bit 1.
constexpr uint64_t kAllowed = 0x8d5 | 0x200 | 0x2;
// The ADD's operand: DF, IOPL 2 and reserved bits 23, 25, 26 set, TF clear
// (a set TF would end the program with SIGTRAP rather than a report).
constexpr uint64_t kOperand = 0xffff8c4406802000ULL | (1ULL << 10);

// POPF (QEMU ends its translation block there), ADD (the lazy flags state:
// the operand), CMPXCHG16B (with Locked, with the lock prefix), PUSHF.
template <bool Locked>
uint64_t flags_after(Pair& target) {
    uint64_t flags = 0;
    uint64_t rax = 0;
    uint64_t rdx = 0;
    uint64_t sum = 5;

    asm volatile(
        "pushq $0x202\n\tpopfq\n\t"
        "addq %[v], %[s]\n\t"
        ".if %c[locked]\n\tlock\n\t.endif\n\t"
        "cmpxchg16b %[m]\n\t"
        "pushfq\n\tpopq %[f]"
        : [f] "=r"(flags), [m] "+m"(target), "+a"(rax), "+d"(rdx), [s] "+r"(sum)
        : [v] "r"(kOperand), "b"(1ULL), "c"(2ULL), [locked] "i"(Locked ? 1 : 0)
        : "cc", "memory");
    return flags;
}

bool has_cx16() {
    unsigned int eax = 0;
    unsigned int ebx = 0;
    unsigned int ecx = 0;
    unsigned int edx = 0;

    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_CMPXCHG16B) != 0;
}

}  // namespace

int main(int argc, char** argv) {
    long iterations = 100000;

    if (argc > 2 || (argc == 2 && (iterations = std::strtol(argv[1], nullptr, 10)) <= 0)) {
        std::cerr << "usage: cx16_flags [ITERATIONS above 0]\n";
        return 2;
    }
    if (!has_cx16()) {
        std::cout << "cx16_flags: the CPU has no CMPXCHG16B (CPUID.1:ECX.CX16 clear)\n";
        return 0;
    }
    Pair target;
    // A second thread on the same line: the locked form under contention,
    // as the kernel's SLUB allocator runs it.
    std::atomic<bool> stop{false};
    std::jthread other([&stop, &target] {
        while (!stop.load(std::memory_order_relaxed)) {
            flags_after<true>(target);
        }
    });
    long bad = 0;
    for (const bool locked : {false, true}) {
        for (long i = 0; i < iterations; i++) {
            const uint64_t f = locked ? flags_after<true>(target) : flags_after<false>(target);

            if ((f & ~kAllowed) != 0 && bad++ < 3) {
                std::cout << "cx16_flags: " << (locked ? "locked" : "plain")
                          << " CMPXCHG16B, iteration " << i << ": EFLAGS 0x" << std::hex << f
                          << std::dec << "\n";
            }
        }
    }
    stop = true;
    if (bad != 0) {
        std::cout << "cx16_flags: " << bad << " of " << 2 * iterations
                  << " EFLAGS after CMPXCHG16B had bits no CPU sets there\n";
        return 1;
    }
    std::cout << "cx16_flags: EFLAGS right after " << 2 * iterations << " CMPXCHG16B\n";
    return 0;
}
