// rxecc-coll's pure parts: the ring schedule (simulated among n ranks, the
// result checked), the reduction, the data, and nccl-tests' arithmetic.
#include <gtest/gtest.h>

#include <vector>

#include "collective.hpp"
#include "report.hpp"

using namespace rxecc::coll;

TEST(CollChunks, CoverTheBufferOnce) {
    for (unsigned n : {2U, 3U, 7U, 8U}) {
        for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{1000}}) {
            size_t next = 0;
            for (unsigned c = 0; c < n; ++c) {
                const Chunk k = chunk_of(count, n, c);
                EXPECT_EQ(k.first, next);
                EXPECT_LE(k.count, count / n + 1);
                next += k.count;
            }
            EXPECT_EQ(next, count) << n << " " << count;
        }
    }
}

// The schedule run among n simulated ranks (each step's chunk taken from the
// left neighbour's buffer as it was before the step) gives every rank the sum.
TEST(CollRing, ScheduleSumsEverything) {
    for (unsigned n : {2U, 3U, 4U, 5U, 8U}) {
        const size_t count = 37;
        std::vector<std::vector<float>> buf(n, std::vector<float>(count));
        for (unsigned r = 0; r < n; ++r)
            for (size_t i = 0; i < count; ++i) buf[r][i] = allreduce_input(r, i, 3);
        for (unsigned s = 0; s < ring_steps(n); ++s) {
            std::vector<std::vector<float>> sent(n);
            for (unsigned r = 0; r < n; ++r) {
                const Chunk c = chunk_of(count, n, ring_step(r, n, s).send_chunk);
                sent[r].assign(buf[r].begin() + static_cast<long>(c.first),
                               buf[r].begin() + static_cast<long>(c.first + c.count));
            }
            for (unsigned r = 0; r < n; ++r) {
                const RingStep st = ring_step(r, n, s);
                const unsigned left = (r + n - 1) % n;
                // what the left neighbour sends is the chunk this rank expects
                ASSERT_EQ(ring_step(left, n, s).send_chunk, st.recv_chunk) << n << " " << s;
                const Chunk c = chunk_of(count, n, st.recv_chunk);
                std::span<float> mine(buf[r].data() + c.first, c.count);
                if (st.reduce)
                    reduce_sum(mine, sent[left]);
                else
                    std::copy(sent[left].begin(), sent[left].end(), mine.begin());
            }
        }
        for (unsigned r = 0; r < n; ++r)
            for (size_t i = 0; i < count; ++i)
                ASSERT_EQ(buf[r][i], allreduce_expected(n, i, 3)) << n << " " << r << " " << i;
    }
}

TEST(CollData, ExpectedIsTheSumAndChecksCatchAnError) {
    for (unsigned n : {2U, 64U}) {
        for (size_t i : {size_t{0}, size_t{250}, size_t{1000000}}) {
            float sum = 0;
            for (unsigned r = 0; r < n; ++r) sum += allreduce_input(r, i, 6);
            EXPECT_EQ(sum, allreduce_expected(n, i, 6));
        }
    }
    std::vector<float> want = {1, 2, 3};
    std::vector<float> got = want;
    EXPECT_EQ(mismatches(got, want), 0U);
    got[1] = 5;
    EXPECT_EQ(mismatches(got, want), 1U);
    EXPECT_EQ(mismatches(std::vector<float>{1, 2}, want), 1U);
    EXPECT_NE(alltoall_value(0, 1, 0, 0), alltoall_value(1, 0, 0, 0));
    EXPECT_NE(alltoall_value(0, 1, 0, 0), alltoall_value(0, 1, 0, 1));
    EXPECT_THROW(reduce_sum(got, std::vector<float>{1}), std::invalid_argument);
}

// nccl-tests' definitions (doc/PERFORMANCE.md).
TEST(CollBandwidth, NcclTestsDefinitions) {
    EXPECT_DOUBLE_EQ(algbw(1000000000, 1.0), 1.0);
    EXPECT_DOUBLE_EQ(algbw(1000000, 0.001), 1.0);
    EXPECT_DOUBLE_EQ(algbw(1, 0), 0.0);
    EXPECT_DOUBLE_EQ(busbw_factor(Op::allreduce, 8), 1.75);
    EXPECT_DOUBLE_EQ(busbw_factor(Op::allreduce, 2), 1.0);
    EXPECT_DOUBLE_EQ(busbw_factor(Op::alltoall, 4), 0.75);
    EXPECT_EQ(op_name(Op::alltoall), "alltoall");
}

TEST(CollSizes, DoubleAndRoundToWholeElementsPerRank) {
    EXPECT_EQ(sizes(4096, 32768, 4), (std::vector<size_t>{4096, 8192, 16384, 32768}));
    EXPECT_EQ(sizes(4, 16, 3), (std::vector<size_t>{12}));  // 12 = 3 ranks x 4 B
    EXPECT_EQ(sizes(1000, 1000, 8), (std::vector<size_t>{992}));
    EXPECT_EQ(sizes(1 << 20, 1 << 20, 2), (std::vector<size_t>{1 << 20}));
}

TEST(CollTiming, NcclTimeSlowestAndWorst) {
    // rank 1 is slow in iteration 0, rank 0 in iteration 1
    const Timing t = summarize({{1.0, 4.0}, {3.0, 1.0}});
    EXPECT_DOUBLE_EQ(t.time, 2.25);    // (2.5 + 2) / 2
    EXPECT_DOUBLE_EQ(t.slowest, 3.5);  // (3 + 4) / 2
    EXPECT_DOUBLE_EQ(t.worst, 4.0);
    EXPECT_EQ(t.slow_rank, 0U);
    EXPECT_EQ(tag(0x8001, 3) & 0x80000000U, 0U);
}

TEST(CollReport, NcclTestsRowFromEveryRanksTimes) {
    // 2 ranks, 2 iterations; 1 MB all-reduce in 2.25 s (as CollTiming)
    const auto j = report(Op::allreduce, 2, 1000000, 2, {{1.0, 4.0}, {3.0, 1.0}}, 3);
    EXPECT_EQ(j["op"], "allreduce");
    EXPECT_EQ(j["count"], 250000U);
    EXPECT_DOUBLE_EQ(j["time_us"].get<double>(), 2.25e6);
    EXPECT_DOUBLE_EQ(j["algbw"].get<double>(), 1e6 / 2.25 / 1e9);
    EXPECT_DOUBLE_EQ(j["busbw"].get<double>(), j["algbw"].get<double>());  // 2(n-1)/n = 1
    EXPECT_DOUBLE_EQ(j["slowest_us"].get<double>(), 3.5e6);
    EXPECT_EQ(j["wrong"], 3U);
    const std::string row = table_row(j);
    EXPECT_NE(row.find(" 1000000 "), std::string::npos);
    EXPECT_NE(row.find("2250000.0"), std::string::npos);
    EXPECT_EQ(row.back(), '\n');
    EXPECT_NE(table_header(Op::alltoall, 4, 5, 1).find("# alltoall, 4 ranks"), std::string::npos);
}

TEST(CollReport, OptionNumbersAreCheckedWhole) {
    EXPECT_EQ(number("--iters", "0x10", 1, 100), 16U);
    EXPECT_THROW(number("--iters", "10k", 1, 100), Usage);
    EXPECT_THROW(number("--iters", "-1", 1, 100), Usage);
    EXPECT_THROW(number("--iters", "", 1, 100), Usage);
    EXPECT_THROW(number("--iters", "101", 1, 100), Usage);
}

// Every write lands inside its half of the receive area, the gather rows
// after it, and the buffer ends with the last row.
TEST(CollLayout, EverythingFitsWhereItBelongs) {
    for (unsigned n : {2U, 3U, 8U, 64U}) {
        const Layout lay{1 << 20, n, 20};
        for (size_t bytes : sizes(4, lay.max, n)) {
            const size_t count = bytes / sizeof(float);
            for (uint64_t iter : {uint64_t{0}, uint64_t{1}}) {
                const size_t lo = lay.recv(iter);
                const size_t hi = lo + 2 * lay.max;
                const unsigned last = ring_steps(n) - 1;
                EXPECT_LE(lo + lay.ring_slot(count, last) + chunk_of(count, n, 0).count * 4, hi);
                EXPECT_LE(lo + lay.alltoall_slot(count, n - 1) + count / n * 4, hi);
            }
        }
        EXPECT_EQ(lay.recv(0) + 2 * lay.max, lay.recv(1));
        EXPECT_EQ(lay.recv(1) + 2 * lay.max, lay.gather(0));
        EXPECT_EQ(lay.gather(n - 1) + lay.row(), lay.bytes());
    }
}

TEST(CollConfig, EverySettingCounts) {
    const uint64_t base = config_of(Op::allreduce, 8, 4096, 65536, 5, 1);
    EXPECT_EQ(base, config_of(Op::allreduce, 8, 4096, 65536, 5, 1));
    EXPECT_NE(base, config_of(Op::alltoall, 8, 4096, 65536, 5, 1));
    EXPECT_NE(base, config_of(Op::allreduce, 7, 4096, 65536, 5, 1));
    EXPECT_NE(base, config_of(Op::allreduce, 8, 8192, 65536, 5, 1));
    EXPECT_NE(base, config_of(Op::allreduce, 8, 4096, 32768, 5, 1));
    EXPECT_NE(base, config_of(Op::allreduce, 8, 4096, 65536, 6, 1));
    EXPECT_NE(base, config_of(Op::allreduce, 8, 4096, 65536, 5, 0));
}
