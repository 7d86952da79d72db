#include "stats.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

TEST(Median, OddCount) { EXPECT_DOUBLE_EQ(rxecc::stats::median({3.0, 1.0, 2.0}), 2.0); }

TEST(Median, EvenCountIsMeanOfMiddle) {
    EXPECT_DOUBLE_EQ(rxecc::stats::median({4.0, 1.0, 3.0, 2.0}), 2.5);
}

TEST(Median, Single) { EXPECT_DOUBLE_EQ(rxecc::stats::median({7.5}), 7.5); }

TEST(Median, IgnoresOrderAndDuplicates) {
    EXPECT_DOUBLE_EQ(rxecc::stats::median({5.0, 5.0, 1.0, 9.0, 5.0}), 5.0);
}

TEST(Median, EmptyThrows) { EXPECT_THROW((void)rxecc::stats::median({}), std::invalid_argument); }

TEST(NearestRank, ExactRanks) {
    std::vector<uint64_t> v(1000);
    for (uint64_t i = 0; i < v.size(); ++i) v[i] = i + 1;
    EXPECT_EQ(rxecc::stats::nearest_rank(v, 500), 500U);
    EXPECT_EQ(rxecc::stats::nearest_rank(v, 990), 990U);
    EXPECT_EQ(rxecc::stats::nearest_rank(v, 999), 999U);  // not the largest
    EXPECT_EQ(rxecc::stats::nearest_rank(v, 1000), 1000U);
    EXPECT_EQ(rxecc::stats::nearest_rank(v, 0), 1U);
}

TEST(NearestRank, SmallCounts) {
    const std::vector<uint64_t> ten{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    EXPECT_EQ(rxecc::stats::nearest_rank(ten, 500), 5U);  // the 5th of 10
    EXPECT_EQ(rxecc::stats::nearest_rank(ten, 990), 10U);
    EXPECT_EQ(rxecc::stats::nearest_rank({7}, 999), 7U);
}

TEST(NearestRank, BadInput) {
    EXPECT_THROW((void)rxecc::stats::nearest_rank({}, 500), std::invalid_argument);
    EXPECT_THROW((void)rxecc::stats::nearest_rank({1}, 1001), std::invalid_argument);
}
