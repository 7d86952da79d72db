#include "stats.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

TEST(Median, OddCount) { EXPECT_DOUBLE_EQ(rxecc::stats::median({3.0, 1.0, 2.0}), 2.0); }

TEST(Median, EvenCountIsMeanOfMiddle) {
    EXPECT_DOUBLE_EQ(rxecc::stats::median({4.0, 1.0, 3.0, 2.0}), 2.5);
}

TEST(Median, Single) { EXPECT_DOUBLE_EQ(rxecc::stats::median({7.5}), 7.5); }

TEST(Median, IgnoresOrderAndDuplicates) {
    EXPECT_DOUBLE_EQ(rxecc::stats::median({5.0, 5.0, 1.0, 9.0, 5.0}), 5.0);
}

TEST(Median, EmptyThrows) { EXPECT_THROW((void)rxecc::stats::median({}), std::invalid_argument); }
