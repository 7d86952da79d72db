#include "bench.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace {

class BenchDir : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("rxecc-bench-test-" +
                std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    void bw(const std::string& round, const std::string& module, double value) {
        write(round, module, "ib_write_bw",
              " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
              " 65536      1000             0.00               " +
                  std::to_string(value) + "  0.001\n");
    }
    void lat(const std::string& round, const std::string& module, double value) {
        write(round, module, "ib_send_lat",
              " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]\n"
              " 2       1000          1.0        9.0      " +
                  std::to_string(value) + "  5.0\n");
    }
    void write(const std::string& round, const std::string& module, const std::string& test,
               const std::string& text) {
        const auto d = dir_ / round / module;
        fs::create_directories(d);
        std::ofstream(d / (test + ".log")) << text;
    }
    [[nodiscard]] const fs::path& dir() const { return dir_; }

  private:
    fs::path dir_;
};

}  // namespace

TEST_F(BenchDir, MediansBestAndRatio) {
    bw("1", "rxe", 10.0);
    bw("2", "rxe", 30.0);
    bw("3", "rxe", 20.0);
    bw("1", "rxecc", 22.0);
    bw("2", "rxecc", 18.0);
    bw("3", "rxecc", 21.0);
    lat("1", "rxe", 40.0);
    lat("1", "rxecc", 50.0);

    std::vector<std::string> errors;
    const auto rows = rxecc::bench::summarize(rxecc::bench::collect(dir(), errors), errors);
    EXPECT_TRUE(errors.empty());
    ASSERT_EQ(rows.size(), 2U);

    const auto& l = rows[0];  // sorted by test name: ib_send_lat, ib_write_bw
    EXPECT_EQ(l.test, "ib_send_lat");
    EXPECT_FALSE(l.higher_is_better);
    ASSERT_EQ(l.comparisons.size(), 1U);  // no rxecc-nocc: rxecc against rxe only
    EXPECT_DOUBLE_EQ(l.comparisons[0].ratio_of_medians, 50.0 / 40.0);
    EXPECT_EQ(l.comparisons[0].verdict, rxecc::bench::Verdict::too_few);

    const auto& w = rows[1];
    EXPECT_EQ(w.test, "ib_write_bw");
    EXPECT_TRUE(w.higher_is_better);
    EXPECT_EQ(w.unit, "MB/sec");
    const auto& rxe = w.modules.at("rxe");
    EXPECT_EQ(rxe.by_trial.size(), 3U);
    EXPECT_DOUBLE_EQ(rxe.by_trial.at("2"), 30.0);
    EXPECT_DOUBLE_EQ(rxe.median, 20.0);
    EXPECT_DOUBLE_EQ(rxe.best, 30.0);  // bandwidth: the highest
    EXPECT_DOUBLE_EQ(w.modules.at("rxecc").median, 21.0);
    EXPECT_DOUBLE_EQ(w.modules.at("rxecc").best, 22.0);
    const auto& c = w.comparisons.at(0);
    EXPECT_EQ(c.module, "rxecc");
    EXPECT_EQ(c.baseline, "rxe");
    EXPECT_EQ(c.pairs, 3U);
    EXPECT_DOUBLE_EQ(c.ratio_of_medians, 21.0 / 20.0);
    // the geometric mean of 2.2, 0.6 and 1.05
    EXPECT_NEAR(c.geo_ratio, std::cbrt(2.2 * 0.6 * 1.05), 1e-12);
    EXPECT_LT(c.ci_low, 1.0);
    EXPECT_GT(c.ci_high, 1.0);
    EXPECT_EQ(c.verdict, rxecc::bench::Verdict::undecided);

    const auto j = rxecc::bench::to_json(rows);
    const auto& jw = j["tests"]["ib_write_bw"];
    EXPECT_DOUBLE_EQ(jw["comparisons"][0]["ratio_of_medians"].get<double>(), 1.05);
    EXPECT_EQ(jw["comparisons"][0]["verdict"], "undecided");
    EXPECT_EQ(jw["modules"]["rxecc"]["by_trial"].size(), 3U);
    EXPECT_DOUBLE_EQ(jw["modules"]["rxe"]["best"].get<double>(), 30.0);

    const auto text = rxecc::bench::to_text(rows);
    EXPECT_NE(text.find("ib_write_bw"), std::string::npos);
    EXPECT_NE(text.find("1.050"), std::string::npos);
    EXPECT_NE(text.find("20.00 (30.00)"), std::string::npos);
}

// Paired trials: a steady 20 % gain under load that moves both modules
// together is shown, though the medians' ranges overlap.
TEST_F(BenchDir, PairedGainShownThroughNoise) {
    const std::vector<double> load{30.0, 60.0, 45.0, 80.0, 35.0, 70.0, 50.0, 40.0};
    for (std::size_t i = 0; i < load.size(); ++i) {
        const auto t = std::to_string(i + 1);
        bw(t, "rxe", load[i]);
        bw(t, "rxecc", load[i] * (i % 2 == 1 ? 1.18 : 1.22));
    }
    std::vector<std::string> errors;
    const auto rows = rxecc::bench::summarize(rxecc::bench::collect(dir(), errors), errors);
    ASSERT_EQ(rows.size(), 1U);
    const auto& c = rows[0].comparisons.at(0);
    EXPECT_EQ(c.verdict, rxecc::bench::Verdict::better);
    EXPECT_GT(c.ci_low, 1.15);
    EXPECT_LT(c.ci_high, 1.25);
    EXPECT_NEAR(c.p_value, 2.0 / 256.0, 1e-12);  // all 8 pairs one way: exact
    // sd 0.0179: t(2) sd / sqrt(3) = 0.044 is below ln(1.1) / 2 = 0.048, t(1) sd / sqrt(2) is not
    EXPECT_EQ(c.trials_to_tell, 3U);
    EXPECT_FALSE(c.under_10);  // 1.18-1.22: above 1.1
}

// The same ratios for a latency: lower is better, so rxecc is worse.
TEST_F(BenchDir, HigherLatencyIsWorse) {
    for (int i = 1; i <= 6; ++i) {
        lat(std::to_string(i), "rxe", 10.0 + i);
        lat(std::to_string(i), "rxecc", (10.0 + i) * (i % 2 == 1 ? 1.3 : 1.4));
    }
    std::vector<std::string> errors;
    const auto rows = rxecc::bench::summarize(rxecc::bench::collect(dir(), errors), errors);
    ASSERT_EQ(rows.size(), 1U);
    EXPECT_EQ(rows[0].comparisons.at(0).verdict, rxecc::bench::Verdict::worse);
    EXPECT_DOUBLE_EQ(rows[0].modules.at("rxe").best, 11.0);  // latency: the lowest
}

// Ratios close to 1 with little spread rule a 10 % difference out.
TEST_F(BenchDir, NoTenPercentDifference) {
    const std::vector<double> r{1.01, 0.98, 1.02, 0.99, 1.00, 1.03, 0.97, 1.01};
    for (std::size_t i = 0; i < r.size(); ++i) {
        const auto t = std::to_string(i + 1);
        bw(t, "rxe", 50.0 + static_cast<double>(i));
        bw(t, "rxecc", (50.0 + static_cast<double>(i)) * r[i]);
        bw(t, "rxecc-nocc", (50.0 + static_cast<double>(i)) * r[i]);
    }
    std::vector<std::string> errors;
    const auto rows = rxecc::bench::summarize(rxecc::bench::collect(dir(), errors), errors);
    EXPECT_TRUE(errors.empty());
    ASSERT_EQ(rows.size(), 1U);
    ASSERT_EQ(rows[0].comparisons.size(), 2U);
    const auto& c = rows[0].comparisons[0];
    EXPECT_EQ(c.verdict, rxecc::bench::Verdict::within_10);
    EXPECT_GT(c.ci_low, 1.0 / 1.1);
    EXPECT_LT(c.ci_high, 1.1);
    // rxecc against itself with DCQCN off: every ratio 1, p 1
    const auto& hooks = rows[0].comparisons[1];
    EXPECT_EQ(hooks.baseline, "rxecc-nocc");
    EXPECT_DOUBLE_EQ(hooks.geo_ratio, 1.0);
    EXPECT_DOUBLE_EQ(hooks.p_value, 1.0);
    EXPECT_EQ(hooks.verdict, rxecc::bench::Verdict::within_10);
    EXPECT_NE(rxecc::bench::to_text(rows).find("DCQCN's hooks"), std::string::npos);
}

// Only the trials both modules have are paired.
TEST_F(BenchDir, UnpairedTrialsAreLeftOut) {
    bw("1", "rxe", 10.0);
    bw("2", "rxe", 10.0);
    bw("2", "rxecc", 12.0);
    bw("3", "rxecc", 100.0);
    std::vector<std::string> errors;
    const auto rows = rxecc::bench::summarize(rxecc::bench::collect(dir(), errors), errors);
    ASSERT_EQ(rows.size(), 1U);
    const auto& c = rows[0].comparisons.at(0);
    EXPECT_EQ(c.pairs, 1U);
    EXPECT_NEAR(c.geo_ratio, 1.2, 1e-12);
    EXPECT_EQ(c.trials_to_tell, 0U);
    EXPECT_DOUBLE_EQ(c.p_value, 1.0);
}

// No pair at all: nothing to say, and the JSON says so with nulls.
TEST_F(BenchDir, NoPairsNoFigures) {
    bw("1", "rxe", 10.0);
    bw("2", "rxecc", 12.0);
    std::vector<std::string> errors;
    const auto rows = rxecc::bench::summarize(rxecc::bench::collect(dir(), errors), errors);
    ASSERT_EQ(rows.size(), 1U);
    const auto& c = rows[0].comparisons.at(0);
    EXPECT_EQ(c.pairs, 0U);
    EXPECT_DOUBLE_EQ(c.p_value, 1.0);  // not 0: nothing is significant
    const auto j = rxecc::bench::to_json(rows)["tests"]["ib_write_bw"]["comparisons"][0];
    EXPECT_TRUE(j["geo_ratio"].is_null());
    EXPECT_TRUE(j["ci95"].is_null());
    EXPECT_TRUE(j["trials_to_tell_10pct"].is_null());
}

// A small shift shown with little spread: worse, and under 10 %.
TEST_F(BenchDir, SmallDifferenceShown) {
    const std::vector<double> r{1.02, 1.03, 1.01, 1.02, 1.03, 1.02};
    for (std::size_t i = 0; i < r.size(); ++i) {
        const auto t = std::to_string(i + 1);
        lat(t, "rxe", 20.0);
        lat(t, "rxecc", 20.0 * r[i]);
    }
    std::vector<std::string> errors;
    const auto rows = rxecc::bench::summarize(rxecc::bench::collect(dir(), errors), errors);
    ASSERT_EQ(rows.size(), 1U);
    const auto& c = rows[0].comparisons.at(0);
    EXPECT_EQ(c.verdict, rxecc::bench::Verdict::worse);
    EXPECT_TRUE(c.under_10);
    EXPECT_NE(rxecc::bench::to_text(rows).find("worse, under 10 %"), std::string::npos);
}

// Without rxe, the hooks' comparison alone is still a report.
TEST_F(BenchDir, HooksAloneAreAReport) {
    for (int i = 1; i <= 3; ++i) {
        bw(std::to_string(i), "rxecc", 20.0);
        bw(std::to_string(i), "rxecc-nocc", 20.0);
    }
    std::vector<std::string> errors;
    const auto rows = rxecc::bench::summarize(rxecc::bench::collect(dir(), errors), errors);
    EXPECT_TRUE(errors.empty());
    ASSERT_EQ(rows.size(), 1U);
    ASSERT_EQ(rows[0].comparisons.size(), 1U);
    EXPECT_EQ(rows[0].comparisons[0].baseline, "rxecc-nocc");
}

TEST_F(BenchDir, UnknownModuleIsAnError) {
    bw("1", "rxe", 10.0);
    bw("1", "rxecc", 11.0);
    bw("1", "mlx5", 99.0);
    std::vector<std::string> errors;
    const auto rows = rxecc::bench::summarize(rxecc::bench::collect(dir(), errors), errors);
    EXPECT_EQ(rows.size(), 1U);
    ASSERT_EQ(errors.size(), 1U);
    EXPECT_NE(errors[0].find("mlx5"), std::string::npos);
}

TEST_F(BenchDir, OneSidedTestIsReported) {
    bw("1", "rxe", 10.0);
    std::vector<std::string> errors;
    const auto rows = rxecc::bench::summarize(rxecc::bench::collect(dir(), errors), errors);
    EXPECT_TRUE(rows.empty());
    ASSERT_EQ(errors.size(), 1U);
    EXPECT_NE(errors[0].find("ib_write_bw"), std::string::npos);
}

TEST_F(BenchDir, ReportWithoutResultIsAnError) {
    bw("1", "rxe", 10.0);
    bw("1", "rxecc", 11.0);
    write("1", "rxecc", "ib_read_bw", "Couldn't connect to 10.0.0.1:18515\n");
    std::vector<std::string> errors;
    const auto rows = rxecc::bench::summarize(rxecc::bench::collect(dir(), errors), errors);
    EXPECT_EQ(rows.size(), 1U);
    ASSERT_EQ(errors.size(), 1U);
    EXPECT_NE(errors[0].find("ib_read_bw.log"), std::string::npos);
}

TEST_F(BenchDir, MissingDirectory) {
    std::vector<std::string> errors;
    const auto samples = rxecc::bench::collect(dir() / "nope", errors);
    EXPECT_TRUE(samples.empty());
    EXPECT_EQ(errors.size(), 1U);
}

// .value files: a number of the bench's own, lower is better.
TEST_F(BenchDir, OwnValues) {
    bw("1", "rxe", 10.0);
    bw("1", "rxecc", 11.0);
    const auto d = dir() / "1";
    std::ofstream(d / "rxe" / "qp_memory.value") << "2048 B slab per QP\n";
    std::ofstream(d / "rxecc" / "qp_memory.value") << "4096 B slab per QP\n";
    std::vector<std::string> errors;
    const auto rows = rxecc::bench::summarize(rxecc::bench::collect(dir(), errors), errors);
    EXPECT_TRUE(errors.empty());
    ASSERT_EQ(rows.size(), 2U);  // ib_write_bw, qp_memory
    const auto& mem = rows[1];
    EXPECT_EQ(mem.test, "qp_memory");
    EXPECT_EQ(mem.column, "slab per QP");
    EXPECT_EQ(mem.unit, "B");
    EXPECT_FALSE(mem.higher_is_better);
    EXPECT_DOUBLE_EQ(mem.comparisons.at(0).ratio_of_medians, 2.0);
}

// .rate files: the same, higher is better (fio's throughput).
TEST_F(BenchDir, OwnRates) {
    const auto d = dir() / "1";
    fs::create_directories(d / "rxe");
    fs::create_directories(d / "rxecc");
    std::ofstream(d / "rxe" / "nvmf_seq.rate") << "20.5 MB/s fio sequential read\n";
    std::ofstream(d / "rxecc" / "nvmf_seq.rate") << "41 MB/s fio sequential read\n";
    std::vector<std::string> errors;
    const auto rows = rxecc::bench::summarize(rxecc::bench::collect(dir(), errors), errors);
    EXPECT_TRUE(errors.empty());
    ASSERT_EQ(rows.size(), 1U);
    EXPECT_TRUE(rows[0].higher_is_better);
    EXPECT_EQ(rows[0].unit, "MB/s");
    EXPECT_DOUBLE_EQ(rows[0].comparisons.at(0).ratio_of_medians, 2.0);
}

TEST_F(BenchDir, MalformedValueIsAnError) {
    bw("1", "rxe", 10.0);
    bw("1", "rxecc", 11.0);
    std::ofstream(dir() / "1" / "rxecc" / "qp_memory.value") << "lots of bytes\n";
    std::vector<std::string> errors;
    const auto rows = rxecc::bench::summarize(rxecc::bench::collect(dir(), errors), errors);
    EXPECT_EQ(rows.size(), 1U);
    ASSERT_EQ(errors.size(), 1U);
    EXPECT_NE(errors[0].find("qp_memory.value: not 'VALUE UNIT WHAT'"), std::string::npos);
}
