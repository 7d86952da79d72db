#include "stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
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

TEST(MeanAndSd, Values) {
    EXPECT_DOUBLE_EQ(rxecc::stats::mean({1.0, 2.0, 6.0}), 3.0);
    EXPECT_DOUBLE_EQ(rxecc::stats::stddev({2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0}),
                     std::sqrt(32.0 / 7.0));
    EXPECT_DOUBLE_EQ(rxecc::stats::stddev({5.0}), 0.0);
    EXPECT_THROW((void)rxecc::stats::mean({}), std::invalid_argument);
}

TEST(T975, TableAndExpansion) {
    EXPECT_DOUBLE_EQ(rxecc::stats::t975(1), 12.706);
    EXPECT_DOUBLE_EQ(rxecc::stats::t975(9), 2.262);
    EXPECT_DOUBLE_EQ(rxecc::stats::t975(30), 2.042);
    // published values: 2.0395 (31), 2.0211 (40), 1.9840 (100)
    EXPECT_NEAR(rxecc::stats::t975(31), 2.0395, 0.001);
    EXPECT_NEAR(rxecc::stats::t975(40), 2.0211, 0.001);
    EXPECT_NEAR(rxecc::stats::t975(100), 1.9840, 0.001);
    EXPECT_THROW((void)rxecc::stats::t975(0), std::invalid_argument);
}

// Exact two-sided p-values counted by hand from the 2^n sign assignments.
TEST(Wilcoxon, Exact) {
    // ranks 1..6, the negative one the smallest: W+ = 20 of 21, P(W+ >= 20) = 2/64
    EXPECT_DOUBLE_EQ(rxecc::stats::wilcoxon_p({-1.0, 2.0, 3.0, 4.0, 5.0, 6.0}), 4.0 / 64.0);
    EXPECT_DOUBLE_EQ(rxecc::stats::wilcoxon_p({1.0, 2.0, 3.0, 4.0, 5.0}), 2.0 / 32.0);
    EXPECT_DOUBLE_EQ(rxecc::stats::wilcoxon_p({-1.0, -2.0, -3.0, -4.0, -5.0}), 2.0 / 32.0);
    // symmetric: the middle of the distribution
    EXPECT_DOUBLE_EQ(rxecc::stats::wilcoxon_p({-1.0, 1.0}), 1.0);
}

TEST(Wilcoxon, TiesAndZeros) {
    // magnitudes 1, 1, 2, 2, 3: mean ranks 1.5, 1.5, 3.5, 3.5, 5; W+ = 13.5 of 15;
    // 3 of 32 assignments reach it: p = 6/32
    EXPECT_DOUBLE_EQ(rxecc::stats::wilcoxon_p({1.0, -1.0, 2.0, 2.0, 3.0}), 6.0 / 32.0);
    // zeros are left out
    EXPECT_DOUBLE_EQ(rxecc::stats::wilcoxon_p({0.0, 1.0, -1.0, 2.0, 0.0, 2.0, 3.0}), 6.0 / 32.0);
    EXPECT_DOUBLE_EQ(rxecc::stats::wilcoxon_p({0.0, 0.0}), 1.0);
    EXPECT_DOUBLE_EQ(rxecc::stats::wilcoxon_p({}), 1.0);
}

TEST(Wilcoxon, ManyPairs) {
    std::vector<double> d(40);
    for (std::size_t i = 0; i < d.size(); ++i) d[i] = static_cast<double>(i + 1);
    EXPECT_DOUBLE_EQ(rxecc::stats::wilcoxon_p(d), 2.0 / std::ldexp(1.0, 40));
    EXPECT_THROW((void)rxecc::stats::wilcoxon_p(std::vector<double>(201, 1.0)),
                 std::invalid_argument);
}
