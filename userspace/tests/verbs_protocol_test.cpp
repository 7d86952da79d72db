// rxecc-verbs' wire format, message numbers, the server's buffer layout and
// its account of lost and duplicated messages (no RDMA device needed).
#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <vector>

#include "connection.hpp"
#include "options.hpp"
#include "pattern.hpp"
#include "protocol.hpp"
#include "server.hpp"

namespace rxecc::verbs {
namespace {

// The layout on the wire (protocol.hpp asserts each offset): no byte is
// padding the compiler chose.
static_assert(sizeof(Hello) == 32 && kHelloSize == 32);
static_assert(sizeof(Welcome) == 24 && kWelcomeSize == 24);
static_assert(sizeof(Ctl) == 64 && kCtlSize == 64);
static_assert(offsetof(Hello, seed) == 24 && offsetof(Ctl, bad) == 56);

template <size_t N>
std::vector<unsigned> bytes(const std::array<std::byte, N>& a) {
    std::vector<unsigned> v;
    v.reserve(N);
    for (std::byte b : a) {
        v.push_back(std::to_integer<unsigned>(b));
    }
    return v;
}

Hello sample_hello() { return {kMagic, kVersion, 2, 0, 0, 1, 64, 64, 0, 0x0102030405060708ULL}; }

TEST(VerbsProtocol, HelloIsLittleEndianAtItsOffsets) {
    const auto b = bytes(encode(sample_hello()));
    const std::vector<unsigned> want = {
        0x76, 0x63, 0x78, 0x72,               // magic "rxcv", least significant byte first
        1,    2,    0,    0,                  // version, test (ping), only (send), reserved
        1,    0,    0,    0,                  // depth
        64,   0,    0,    0,                  // max_size
        64,   0,    0,    0,                  // size
        0,    0,    0,    0,                  // pad
        8,    7,    6,    5,    4, 3, 2, 1};  // seed
    EXPECT_EQ(b, want);
}

TEST(VerbsProtocol, HelloRoundTrip) {
    const Hello h{kMagic, kVersion, 1, kAllOps, 0xaa, 256, 1U << 20U, 7, 0, ~uint64_t{0} - 5};
    const auto wire = encode(h);
    const Hello d = decode_hello(wire);
    EXPECT_EQ(d.magic, h.magic);
    EXPECT_EQ(d.version, h.version);
    EXPECT_EQ(d.test, h.test);
    EXPECT_EQ(d.only, h.only);
    EXPECT_EQ(d.reserved, h.reserved);
    EXPECT_EQ(d.depth, h.depth);
    EXPECT_EQ(d.max_size, h.max_size);
    EXPECT_EQ(d.size, h.size);
    EXPECT_EQ(d.pad, h.pad);
    EXPECT_EQ(d.seed, h.seed);
    // rdma_cm may hand over more private data than was sent (padded with
    // zeros): the first 32 bytes are the request.
    std::vector<std::byte> longer(56);
    std::memcpy(longer.data(), wire.data(), wire.size());
    EXPECT_EQ(bytes(encode(decode_hello(longer))), bytes(wire));
    EXPECT_THROW(decode_hello(std::span(wire).first(31)), Error);
}

TEST(VerbsProtocol, WelcomeRoundTripAndBytes) {
    const Welcome w{0x1122334455667788ULL, 0x99aabbccddeeff00ULL, 0x01020304, 131072};
    const auto wire = encode(w);
    EXPECT_EQ(bytes(wire), (std::vector<unsigned>{0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
                                                  0x00, 0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa, 0x99,
                                                  0x04, 0x03, 0x02, 0x01, 0x00, 0x00, 0x02, 0x00}));
    const Welcome d = decode_welcome(wire);
    EXPECT_EQ(d.slots_addr, w.slots_addr);
    EXPECT_EQ(d.read_addr, w.read_addr);
    EXPECT_EQ(d.rkey, w.rkey);
    EXPECT_EQ(d.read_len, w.read_len);
    EXPECT_THROW(decode_welcome(std::span(wire).first(23)), Error);
}

TEST(VerbsProtocol, CtlRoundTripAndCounts) {
    const Counts n{10, 20000, 1, 2, 3, 4};
    const Ctl r = result_ctl(n);
    EXPECT_EQ(r.magic, kMagic);
    EXPECT_EQ(r.kind, Kind::result);
    const auto wire = encode(r);
    const std::vector<unsigned> b = bytes(wire);
    EXPECT_EQ(b[4], 3U);    // kind, little-endian
    EXPECT_EQ(b[16], 10U);  // msgs
    EXPECT_EQ(b[56], 4U);   // bad
    const Ctl d = decode_ctl(wire);
    const Counts m = counts_of(d);
    EXPECT_EQ(d.value, 0U);
    EXPECT_EQ(m.msgs, 10U);
    EXPECT_EQ(m.bytes, 20000U);
    EXPECT_EQ(m.corrupt, 1U);
    EXPECT_EQ(m.lost, 2U);
    EXPECT_EQ(m.dup, 3U);
    EXPECT_EQ(m.bad, 4U);
    EXPECT_FALSE(m.clean());
    EXPECT_TRUE(Counts{}.clean());

    const Ctl fin{kMagic, Kind::fin, 0x0123456789abcdefULL, 0, 0, 0, 0, 0, 0};
    const Ctl f = decode_ctl(encode(fin));
    EXPECT_EQ(f.kind, Kind::fin);
    EXPECT_EQ(f.value, fin.value);
    // A kind this program does not know decodes as such (the receiver
    // refuses it).
    auto odd = encode(fin);
    odd[4] = std::byte{7};
    EXPECT_EQ(static_cast<uint32_t>(decode_ctl(odd).kind), 7U);
    EXPECT_THROW(decode_ctl(std::span(wire).first(63)), Error);
}

// On a little-endian host, the wire bytes are the struct's own bytes: what
// the struct's memcpy sent before the explicit encoding.
TEST(VerbsProtocol, LittleEndianHostSendsTheStruct) {
    if constexpr (std::endian::native != std::endian::little) {
        GTEST_SKIP() << "big-endian host";
    } else {
        const Hello h = sample_hello();
        std::array<std::byte, kHelloSize> raw{};
        std::memcpy(raw.data(), &h, sizeof(h));
        EXPECT_EQ(bytes(encode(h)), bytes(raw));
        const Ctl c{kMagic, Kind::notify, 99, 1, 2, 3, 4, 5, 6};
        std::array<std::byte, kCtlSize> rawc{};
        std::memcpy(rawc.data(), &c, sizeof(c));
        EXPECT_EQ(bytes(encode(c)), bytes(rawc));
    }
}

TEST(VerbsProtocol, CountsJsonKeys) {
    const nlohmann::json j = to_json(Counts{1, 2, 3, 4, 5, 6});
    EXPECT_EQ(
        j.dump(),
        R"({"bad_completions":6,"bytes":2,"corrupt":3,"duplicated":5,"lost":4,"messages":1})");
}

TEST(VerbsProtocol, QpPathJsonKeys) {
    const nlohmann::json j = to_json(QpPath{17, 18, 0xfffff, 40000, 18515});
    EXPECT_EQ(
        j.dump(),
        R"({"cm_dst_port":18515,"cm_src_port":40000,"flow_label":1048575,"qpn":17,"remote_qpn":18})");
}

TEST(VerbsProtocol, WidenPicksTheNearestNumber) {
    constexpr uint64_t k32 = uint64_t{1} << 32U;
    EXPECT_EQ(widen(0, 0), 0U);
    EXPECT_EQ(widen(5, 5), 5U);
    EXPECT_EQ(widen(5, 6), 6U);
    EXPECT_EQ(widen(5, 4), 4U);
    // Across the 32-bit wrap, both ways.
    EXPECT_EQ(widen(k32 - 1, 0), k32);
    EXPECT_EQ(widen(k32 - 1, 1), k32 + 1);
    EXPECT_EQ(widen(k32, 0xffffffffU), k32 - 1);
    EXPECT_EQ(widen(3 * k32 + 2, 0xfffffff0U), 3 * k32 - 16);
    // The bounds: at most 2^31 - 1 ahead, 2^31 behind.
    const uint64_t near = 5 * k32 + 10;
    EXPECT_EQ(widen(near, 10U + 0x7fffffffU), near + 0x7fffffffU);
    EXPECT_EQ(widen(near, 10U + 0x80000000U), near - 0x80000000U);
    // Below 0 and above the largest number it wraps modulo 2^64.
    EXPECT_EQ(widen(0, 0xffffffffU), std::numeric_limits<uint64_t>::max());
    EXPECT_EQ(widen(std::numeric_limits<uint64_t>::max(), 0), 0U);
    // A number 2^32 or more away from `near` is beyond it: the nearest with
    // the same low 32 bits comes back instead.
    EXPECT_EQ(widen(0, static_cast<uint32_t>(k32 + 3)), 3U);
}

TEST(VerbsServer, CheckHello) {
    const Options verify = parse_options({"client", "h", "--count", "1", "--depth", "256"});
    const Options ping =
        parse_options({"client", "h", "--count", "1", "--test", "ping", "--size", "0"});
    const Hello v = check_hello(hello_for(verify));
    EXPECT_EQ(v.only, kAllOps);
    EXPECT_EQ(v.test, 1U);
    EXPECT_EQ(v.size, 0U);
    EXPECT_EQ(v.depth, 256U);
    EXPECT_EQ(v.max_size, 65536U);
    const Hello p = check_hello(hello_for(ping));
    EXPECT_EQ(p.only, static_cast<uint8_t>(Op::send));
    EXPECT_EQ(p.test, 2U);
    EXPECT_EQ(p.max_size, 16U);
    EXPECT_EQ(p.depth, 1U);

    auto bad = [&](auto change) {
        Hello h = hello_for(verify);
        change(h);
        EXPECT_THROW(check_hello(h), Error);
    };
    bad([](Hello& h) { h.magic ^= 1U; });
    bad([](Hello& h) { h.version = 2; });
    bad([](Hello& h) { h.depth = 0; });
    bad([](Hello& h) { h.depth = 257; });
    bad([](Hello& h) { h.max_size = 15; });
    bad([](Hello& h) { h.max_size = (1U << 20U) + 1; });
    bad([](Hello& h) { h.size = h.max_size + 1; });
    bad([](Hello& h) { h.test = 0; });
    bad([](Hello& h) { h.test = 3; });
    bad([](Hello& h) { h.only = 4; });
}

TEST(VerbsServer, LayoutIsContiguousAndDisjoint) {
    Hello h = sample_hello();
    h.depth = 4;
    h.max_size = 1000;
    const ServerLayout l = server_layout(h);
    EXPECT_EQ(l.slot, 1000U);
    EXPECT_EQ(l.read_len, 2000U);
    EXPECT_EQ(l.sq(), 10U);
    EXPECT_EQ(l.slot_off(0), 0U);
    EXPECT_EQ(l.slot_off(3), 3000U);
    EXPECT_EQ(l.slot_off(4), 0U);  // message seq uses slot seq % depth
    EXPECT_EQ(l.read_off(), 4000U);
    EXPECT_EQ(l.recv_off(0), 6000U);
    EXPECT_EQ(l.recv_off(3), 9000U);
    EXPECT_EQ(l.send_off(0), 10000U);
    EXPECT_EQ(l.send_off(9), 19000U);
    EXPECT_EQ(l.send_off(10), 10000U);  // one send buffer per send-queue entry
    EXPECT_EQ(l.total(), 20000U);

    // A slot holds a control message even when messages are smaller.
    h.max_size = 16;
    EXPECT_EQ(server_layout(h).slot, kCtlSize);
    EXPECT_EQ(server_layout(h).read_len, 32U);

    for (const uint32_t depth : {1U, 2U, 16U, 256U}) {
        for (const uint32_t max : {16U, 64U, 65U, 65536U, 1U << 20U}) {
            h.depth = depth;
            h.max_size = max;
            const ServerLayout s = server_layout(h);
            const size_t slot = buf_size_for(max);
            ASSERT_EQ(s.slot, slot);
            ASSERT_EQ(s.read_len, read_len_for(max));
            // slots | READ region | receive buffers | send buffers, end to end
            EXPECT_EQ(s.slot_off(depth - 1) + slot, s.read_off());
            EXPECT_EQ(s.read_off() + s.read_len, s.recv_off(0));
            EXPECT_EQ(s.recv_off(depth - 1) + slot, s.send_off(0));
            EXPECT_EQ(s.send_off(s.sq() - 1) + slot, s.total());
            EXPECT_EQ(s.total(),
                      size_t{depth} * slot + s.read_len + size_t{depth} * slot + s.sq() * slot);
        }
    }
}

// The server-visible messages of `s` from 0 up to (not including) `end`.
std::vector<uint64_t> visible(const Schedule& s, uint64_t end) {
    std::vector<uint64_t> v;
    for (uint64_t q = 0; q < end; ++q) {
        if (s.server_visible(q)) {
            v.push_back(q);
        }
    }
    return v;
}

TEST(VerbsArrivals, InOrder) {
    const Schedule s(5, 4096, 8192);
    const std::vector<uint64_t> v = visible(s, 200);
    ASSERT_GT(v.size(), 100U);
    ASSERT_LT(v.size(), 200U);  // the mix has READs, which the server never sees
    Arrivals a(s);
    EXPECT_EQ(a.expected(), v.front());
    for (const uint64_t q : v) {
        EXPECT_EQ(a.expected(), q);
        EXPECT_TRUE(a.arrive(q));
    }
    a.finish(s.server_visible(200) ? 200 : s.next_visible(200));
    EXPECT_EQ(a.lost(), 0U);
    EXPECT_EQ(a.duplicated(), 0U);
}

TEST(VerbsArrivals, GapIsLostOnlyForVisibleMessages) {
    const Schedule s(5, 4096, 8192);
    const std::vector<uint64_t> v = visible(s, 200);
    Arrivals a(s);
    EXPECT_TRUE(a.arrive(v[0]));
    // v[1] and v[2] never come; the READs between are not the server's.
    EXPECT_TRUE(a.arrive(v[3]));
    EXPECT_EQ(a.lost(), 2U);
    EXPECT_EQ(a.expected(), v[4]);
    // FIN: the client sent up to v[10]; v[4]..v[9] never came.
    a.finish(v[10]);
    EXPECT_EQ(a.lost(), 8U);
    EXPECT_EQ(a.duplicated(), 0U);
}

TEST(VerbsArrivals, RepeatIsDuplicate) {
    const Schedule s(3, 64, 128, Op::send, 64);  // ping: every message visible
    Arrivals a(s);
    EXPECT_TRUE(a.arrive(0));
    EXPECT_TRUE(a.arrive(1));
    EXPECT_FALSE(a.arrive(1));
    EXPECT_FALSE(a.arrive(0));
    EXPECT_EQ(a.duplicated(), 2U);
    EXPECT_EQ(a.expected(), 2U);  // a duplicate moves nothing
    EXPECT_TRUE(a.arrive(2));
    a.finish(3);
    EXPECT_EQ(a.lost(), 0U);
    EXPECT_EQ(a.duplicated(), 2U);
}

TEST(VerbsArrivals, ReorderIsOneLostAndOneDuplicate) {
    const Schedule s(3, 64, 128, Op::send, 64);
    Arrivals a(s);
    EXPECT_TRUE(a.arrive(0));
    EXPECT_TRUE(a.arrive(2));  // 1 overtaken: counted lost
    EXPECT_EQ(a.lost(), 1U);
    EXPECT_FALSE(a.arrive(1));  // then arrives: behind the order
    EXPECT_EQ(a.duplicated(), 1U);
    EXPECT_TRUE(a.arrive(3));
    a.finish(4);
    EXPECT_EQ(a.lost(), 1U);
    EXPECT_EQ(a.duplicated(), 1U);
    EXPECT_EQ(a.expected(), 4U);
}

TEST(VerbsArrivals, NothingVisible) {
    // --op read: the server sees no message; the client's FIN says the end
    // is "none" (all ones), and nothing is lost.
    const Schedule s(3, 4096, 8192, Op::read);
    Arrivals a(s);
    EXPECT_EQ(a.expected(), std::numeric_limits<uint64_t>::max());
    a.finish(s.next_visible(100));
    EXPECT_EQ(a.lost(), 0U);
    EXPECT_EQ(a.duplicated(), 0U);
}

TEST(VerbsArrivals, NothingArrived) {
    const Schedule s(3, 64, 128, Op::send, 64);
    Arrivals a(s);
    a.finish(25);
    EXPECT_EQ(a.lost(), 25U);
    EXPECT_EQ(a.expected(), 0U);  // FIN is no message
}

// The wait for a connection event (the server's for its client, too) ends
// after its timeout; nothing is read from a channel that has no event.
TEST(VerbsConnection, EventWaitEndsAtItsTimeout) {
    std::array<int, 2> fds{};
    ASSERT_EQ(::pipe(fds.data()), 0);
    rdma_event_channel idle{fds[0]};
    const auto t0 = std::chrono::steady_clock::now();
    try {
        const Event ev(&idle, 0.2);
        ADD_FAILURE() << "an event from an idle channel";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("no connection event within 0.2"), std::string::npos)
            << e.what();
    }
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_GE(waited, 0.19);
    EXPECT_LT(waited, 5);
    ::close(fds[0]);
    ::close(fds[1]);
}

}  // namespace
}  // namespace rxecc::verbs
