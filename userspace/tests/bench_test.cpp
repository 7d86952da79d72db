#include "bench.hpp"

#include <gtest/gtest.h>

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

TEST_F(BenchDir, MediansAndRatio) {
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
    EXPECT_DOUBLE_EQ(l.ratio, 50.0 / 40.0);

    const auto& w = rows[1];
    EXPECT_EQ(w.test, "ib_write_bw");
    EXPECT_TRUE(w.higher_is_better);
    EXPECT_EQ(w.unit, "MB/sec");
    EXPECT_EQ(w.rxe, (std::vector<double>{10.0, 30.0, 20.0}));
    EXPECT_DOUBLE_EQ(w.rxe_median, 20.0);
    EXPECT_DOUBLE_EQ(w.rxecc_median, 21.0);
    EXPECT_DOUBLE_EQ(w.ratio, 21.0 / 20.0);

    const auto j = rxecc::bench::to_json(rows);
    EXPECT_DOUBLE_EQ(j["tests"]["ib_write_bw"]["ratio_rxecc_over_rxe"].get<double>(), 1.05);
    EXPECT_EQ(j["tests"]["ib_write_bw"]["rxecc"].size(), 3U);

    const auto text = rxecc::bench::to_text(rows);
    EXPECT_NE(text.find("ib_write_bw"), std::string::npos);
    EXPECT_NE(text.find("1.050"), std::string::npos);
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
    EXPECT_DOUBLE_EQ(mem.ratio, 2.0);
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
