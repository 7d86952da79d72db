// rxecc-verbs' pattern, schedule and command line (the verbs side runs in
// the guest selftests).
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <set>
#include <vector>

#include "options.hpp"
#include "pattern.hpp"

namespace rxecc::verbs {
namespace {

TEST(VerbsPattern, FillThenCheckFromAnyOffset) {
    std::vector<std::byte> whole(1000);
    fill(whole, 42);
    EXPECT_FALSE(first_mismatch(whole, 42).has_value());
    // A piece read from the middle matches the stream at its offset.
    for (size_t off : {0UL, 1UL, 7UL, 8UL, 13UL, 511UL}) {
        std::vector<std::byte> part(whole.begin() + static_cast<long>(off),
                                    whole.begin() + static_cast<long>(off) + 100);
        EXPECT_FALSE(first_mismatch(part, 42, off).has_value()) << off;
        EXPECT_TRUE(first_mismatch(part, 42, off + 1).has_value()) << off;
    }
}

TEST(VerbsPattern, DetectsOneFlippedByteAndStaleData) {
    std::vector<std::byte> buf(4096);
    fill(buf, 7);
    buf[3001] ^= std::byte{0x10};
    ASSERT_TRUE(first_mismatch(buf, 7).has_value());
    EXPECT_EQ(*first_mismatch(buf, 7), 3001U);
    // The data of the previous message in the same slot is not this one's.
    fill(buf, 6);
    EXPECT_EQ(first_mismatch(buf, 7), std::optional<size_t>{0});
    // An all-zero buffer (a READ that wrote nothing) fails.
    std::vector<std::byte> zero(64);
    EXPECT_TRUE(first_mismatch(zero, kReadStream, 5).has_value());
}

TEST(VerbsSchedule, SameSeedSameSteps) {
    const Schedule a(9, 65536, 131072);
    const Schedule b(9, 65536, 131072);
    const Schedule c(10, 65536, 131072);
    int differ = 0;
    for (uint64_t s = 0; s < 200; ++s) {
        EXPECT_EQ(a.at(s).op, b.at(s).op);
        EXPECT_EQ(a.at(s).size, b.at(s).size);
        EXPECT_EQ(a.at(s).offset, b.at(s).offset);
        differ += a.at(s).size != c.at(s).size ? 1 : 0;
    }
    EXPECT_GT(differ, 150);
}

TEST(VerbsSchedule, MixCoversOpsSizesAndBounds) {
    const uint32_t max = 65536;
    const uint32_t rlen = 2 * max;
    const Schedule s(1, max, rlen);
    std::map<Op, int> ops;
    int zero = 0;
    int tiny = 0;
    int multi = 0;
    for (uint64_t q = 0; q < 4000; ++q) {
        const Step st = s.at(q);
        ++ops[st.op];
        ASSERT_LE(st.size, max);
        ASSERT_LE(uint64_t{st.offset} + st.size, rlen);
        zero += st.size == 0 ? 1 : 0;
        tiny += st.size > 0 && st.size <= 64 ? 1 : 0;
        multi += st.size > 4096 ? 1 : 0;
        if (st.op != Op::read) {
            EXPECT_EQ(st.offset, 0U);
        }
    }
    for (Op op : {Op::send, Op::write, Op::write_imm, Op::read}) {
        EXPECT_GT(ops[op], 800) << op_name(op);
    }
    EXPECT_GT(zero, 0);
    EXPECT_GT(tiny, 500);
    EXPECT_GT(multi, 1000);
}

TEST(VerbsSchedule, OnlyAndFixedSizeAndNextVisible) {
    const Schedule ping(3, 64, 128, Op::send, 64);
    for (uint64_t q = 0; q < 50; ++q) {
        EXPECT_EQ(ping.at(q).op, Op::send);
        EXPECT_EQ(ping.at(q).size, 64U);
        EXPECT_EQ(ping.next_visible(q), q + 1);
    }
    const Schedule reads(3, 4096, 8192, Op::read);
    EXPECT_FALSE(reads.server_visible(0));
    EXPECT_EQ(reads.next_visible(0), ~uint64_t{0});
    const Schedule mix(5, 4096, 8192);
    for (uint64_t q = 0; q < 100; ++q) {
        const uint64_t n = mix.next_visible(q);
        EXPECT_GT(n, q);
        EXPECT_TRUE(mix.server_visible(n));
        for (uint64_t r = q + 1; r < n; ++r) {
            EXPECT_EQ(mix.at(r).op, Op::read);
        }
    }
}

Options parse(std::initializer_list<std::string> a) { return parse_options({a}); }

TEST(VerbsOptions, ClientAndServer) {
    const Options c = parse({"client", "10.0.0.1", "--count", "100", "--op", "read", "--seed", "77",
                             "--tos", "106", "--ack-timeout", "14", "-p", "2000"});
    EXPECT_FALSE(c.server);
    EXPECT_EQ(c.addr, "10.0.0.1");
    EXPECT_EQ(c.count, 100U);
    EXPECT_EQ(c.only, Op::read);
    EXPECT_EQ(c.seed, 77U);
    EXPECT_EQ(c.tos, uint8_t{106});
    EXPECT_EQ(c.ack_timeout, uint8_t{14});
    EXPECT_EQ(c.port, 2000);
    EXPECT_FALSE(c.busy_poll);
    EXPECT_FALSE(c.flow_label);
    const Options f = parse({"client", "fd00::1", "--count", "1", "--flow-label", "1048575"});
    EXPECT_EQ(f.flow_label, uint32_t{0xfffff});
    const Options p = parse({"client", "h1", "--test", "ping", "--duration", "2.5", "--size", "64",
                             "--samples", "/tmp/s"});
    EXPECT_EQ(p.test, rxecc::verbs::Test::ping);
    EXPECT_DOUBLE_EQ(p.duration, 2.5);
    EXPECT_EQ(p.depth, 1U);
    EXPECT_TRUE(p.busy_poll);
    EXPECT_EQ(p.max_size, 64U);
    const Options s = parse({"server", "-p", "19000", "--poll", "busy"});
    EXPECT_TRUE(s.server);
    EXPECT_TRUE(s.addr.empty());
    EXPECT_TRUE(s.busy_poll);
}

TEST(VerbsOptions, BadInputNamesTheProblem) {
    const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
        {{}, "'server' or 'client'"},
        {{"talk"}, "'server' or 'client'"},
        {{"client", "--count", "5"}, "address is missing"},
        {{"client", "h1"}, "--count or --duration"},
        {{"client", "h1", "--count", "0"}, "out of range"},
        {{"client", "h1", "--count", "x"}, "not a number"},
        {{"client", "h1", "--depth", "1000", "--count", "1"}, "--depth: 1000 is out of range"},
        {{"client", "h1", "--op", "atomic", "--count", "1"}, "--op: 'atomic'"},
        {{"client", "h1", "--test", "ping", "--op", "read", "--count", "1"}, "sends only"},
        {{"client", "h1", "--duration", "-1"}, "not a number of seconds"},
        {{"client", "h1", "--count"}, "needs a value"},
        {{"client", "h1", "--frobnicate", "1"}, "unknown option"},
        {{"client", "h1", "h2", "--count", "1"}, "unexpected argument 'h2'"},
        {{"server", "-p", "70000"}, "-p: 70000 is out of range"},
        {{"client", "h1", "--count", "1", "--flow-label", "1048576"},
         "--flow-label: 1048576 is out"},
        {{"server", "--flow-label", "5"}, "--flow-label: the client's option"},
    };
    for (const auto& [args, msg] : bad) {
        try {
            parse_options(args);
            ADD_FAILURE() << "accepted: " << (args.empty() ? "" : args[0]);
        } catch (const UsageError& e) {
            EXPECT_NE(std::string(e.what()).find(msg), std::string::npos) << e.what();
        }
    }
}

TEST(VerbsOptions, UsageStatesEveryExitCode) {
    const std::string u = kUsage;
    for (const char* code : {"\n  0  ", "\n  1  ", "\n  2  ", "\n  3  "}) {
        EXPECT_NE(u.find(code), std::string::npos) << code;
    }
    EXPECT_NE(u.find("the server's wait for its client included"), std::string::npos);
}

}  // namespace
}  // namespace rxecc::verbs
