// The XOFF refresh intervals of include/net/rxecc_pfc_refresh.h, the code
// sch_pfc and rdma_rxecc compile: each floor is shown to be the one that
// binds somewhere, so that removing it fails a test.
extern "C" {
#include "net/rxecc_pfc_refresh.h"
}

#include <gtest/gtest.h>

#include <cstdint>

namespace {

constexpr uint64_t kMs = 1000000;
constexpr uint64_t kFrame = 1500 + 14;  // an Ethernet MTU and header

TEST(PfcRefresh, PauseTimeOfQuanta) {
    EXPECT_EQ(pfc_quanta_ns(PFC_QUANTA_MAX, 10000), 3355392U);  // 3.36 ms at 10 Gbit/s
    EXPECT_EQ(pfc_quanta_ns(PFC_QUANTA_MAX, 100000), 335539U);  // 335.5 us at 100 Gbit/s
    EXPECT_EQ(pfc_quanta_ns(1, 1000000), 0U);                   // 0.5 ns: rounds to 0
    EXPECT_EQ(pfc_quanta_ns(1000, 0), 512000000U);              // no speed: taken as 1 Mbit/s
}

TEST(PfcRefresh, PortHalfThePauseWhenItIsLong) {
    // The defaults (65535 quanta at 10 Gbit/s, no rate): half of 3.36 ms.
    EXPECT_EQ(pfc_port_refresh_ns(PFC_QUANTA_MAX, 10000, 0, kFrame), 3355392U / 2);
    // The lab's 25 Mbit/s port: half of 1.34 s.
    EXPECT_EQ(pfc_port_refresh_ns(PFC_QUANTA_MAX, 25, 25000000, kFrame),
              pfc_quanta_ns(PFC_QUANTA_MAX, 25) / 2);
}

TEST(PfcRefresh, PortNeverMoreOftenThanOnceAMillisecond) {
    // quanta 1 at 1 Tbit/s without a rate was 0 ns: the timer storm.
    EXPECT_EQ(pfc_port_refresh_ns(1, 1000000, 0, kFrame), kMs);
    // 65535 quanta at 1 Tbit/s (33.5 us) and a fast rate: the floor too.
    EXPECT_EQ(pfc_port_refresh_ns(PFC_QUANTA_MAX, 1000000, 100000000000ULL, kFrame), kMs);
}

TEST(PfcRefresh, PortNeverMoreOftenThanFourPacketTimes) {
    // quanta 1 at 1 Tbit/s on a 1 Mbit/s port: 4 x 1514 bytes at 1 Mbit/s.
    EXPECT_EQ(pfc_port_refresh_ns(1, 1000000, 1000000, kFrame), 4 * kFrame * 8 * 1000);
    // Without a rate, the packet time is taken at the link speed (1 Mbit/s).
    EXPECT_EQ(pfc_port_refresh_ns(1, 1, 0, kFrame), 4 * kFrame * 8 * 1000);
}

TEST(PfcRefresh, PortPacketTermBoundedAndWithoutOverflow) {
    // 1 bit/s: the packet term stops at a second.
    EXPECT_EQ(pfc_port_refresh_ns(1, 1000000, 1, kFrame), 1000 * kMs);
    // A device's MTU can be INT_MAX (dummy): no overflow, a second at most.
    EXPECT_EQ(pfc_port_refresh_ns(1, 1000000, 1000000, 0x7fffffffULL + 14), 1000 * kMs);
    // ... or the pause's own half when that is longer.
    EXPECT_EQ(pfc_port_refresh_ns(PFC_QUANTA_MAX, 1, 1, kFrame),
              pfc_quanta_ns(PFC_QUANTA_MAX, 1) / 2);
}

TEST(PfcRefresh, EndpointKeepsThePauseUpTo335Gbits) {
    // Half the pause up to 167 Gbit/s (the pause lasts 200 us there), then
    // 100 us: below the pause itself up to 335 Gbit/s, so the link partner
    // never runs between two refreshes.
    for (uint32_t mbps : {1000U, 10000U, 25000U, 100000U, 167000U}) {
        const uint64_t pause = pfc_quanta_ns(PFC_QUANTA_MAX, mbps);
        EXPECT_EQ(pfc_endpoint_refresh_ns(mbps), pause / 2) << mbps << " Mbit/s";
    }
    for (uint32_t mbps : {1000U, 100000U, 200000U, 335000U}) {
        EXPECT_LT(pfc_endpoint_refresh_ns(mbps), pfc_quanta_ns(PFC_QUANTA_MAX, mbps))
            << mbps << " Mbit/s";
    }
}

TEST(PfcRefresh, EndpointNeverMoreOftenThanEvery100us) {
    // 1 Tbit/s: 33.5 us pauses were refreshed every 16.8 us.
    EXPECT_EQ(pfc_endpoint_refresh_ns(1000000), 100000U);
    EXPECT_EQ(pfc_endpoint_refresh_ns(400000), 100000U);
}

}  // namespace
