#include "perftest.hpp"

#include <gtest/gtest.h>

namespace pt = rxecc::perftest;

namespace {

// Reports as perftest 4.5 prints them (taken from runs in a guest).
constexpr const char* kWriteBw = R"(
---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF		Device         : x0
 Number of qps   : 1		Transport type : IB
---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
 65536      3456             0.00               71.97  		   0.001152
---------------------------------------------------------------------------------------
)";

constexpr const char* kSendLat = R"(
 local address: LID 0000 QPN 0x0014 PSN 0x48370
---------------------------------------------------------------------------------------
 #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] 
 2       1000          3132.85        6446.12      3999.91  	       4054.30     	322.90 		5998.99 		6446.12
---------------------------------------------------------------------------------------
)";

constexpr const char* kLatDuration = R"(
 #bytes        #iterations       t_avg[usec]        tps  
 2             1200             41.50             24096.39
)";

}  // namespace

TEST(SplitHeader, KeepsNamesWithSpacesAndBrackets) {
    const auto cols = pt::split_header(
        " #bytes #iterations    t_min[usec]  t_typical[usec]   99% percentile[usec]   "
        "99.9% percentile[usec] ");
    const std::vector<std::string> want{
        "#bytes",          "#iterations",          "t_min[usec]",
        "t_typical[usec]", "99% percentile[usec]", "99.9% percentile[usec]"};
    EXPECT_EQ(cols, want);
}

TEST(SplitHeader, BandwidthHeader) {
    const auto cols = pt::split_header(
        " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]");
    const std::vector<std::string> want{"#bytes", "#iterations", "BW peak[Gb/sec]",
                                        "BW average[Gb/sec]", "MsgRate[Mpps]"};
    EXPECT_EQ(cols, want);
}

TEST(SplitHeader, WordWithoutBrackets) {
    const auto cols = pt::split_header(" #bytes  #iterations  t_avg[usec]  tps ");
    const std::vector<std::string> want{"#bytes", "#iterations", "t_avg[usec]", "tps"};
    EXPECT_EQ(cols, want);
}

TEST(Parse, BandwidthReport) {
    const auto t = pt::parse(kWriteBw);
    ASSERT_TRUE(t.has_value());
    ASSERT_EQ(t->rows.size(), 1U);
    EXPECT_EQ(t->cell("#iterations"), "3456");
    EXPECT_DOUBLE_EQ(t->number("BW average[MB/sec]").value(), 71.97);
    EXPECT_DOUBLE_EQ(t->number("MsgRate[Mpps]").value(), 0.001152);
    EXPECT_FALSE(t->cell("no such column").has_value());
    EXPECT_FALSE(t->cell("#bytes", 1).has_value());
}

TEST(Parse, LatencyReport) {
    const auto t = pt::parse(kSendLat);
    ASSERT_TRUE(t.has_value());
    EXPECT_DOUBLE_EQ(t->number("t_typical[usec]").value(), 3999.91);
    EXPECT_DOUBLE_EQ(t->number("99.9% percentile[usec]").value(), 6446.12);
}

TEST(Parse, SweepHasOneRowPerSize) {
    const auto t = pt::parse(
        " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
        " 2          5000           0.50               0.48                 0.25\n"
        " 4          5000           1.00               0.97                 0.25\n"
        "---------------------------------------------------------------------------------------\n"
        " 8          5000           2.00               1.90                 0.25\n");
    ASSERT_TRUE(t.has_value());
    ASSERT_EQ(t->rows.size(), 2U);  // the table ends at the rule
    EXPECT_DOUBLE_EQ(t->number("BW average[MB/sec]", 1).value(), 0.97);
}

TEST(Parse, NoTable) {
    EXPECT_FALSE(pt::parse("").has_value());
    EXPECT_FALSE(pt::parse(" Couldn't connect to 10.0.0.1:18515\n").has_value());
    // A header with no result row (the client died) is no result either.
    EXPECT_FALSE(pt::parse(" #bytes     #iterations    BW peak[MB/sec]\n\n").has_value());
}

TEST(Parse, NonNumericCellIsNotANumber) {
    const auto t = pt::parse(" #bytes  #iterations  t_avg[usec]\n 2  100  n/a\n");
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->cell("t_avg[usec]"), "n/a");
    EXPECT_FALSE(t->number("t_avg[usec]").has_value());
}

TEST(Parse, InfAndNanAreNoNumbers) {
    // perftest's latency row when its clock calibration failed (seen under TCG).
    const auto t = pt::parse(
        " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
        "t_stdev[usec]\n"
        " 2       3000          inf            inf          inf      \t       inf         "
        "\t-nan\n");
    ASSERT_TRUE(t.has_value());
    EXPECT_FALSE(t->number("t_typical[usec]").has_value());
    EXPECT_FALSE(t->number("t_stdev[usec]").has_value());
    EXPECT_FALSE(pt::headline(*t).has_value());
}

TEST(Headline, BandwidthUsesAverage) {
    const auto m = pt::headline(*pt::parse(kWriteBw));
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->kind, pt::Kind::bandwidth);
    EXPECT_EQ(m->column, "BW average[MB/sec]");
    EXPECT_EQ(m->unit, "MB/sec");
    EXPECT_DOUBLE_EQ(m->value, 71.97);
}

TEST(Headline, LatencyUsesTypical) {
    const auto m = pt::headline(*pt::parse(kSendLat));
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->kind, pt::Kind::latency);
    EXPECT_EQ(m->column, "t_typical[usec]");
    EXPECT_DOUBLE_EQ(m->value, 3999.91);
}

TEST(Headline, DurationLatencyFallsBackToAverage) {
    const auto m = pt::headline(*pt::parse(kLatDuration));
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->column, "t_avg[usec]");
    EXPECT_DOUBLE_EQ(m->value, 41.50);
}

TEST(UnitOf, Brackets) {
    EXPECT_EQ(pt::unit_of("BW average[Gb/sec]"), "Gb/sec");
    EXPECT_EQ(pt::unit_of("#bytes"), "");
}

TEST(ReadText, MissingFileIsNullopt) {
    EXPECT_FALSE(pt::read_text("/nonexistent/rxecc/report.log").has_value());
}

TEST(Headline, ZeroBandwidthIsNoResult) {
    const auto t = pt::parse(
        " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
        " 65536      300              0.00               0.00   \t\t   0.000000\n");
    ASSERT_TRUE(t.has_value());
    EXPECT_FALSE(pt::headline(*t).has_value());
}
