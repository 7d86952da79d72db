// Every field table of the tool against both outputs: each field's key is a
// JSON key and the same name in the text (no kernel needed: the objects are
// built here). And the values the tool parses for the tables, in range.
#include <gtest/gtest.h>
#include <linux/sch_pfc.h>

#include <regex>
#include <string>
#include <vector>

#include "format.hpp"
#include "netlink_client.hpp"
#include "qdisc.hpp"
#include "tool_test_util.hpp"

namespace rxecc::tool {
namespace {

using test::code_of;
using test::message_of;
using test::parse;

// `name` as a word of `text` (not part of a longer name).
bool has_word(const std::string& text, std::string_view name) {
    const std::regex re("(^|[^a-z_0-9])" + std::string(name) + "($|[^a-z_0-9])");
    return std::regex_search(text, re);
}

template <typename T>
void expect_fields(std::span<const Field<T>> fields, const nlohmann::json& j,
                   const std::string& text) {
    ASSERT_FALSE(fields.empty());
    for (const auto& f : fields) {
        SCOPED_TRACE(std::string(f.key));
        EXPECT_TRUE(j.contains(std::string(f.key)));
        EXPECT_TRUE(has_word(text, f.key)) << text;
    }
}

TEST(ToolFields, QpKeysInJsonAndText) {
    Qp q;
    q.dev = DevId{1, "r0", "v0"};
    q.qpn = 17;
    const auto j = to_json(q);
    const std::string t = to_text(std::vector<Qp>{q});
    expect_fields(qp_fields(), j, t);
    // The values too: the text cell is the JSON value (a word for a boolean).
    EXPECT_EQ(j["limited"], false);
    EXPECT_TRUE(has_word(t, "no"));
}

TEST(ToolFields, QdiscKeysInJsonAndText) {
    QdiscInfo q;
    q.netdev = "swp1";
    q.handle = 0x80010000;
    const auto j = to_json(q);
    const std::string t = to_text({q});
    expect_fields(qdisc_port_fields(), j, t);
    expect_fields(qdisc_port_stat_fields(), j, t);
    ASSERT_EQ(j["prio"].size(), TC_PFC_NUM_PRIO);
    expect_fields(qdisc_prio_fields(), j["prio"][0], t);
    expect_fields(qdisc_prio_stat_fields(), j["prio"][0], t);
    expect_fields(qdisc_prio_wd_fields(), j["prio"][0], t);
    EXPECT_TRUE(j.contains("netdev"));
    EXPECT_TRUE(has_word(t, "netdev"));
}

TEST(ToolFields, DeviceSettingsKeysInJsonAndText) {
    Config c;
    c.dev = DevId{3, "rxecc0", "veth0"};
    const auto j = to_json(c);
    const std::string t = to_text(std::vector<Config>{c});
    for (const auto& k : knobs()) {
        SCOPED_TRACE(k.name);
        EXPECT_TRUE(k.dcqcn_index >= 0 ? j["dcqcn"].contains(k.name) : j.contains(k.name));
        EXPECT_TRUE(has_word(t, k.name));
    }
    for (const char* key : {"dev", "index", "netdev", "profile", "dscp2prio"}) {
        EXPECT_TRUE(j.contains(key)) << key;
        EXPECT_TRUE(has_word(t, key)) << key;
    }
}

TEST(ToolFields, CountersKeysInJsonAndText) {
    Stats s;
    s.dev = DevId{3, "rxecc0", "veth0"};
    s.counters = {{"sent_pkts", 5}, {"np_cnp_sent", 2}};
    const auto j = to_json(s);
    const std::string t = to_text(std::vector<Stats>{s});
    for (const auto& c : s.counters) {
        EXPECT_TRUE(j["counters"].contains(c.name));
        EXPECT_TRUE(has_word(t, c.name));
    }
}

// Every option of a qdisc table is settable at both ends of its range and
// refused one past them, with one line naming it, the value and the range.
TEST(ToolFields, QdiscOptionRanges) {
    auto walk = [](auto fields) {
        for (const auto& f : fields) {
            if (f.option.empty()) continue;
            SCOPED_TRACE(std::string(f.option));
            if (f.unit == Unit::trust || f.unit == Unit::wd_action) continue;  // words only
            const std::string opt(f.option);
            EXPECT_EQ(code_of([&] {
                          (void)parse({"qdisc", "add", "dev", "x", opt, std::to_string(f.min)});
                      }),
                      Exit::ok);
            EXPECT_EQ(code_of([&] {
                          (void)parse({"qdisc", "add", "dev", "x", opt, std::to_string(f.max)});
                      }),
                      Exit::ok);
            if (f.min > 0) {
                const std::string below = std::to_string(f.min - 1);
                EXPECT_EQ(message_of([&] {
                              (void)parse({"qdisc", "add", "dev", "x", opt, below});
                          }).rfind(opt + ": out of range ", 0),
                          0U);
            }
            if (f.max < UINT32_MAX) {
                const std::string above = std::to_string(uint64_t{f.max} + 1);
                EXPECT_EQ(code_of([&] {
                              (void)parse({"qdisc", "add", "dev", "x", opt, above});
                          }),
                          Exit::bad_value);
            }
        }
    };
    walk(qdisc_port_fields());
    walk(qdisc_prio_fields());
}

// The bugs of issue 22: times past 32 bits of ns, count 0, two byte parsers.
TEST(ToolFields, ParsedValuesInRange) {
    // delay 5s was 5e9 ns: 0.705 s in 32 bits. The kernel takes up to 1 s.
    EXPECT_EQ(code_of([] {
                  (void)parse({"qdisc", "add", "dev", "x", "delay", "5s"});
              }),
              Exit::bad_value);
    EXPECT_EQ(message_of([] {
                  (void)parse({"qdisc", "add", "dev", "x", "delay", "5s"});
              }),
              "delay: out of range 0..1000000 us ('5s')");
    EXPECT_EQ(parse({"qdisc", "add", "dev", "x", "delay", "1s"}).qdisc.opt[TCA_PFC_DELAY],
              1000000000U);
    EXPECT_EQ(code_of([] { (void)parse({"monitor", "count", "0"}); }), Exit::bad_value);
    EXPECT_EQ(message_of([] {
                  (void)parse({"monitor", "count", "0"});
              }),
              "count: out of range 1..4294967295 refreshes ('0')");
    EXPECT_EQ(parse({"monitor", "count", "1"}).count, 1U);
    // One byte parser: both spellings in both places.
    for (const auto& [text, bytes] :
         std::vector<std::pair<std::string, uint32_t>>{{"1GiB", 1U << 30U}, {"1.5MiB", 1572864}}) {
        SCOPED_TRACE(text);
        auto q = parse({"qdisc", "add", "dev", "x", "limit", text});
        EXPECT_EQ(q.qdisc.prio[0].opt[TCA_PFC_PRIO_LIMIT], bytes);
        auto d = parse({"dcqcn", "set", "defaults", "tx_qlimit", text});
        ASSERT_EQ(d.settings.size(), 1U);
        EXPECT_EQ(d.settings[0].value, bytes);
    }
    // Past the kernel's 1 GiB for tx_qlimit, past 32 bits for limit.
    EXPECT_EQ(code_of([] {
                  (void)parse({"dcqcn", "set", "defaults", "tx_qlimit", "2GiB"});
              }),
              Exit::bad_value);
    EXPECT_EQ(code_of([] {
                  (void)parse({"qdisc", "add", "dev", "x", "limit", "4GiB"});
              }),
              Exit::bad_value);
    EXPECT_EQ(code_of([] {
                  (void)parse({"qdisc", "add", "dev", "x", "limit", "0"});
              }),
              Exit::bad_value);
}

}  // namespace
}  // namespace rxecc::tool
