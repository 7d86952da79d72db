// The rxecc tool without a kernel: values and units, the command line,
// request building, error mapping and output formatting.
#include <gtest/gtest.h>
#include <linux/genetlink.h>
#include <rdma/rxecc_netlink.h>

#include <cerrno>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cli.hpp"
#include "errors.hpp"
#include "format.hpp"
#include "netlink_client.hpp"
#include "params.hpp"
#include "tool_test_util.hpp"

namespace rxecc::tool {
namespace {

const Knob& knob(const char* name) {
    const Knob* k = find_knob(name);
    EXPECT_NE(k, nullptr) << name;
    return *k;
}

using test::code_of;
using test::message_of;
using test::parse;

TEST(ToolValues, TimesInMicroseconds) {
    const Knob& t = knob("rp_time_reset");
    EXPECT_EQ(parse_value(t, "300"), 300U);
    EXPECT_EQ(parse_value(t, "300us"), 300U);
    EXPECT_EQ(parse_value(t, "1.5ms"), 1500U);
    EXPECT_EQ(parse_value(t, "1s"), 1000000U);
    EXPECT_EQ(parse_value(t, "4000ns"), 4U);
    EXPECT_EQ(parse_value(t, "0.25MS"), 250U);
    // Not a whole number of microseconds, or no time at all.
    EXPECT_EQ(code_of([&] { (void)parse_value(t, "1500ns"); }), Exit::bad_value);
    EXPECT_EQ(code_of([&] { (void)parse_value(t, "1.2345ms"); }), Exit::bad_value);
    EXPECT_EQ(code_of([&] { (void)parse_value(t, "3h"); }), Exit::bad_value);
}

TEST(ToolValues, RatesInMbps) {
    const Knob& r = knob("rp_ai_rate");
    EXPECT_EQ(parse_value(r, "5"), 5U);
    EXPECT_EQ(parse_value(r, "5mbit"), 5U);
    EXPECT_EQ(parse_value(r, "25gbit"), 25000U);
    EXPECT_EQ(parse_value(r, "2000kbit"), 2U);
    EXPECT_EQ(parse_value(r, "1.5Gbit"), 1500U);
    EXPECT_EQ(code_of([&] { (void)parse_value(r, "500kbit"); }), Exit::bad_value);
    // tc's "mbps" means megabytes: refused rather than misread.
    EXPECT_EQ(code_of([&] { (void)parse_value(r, "5mbps"); }), Exit::bad_value);
}

TEST(ToolValues, RatesInKbps) {
    const Knob& r = knob("rp_ai_rate_kbps");
    EXPECT_EQ(parse_value(r, "50"), 50U);
    EXPECT_EQ(parse_value(r, "50kbit"), 50U);
    EXPECT_EQ(parse_value(r, "1.5mbit"), 1500U);
    EXPECT_EQ(parse_value(r, "25gbit"), 25000000U);
    EXPECT_EQ(code_of([&] { (void)parse_value(r, "0.5kbit"); }), Exit::bad_value);
    EXPECT_EQ(&base_knob(knob("rp_ai_rate")), &r);
    EXPECT_EQ(&base_knob(r), &r);
    EXPECT_EQ(&base_knob(knob("rp_gd")), &knob("rp_gd"));
}

// A rate given under its mlx5 name goes there in whole Mbit/s, and to the
// kbit/s twin otherwise, so that old kernels see no new attribute.
TEST(ToolValues, SettingAFinerRateUsesTheKbpsTwin) {
    const Knob& m = knob("rp_ai_rate");
    auto [k, v] = parse_setting(m, "5");
    EXPECT_EQ(k, &m);
    EXPECT_EQ(v, 5U);
    std::tie(k, v) = parse_setting(m, "2000kbit");
    EXPECT_EQ(k, &m);
    EXPECT_EQ(v, 2U);
    std::tie(k, v) = parse_setting(m, "50kbit");
    EXPECT_EQ(k, &knob("rp_ai_rate_kbps"));
    EXPECT_EQ(v, 50U);
    std::tie(k, v) = parse_setting(m, "1.25");
    EXPECT_EQ(k, &knob("rp_ai_rate_kbps"));
    EXPECT_EQ(v, 1250U);
    std::tie(k, v) = parse_setting(knob("rp_gd"), "3");
    EXPECT_EQ(k, &knob("rp_gd"));
    EXPECT_EQ(code_of([&] { (void)parse_setting(m, "5mbps"); }), Exit::bad_value);
}

TEST(ToolValues, ByteCounterIn64ByteUnits) {
    const Knob& b = knob("rp_byte_reset");
    EXPECT_EQ(parse_value(b, "32767"), 32767U);
    EXPECT_EQ(parse_value(b, "2MiB"), 32768U);
    EXPECT_EQ(parse_value(b, "640B"), 10U);
    EXPECT_EQ(parse_value(b, "64KB"), 1000U);
    EXPECT_EQ(code_of([&] { (void)parse_value(b, "100B"); }), Exit::bad_value);
}

TEST(ToolValues, OtherKinds) {
    EXPECT_EQ(parse_value(knob("rp_min_dec_fac"), "50%"), 50U);
    EXPECT_EQ(parse_value(knob("rp_min_dec_fac"), "50"), 50U);
    EXPECT_EQ(parse_value(knob("rp_clamp_tgt_rate"), "on"), 1U);
    EXPECT_EQ(parse_value(knob("rp_clamp_tgt_rate"), "false"), 0U);
    EXPECT_EQ(parse_value(knob("rp_gd"), "0x0b"), 11U);
    EXPECT_EQ(parse_value(knob("rp_enable"), "all"), 0xffU);
    EXPECT_EQ(parse_value(knob("np_enable"), "none"), 0U);
    EXPECT_EQ(parse_value(knob("np_enable"), "0x48"), 0x48U);
    EXPECT_EQ(parse_value(knob("ecn"), "ect0"), 2U);
    EXPECT_EQ(parse_value(knob("ecn"), "ECT1"), 1U);
    EXPECT_EQ(parse_value(knob("ecn"), "av"), 0U);
    EXPECT_EQ(code_of([&] { (void)parse_value(knob("ecn"), "ce"); }), Exit::bad_value);
    EXPECT_EQ(code_of([&] { (void)parse_value(knob("rp_clamp_tgt_rate"), "2"); }), Exit::bad_value);
    EXPECT_EQ(parse_value(knob("udp_sport"), "flow_label"), uint32_t{RXECC_UDP_SPORT_FLOW_LABEL});
    EXPECT_EQ(parse_value(knob("udp_sport"), "QPN"), uint32_t{RXECC_UDP_SPORT_QPN});
    EXPECT_EQ(message_of([&] { (void)parse_value(knob("udp_sport"), "1"); }),
              "udp_sport: '1' is not a source port policy (flow_label, qpn)");
}

TEST(ToolValues, ManyDecimalsAreRefusedNotACrash) {
    const std::string tiny = "0." + std::string(130, '0') + "1";
    EXPECT_EQ(code_of([&] { (void)parse_value(knob("rp_time_reset"), tiny + "ms"); }),
              Exit::bad_value);
    EXPECT_EQ(code_of([&] { (void)parse_value(knob("tx_qlimit"), tiny + "KiB"); }),
              Exit::bad_value);
    // 18 decimals are still read exactly
    EXPECT_EQ(parse_value(knob("rp_time_reset"), "1.000000000000000000ms"), 1000U);
}

TEST(ToolValues, WrongTypeAndOverflowNameTheKnob) {
    const Knob& g = knob("rp_gd");
    for (const char* bad : {"abc", "-1", "", "1e3", "4294967296", "0x", "1.5", "12 "}) {
        SCOPED_TRACE(bad);
        EXPECT_EQ(code_of([&] { (void)parse_value(g, bad); }), Exit::bad_value);
        EXPECT_NE(message_of([&] { (void)parse_value(g, bad); }).find("rp_gd"), std::string::npos);
    }
    // The range of the core's table (the kernel's policy): one line naming
    // the knob, the value and the range.
    EXPECT_EQ(parse_value(g, "15"), 15U);
    for (const char* out : {"16", "4294967295"}) {
        EXPECT_EQ(code_of([&] { (void)parse_value(g, out); }), Exit::bad_value);
        EXPECT_EQ(message_of([&] { (void)parse_value(g, out); }),
                  "rp_gd: out of range 0..15 log2 ('" + std::string(out) + "')");
    }
}

TEST(ToolValues, FormatIsTheInputForm) {
    for (const auto& k : knobs()) {
        SCOPED_TRACE(k.name);
        for (uint32_t v : {k.min, k.max}) EXPECT_EQ(parse_value(k, format_value(k, v)), v);
    }
    EXPECT_EQ(format_value(knob("rp_enable"), 0x0f), "0x0f");
    EXPECT_EQ(format_value(knob("ecn"), 2), "ect0");
    EXPECT_EQ(format_value(knob("udp_sport"), RXECC_UDP_SPORT_QPN), "qpn");
    EXPECT_EQ(format_kbps(40000000), "40 Gbit/s");
    EXPECT_EQ(format_kbps(12500), "12.5 Mbit/s");
    EXPECT_EQ(format_kbps(900), "900 kbit/s");
}

// The uAPI numbers the DCQCN attributes in the order of the core's table.
TEST(ToolParams, UapiOrderMatchesTheCoreTable) {
    const std::vector<std::pair<int, const char*>> pairs = {
        {RXECC_DCQCN_A_RP_CLAMP_TGT_RATE, "rp_clamp_tgt_rate"},
        {RXECC_DCQCN_A_RP_CLAMP_TGT_RATE_ATI, "rp_clamp_tgt_rate_ati"},
        {RXECC_DCQCN_A_RP_TIME_RESET, "rp_time_reset"},
        {RXECC_DCQCN_A_RP_BYTE_RESET, "rp_byte_reset"},
        {RXECC_DCQCN_A_RP_THRESHOLD, "rp_threshold"},
        {RXECC_DCQCN_A_RP_AI_RATE, "rp_ai_rate"},
        {RXECC_DCQCN_A_RP_HAI_RATE, "rp_hai_rate"},
        {RXECC_DCQCN_A_RP_MAX_RATE, "rp_max_rate"},
        {RXECC_DCQCN_A_RP_MIN_DEC_FAC, "rp_min_dec_fac"},
        {RXECC_DCQCN_A_RP_MIN_RATE, "rp_min_rate"},
        {RXECC_DCQCN_A_RP_RATE_TO_SET_ON_FIRST_CNP, "rp_rate_to_set_on_first_cnp"},
        {RXECC_DCQCN_A_RP_DCE_TCP_G, "rp_dce_tcp_g"},
        {RXECC_DCQCN_A_RP_DCE_TCP_RTT, "rp_dce_tcp_rtt"},
        {RXECC_DCQCN_A_RP_RATE_REDUCE_MONITOR_PERIOD, "rp_rate_reduce_monitor_period"},
        {RXECC_DCQCN_A_RP_INITIAL_ALPHA_VALUE, "rp_initial_alpha_value"},
        {RXECC_DCQCN_A_RP_GD, "rp_gd"},
        {RXECC_DCQCN_A_NP_MIN_TIME_BETWEEN_CNPS, "np_min_time_between_cnps"},
        {RXECC_DCQCN_A_NP_CNP_DSCP, "np_cnp_dscp"},
        {RXECC_DCQCN_A_NP_CNP_PRIO, "np_cnp_prio"},
        {RXECC_DCQCN_A_RP_AI_RATE_KBPS, "rp_ai_rate_kbps"},
        {RXECC_DCQCN_A_RP_HAI_RATE_KBPS, "rp_hai_rate_kbps"},
        {RXECC_DCQCN_A_RP_MAX_RATE_KBPS, "rp_max_rate_kbps"},
        {RXECC_DCQCN_A_RP_MIN_RATE_KBPS, "rp_min_rate_kbps"},
        {RXECC_DCQCN_A_RP_RATE_TO_SET_ON_FIRST_CNP_KBPS, "rp_rate_to_set_on_first_cnp_kbps"},
    };
    ASSERT_EQ(pairs.size(), static_cast<size_t>(RXECC_DCQCN_A_MAX));
    for (const auto& [attr, name] : pairs) {
        const Knob& k = knob(name);
        EXPECT_EQ(k.dcqcn_index + 1, attr) << name;
    }
}

TEST(ToolCli, ReadCommands) {
    auto c = parse({"-j", "-p", "dcqcn", "show", "dev", "rxecc0"});
    EXPECT_EQ(c.verb, Verb::dcqcn_show);
    EXPECT_TRUE(c.json && c.pretty);
    EXPECT_EQ(c.dev.value_or(""), "rxecc0");
    c = parse({"dcqcn"});
    EXPECT_EQ(c.verb, Verb::dcqcn_show);
    EXPECT_FALSE(c.dev);
    c = parse({"dcqcn", "show", "defaults"});
    EXPECT_TRUE(c.defaults);
    c = parse({"-n", "h1", "-j", "qp"});
    EXPECT_EQ(c.netns, "h1");
    EXPECT_EQ(c.verb, Verb::qp_show);
    EXPECT_TRUE(c.json);
    EXPECT_EQ(parse({"--netns", "/proc/1/ns/net", "stats"}).netns, "/proc/1/ns/net");
    c = parse({"-jp", "stats"});
    EXPECT_EQ(c.verb, Verb::stats_show);
    EXPECT_TRUE(c.json && c.pretty);
    c = parse({"stats", "show", "dev", "a"});
    EXPECT_EQ(c.dev.value_or(""), "a");
    c = parse({"stats", "reset", "dev", "a"});
    EXPECT_EQ(c.verb, Verb::stats_reset);
    c = parse({"qp", "show", "dev", "b"});
    EXPECT_EQ(c.verb, Verb::qp_show);
    EXPECT_EQ(c.dev.value_or(""), "b");
    c = parse({"monitor", "dev", "a", "interval", "0.5", "count", "3"});
    EXPECT_EQ(c.verb, Verb::monitor);
    EXPECT_EQ(c.interval_ms, 500U);
    EXPECT_EQ(c.count.value_or(0), 3U);
    EXPECT_EQ(parse({"monitor", "interval", "250ms"}).interval_ms, 250U);
}

TEST(ToolCli, SetAndProfile) {
    auto c = parse({"dcqcn", "set", "dev", "r0", "rp_ai_rate", "1gbit", "ecn", "ect1",
                    "rp_time_reset", "2ms"});
    EXPECT_EQ(c.verb, Verb::dcqcn_set);
    ASSERT_EQ(c.settings.size(), 3U);
    EXPECT_EQ(c.settings[0].knob->name, "rp_ai_rate");
    EXPECT_EQ(c.settings[0].value, 1000U);
    EXPECT_EQ(c.settings[1].value, 1U);
    EXPECT_EQ(c.settings[2].value, 2000U);
    c = parse({"dcqcn", "set", "defaults", "np_cnp_dscp", "26"});
    EXPECT_TRUE(c.defaults);
    c = parse({"dcqcn", "profile", "dev", "r0", "paper"});
    EXPECT_EQ(c.verb, Verb::dcqcn_profile);
    EXPECT_EQ(c.profile, "paper");
    EXPECT_EQ(c.profile_kbps, 0U);
    c = parse({"dcqcn", "profile", "dev", "r0", "paper", "scale", "50mbit"});
    EXPECT_EQ(c.profile, "paper");
    EXPECT_EQ(c.profile_kbps, 50000U);
    c = parse({"dcqcn", "profile", "defaults", "mlx5", "scale", "2.5gbit"});
    EXPECT_EQ(c.profile_kbps, 2500000U);
    c = parse({"dcqcn", "profile", "defaults", "paper", "scale", "50"});  // Mbit/s
    EXPECT_EQ(c.profile_kbps, 50000U);
    c = parse({"dcqcn", "profile", "defaults", "paper", "scale", "500kbit"});
    EXPECT_EQ(c.profile_kbps, 500U);
    EXPECT_EQ(c.profile_speedup, 0U);
    c = parse({"dcqcn", "profile", "dev", "r0", "paper", "scale", "25mbit", "speedup", "16"});
    EXPECT_EQ(c.profile_kbps, 25000U);
    EXPECT_EQ(c.profile_speedup, 16U);
    c = parse({"dcqcn", "set", "dev", "r0", "rp_hai_rate", "250kbit"});
    ASSERT_EQ(c.settings.size(), 1U);
    EXPECT_EQ(c.settings[0].knob->name, "rp_hai_rate_kbps");
    EXPECT_EQ(c.settings[0].value, 250U);
}

TEST(ToolCli, ErrorsHaveTheirOwnCodes) {
    using A = std::vector<std::string>;
    const std::vector<std::pair<A, Exit>> cases = {
        {{}, Exit::usage},
        {{"--bogus"}, Exit::usage},
        {{"-n"}, Exit::usage},
        {{"-n", "", "qp"}, Exit::usage},
        {{"nothing"}, Exit::usage},
        {{"dcqcn", "frob"}, Exit::usage},
        {{"dcqcn", "set", "rp_gd", "3"}, Exit::usage},
        {{"dcqcn", "set", "dev", "r0"}, Exit::usage},
        {{"dcqcn", "set", "dev"}, Exit::usage},
        {{"dcqcn", "set", "dev", "r0", "rp_gd"}, Exit::usage},
        {{"dcqcn", "set", "dev", "r0", "rp_gd", "3", "rp_gd", "4"}, Exit::usage},
        {{"dcqcn", "set", "dev", "r0", "rp_nope", "3"}, Exit::unknown_param},
        {{"dcqcn", "set", "dev", "r0", "rp_gd", "three"}, Exit::bad_value},
        {{"dcqcn", "profile", "dev", "r0", "mlx4"}, Exit::bad_value},
        {{"dcqcn", "profile", "dev", "r0", "paper", "scale"}, Exit::usage},
        {{"dcqcn", "profile", "dev", "r0", "paper", "at", "50mbit"}, Exit::usage},
        {{"dcqcn", "profile", "dev", "r0", "paper", "scale", "0"}, Exit::bad_value},
        {{"dcqcn", "profile", "dev", "r0", "paper", "scale", "fast"}, Exit::bad_value},
        {{"dcqcn", "profile", "dev", "r0", "paper", "scale", "500gbit"}, Exit::bad_value},
        {{"dcqcn", "profile", "dev", "r0", "lab", "scale", "50mbit"}, Exit::bad_value},
        {{"dcqcn", "profile", "dev", "r0", "paper", "scale", "50mbit", "x"}, Exit::usage},
        {{"dcqcn", "profile", "dev", "r0", "paper", "scale", "50mbit", "speedup"}, Exit::usage},
        {{"dcqcn", "profile", "dev", "r0", "paper", "scale", "50mbit", "speedup", "0"},
         Exit::bad_value},
        {{"dcqcn", "profile", "dev", "r0", "paper", "scale", "50mbit", "speedup", "1025"},
         Exit::bad_value},
        {{"dcqcn", "profile", "dev", "r0", "paper", "scale", "50mbit", "speedup", "2.5"},
         Exit::bad_value},
        {{"dcqcn", "profile", "dev", "r0", "paper", "speedup", "16"}, Exit::usage},
        {{"dcqcn", "profile", "dev", "r0", "paper", "scale", "50mbit", "speedup", "2", "x"},
         Exit::usage},
        {{"dcqcn", "set", "dev", "r0", "rp_ai_rate", "5", "rp_ai_rate_kbps", "50"}, Exit::usage},
        {{"dcqcn", "set", "dev", "r0", "rp_min_rate_kbps", "5", "rp_min_rate", "50kbit"},
         Exit::usage},
        {{"dcqcn", "set", "dev", "r0", "rp_ai_rate", "0.5", "rp_ai_rate", "1"}, Exit::usage},
        {{"dcqcn", "show", "dev", "r0", "extra"}, Exit::usage},
        {{"stats", "reset"}, Exit::usage},
        {{"stats", "reset", "defaults"}, Exit::usage},
        {{"qp", "show", "defaults"}, Exit::usage},
        {{"monitor", "interval", "0.01"}, Exit::bad_value},
        {{"monitor", "count", "x"}, Exit::bad_value},
        {{"monitor", "often"}, Exit::usage},
        {{"help", "nothing"}, Exit::usage},
    };
    for (const auto& c : cases) {
        std::string joined;
        for (const auto& a : c.first) joined += a + " ";
        SCOPED_TRACE(joined);
        EXPECT_EQ(code_of([&] { (void)parse(c.first); }), c.second);
    }
}

TEST(ToolCli, HelpEverywhere) {
    for (const auto& args : std::vector<std::vector<std::string>>{{"--help"},
                                                                  {"-h"},
                                                                  {"help"},
                                                                  {"help", "dcqcn"},
                                                                  {"dcqcn", "help"},
                                                                  {"dcqcn", "set", "--help"},
                                                                  {"stats", "-h"},
                                                                  {"qp", "help"},
                                                                  {"monitor", "--help"}}) {
        auto c = parse(args);
        EXPECT_EQ(c.verb, Verb::help);
        EXPECT_FALSE(help_text(c.help_topic).empty());
    }
    EXPECT_EQ(parse({"dcqcn", "--help"}).help_topic, "dcqcn");
    // The dcqcn help lists every knob.
    const std::string h = help_text("dcqcn");
    for (const auto& k : knobs()) EXPECT_NE(h.find(k.name), std::string::npos) << k.name;
}

// A set request: the values where the uAPI puts them, and errors the
// kernel points at mapped back to the knob's name.
TEST(ToolRequest, SetRequestLayoutAndErrorMapping) {
    auto c = parse({"dcqcn", "set", "dev", "r0", "rp_ai_rate", "7", "rp_gd", "12", "ecn", "ect1"});
    auto msg = set_request(42, c);
    const nlmsghdr* nlh = msg.header();
    EXPECT_EQ(nlh->nlmsg_type, 42);
    auto tb = nl::parse(nlh, sizeof(genlmsghdr), RXECC_ATTR_MAX);
    ASSERT_NE(tb[RXECC_ATTR_DEV_NAME], nullptr);
    EXPECT_EQ(nl::get_str(tb[RXECC_ATTR_DEV_NAME]), "r0");
    ASSERT_NE(tb[RXECC_ATTR_ECN], nullptr);
    EXPECT_EQ(nl::get_u8(tb[RXECC_ATTR_ECN]), 1);
    ASSERT_NE(tb[RXECC_ATTR_DCQCN], nullptr);
    EXPECT_NE(tb[RXECC_ATTR_DCQCN]->nla_type & NLA_F_NESTED, 0);
    auto p = nl::parse_nested(tb[RXECC_ATTR_DCQCN], RXECC_DCQCN_A_MAX);
    ASSERT_NE(p[RXECC_DCQCN_A_RP_GD], nullptr);
    EXPECT_EQ(nl::get_u32(p[RXECC_DCQCN_A_RP_GD]), 12U);
    EXPECT_EQ(nl::get_u32(p[RXECC_DCQCN_A_RP_AI_RATE]), 7U);

    // NOLINTNEXTLINE(*-reinterpret-cast): byte offsets
    const auto* base = reinterpret_cast<const uint8_t*>(nlh);
    const auto gd_off =
        // NOLINTNEXTLINE(*-reinterpret-cast): byte offsets
        static_cast<uint32_t>(reinterpret_cast<const uint8_t*>(p[RXECC_DCQCN_A_RP_GD]) - base);
    auto path = nl::attr_path_at(msg, gd_off);
    ASSERT_EQ(path.size(), 2U);
    EXPECT_EQ(path[1], RXECC_DCQCN_A_RP_GD);

    // The kernel's own message already names it: used as it is.
    auto e = explain({ERANGE, "rp_gd: out of range 0..15 log2", gd_off}, msg, "r0");
    EXPECT_EQ(e.code(), Exit::bad_value);
    EXPECT_EQ(std::string(e.what()), "rp_gd: out of range 0..15 log2");
    // A generic policy message gets the knob's name in front.
    const auto ecn_off = static_cast<uint32_t>(
        // NOLINTNEXTLINE(*-reinterpret-cast): byte offsets
        reinterpret_cast<const uint8_t*>(tb[RXECC_ATTR_ECN]) - base);
    e = explain({EINVAL, "integer out of range", ecn_off}, msg, "r0");
    EXPECT_EQ(e.code(), Exit::bad_value);
    EXPECT_EQ(std::string(e.what()), "ecn: integer out of range");
    const auto dev_off = static_cast<uint32_t>(
        // NOLINTNEXTLINE(*-reinterpret-cast): byte offsets
        reinterpret_cast<const uint8_t*>(tb[RXECC_ATTR_DEV_NAME]) - base);
    e = explain({ENODEV, "DEV_NAME: no rxecc device of that name", dev_off}, msg, "r0");
    EXPECT_EQ(e.code(), Exit::no_device);
    EXPECT_EQ(std::string(e.what()), "device 'r0': no rxecc device of that name");
    EXPECT_EQ(explain({EOPNOTSUPP, "DEV_NAME: not an rxecc device", dev_off}, msg, "r0").code(),
              Exit::not_rxecc);
    EXPECT_EQ(explain({EPERM, "", std::nullopt}, msg, "r0").code(), Exit::permission);
    EXPECT_EQ(explain({ENOMEM, "", std::nullopt}, msg, "r0").code(), Exit::system);
}

Config sample_config() {
    Config c;
    c.dev = DevId{3, "rxecc0", "veth0"};
    c.line_kbps = 25000000;
    c.profile = "mlx5";
    for (const auto& k : knobs())
        if (k.dcqcn_index >= 0) c.values[k.index] = 1;
    c.values[RXECC_DCQCN_A_RP_TIME_RESET - 1] = 300;
    set_knob(c, "rp_enable", 0xff);
    set_knob(c, "np_enable", 0x08);
    set_knob(c, "ecn", 2);
    return c;
}

// A reply message as the kernel builds it decodes into the same values.
TEST(ToolRequest, DecodeConfigReply) {
    nl::Message m(42, RXECC_CMD_DEV_GET, 1, 0);
    m.put_u32(RXECC_ATTR_DEV_INDEX, 3);
    m.put_str(RXECC_ATTR_DEV_NAME, "rxecc0");
    m.put_str(RXECC_ATTR_NETDEV, "veth0");
    const uint64_t line = 25000000;
    m.put_raw(RXECC_ATTR_LINE_KBPS, &line, sizeof(line));
    m.put_str(RXECC_ATTR_PROFILE, "custom");
    m.put_u8(RXECC_ATTR_RP_ENABLE, 0x0f);
    m.put_u8(RXECC_ATTR_NP_ENABLE, 0xf0);
    m.put_u8(RXECC_ATTR_ECN, 1);
    m.put_u8(RXECC_ATTR_UDP_SPORT, RXECC_UDP_SPORT_QPN);
    auto* nest = m.nest_start(RXECC_ATTR_DCQCN);
    m.put_u32(RXECC_DCQCN_A_RP_GD, 9);
    m.put_u32(RXECC_DCQCN_A_NP_CNP_PRIO, 3);
    m.nest_end(nest);
    auto c = decode_config(m.header());
    ASSERT_TRUE(c.dev);
    EXPECT_EQ(c.dev->name, "rxecc0");
    EXPECT_EQ(c.dev->index, 3U);
    EXPECT_EQ(c.line_kbps, line);
    EXPECT_EQ(c.profile, "custom");
    EXPECT_EQ(knob_value(c, knob("rp_gd")), 9U);
    EXPECT_EQ(knob_value(c, knob("np_cnp_prio")), 3U);
    EXPECT_EQ(knob_value(c, knob("rp_enable")), 0x0fU);
    EXPECT_EQ(knob_value(c, knob("np_enable")), 0xf0U);
    EXPECT_EQ(knob_value(c, knob("ecn")), 1U);
    EXPECT_EQ(knob_value(c, knob("udp_sport")), uint32_t{RXECC_UDP_SPORT_QPN});
}

// A rate's mlx5 name shows whole Mbit/s as a number and anything else in
// kbit/s with the unit, the form `dcqcn set` takes back for the same value.
TEST(ToolFormat, RatesUnderTheirMlx5NameReadBack) {
    Config c = sample_config();
    c.values[RXECC_DCQCN_A_RP_AI_RATE_KBPS - 1] = 50;
    c.values[RXECC_DCQCN_A_RP_AI_RATE - 1] = 0;  // the kernel's rounded-down view
    c.values[RXECC_DCQCN_A_RP_HAI_RATE_KBPS - 1] = 7000;
    c.values[RXECC_DCQCN_A_RP_HAI_RATE - 1] = 7;
    const std::string t = to_text(std::vector<Config>{c});
    const auto row = [&](const std::string& name) {
        const size_t at = t.find("  " + name + " ");
        return at == std::string::npos ? std::string() : t.substr(at, t.find('\n', at) - at);
    };
    EXPECT_NE(row("rp_ai_rate").find(" 50kbit  Mbps"), std::string::npos) << row("rp_ai_rate");
    EXPECT_NE(row("rp_ai_rate_kbps").find(" 50  kbps"), std::string::npos)
        << row("rp_ai_rate_kbps");
    EXPECT_NE(row("rp_hai_rate").find(" 7  Mbps"), std::string::npos) << row("rp_hai_rate");
    const auto [k, v] = parse_setting(knob("rp_ai_rate"), "50kbit");
    EXPECT_EQ(k, &knob("rp_ai_rate_kbps"));
    EXPECT_EQ(v, 50U);
}

TEST(ToolFormat, ConfigTextIsAligned) {
    const std::string t = to_text(std::vector<Config>{sample_config()});
    std::istringstream in(t);
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, "dev rxecc0 index 3 netdev veth0 line 25 Gbit/s profile mlx5");
    size_t rows = 0;
    size_t value_end = std::string::npos;
    while (std::getline(in, line)) {
        ++rows;
        // Values end in one column (right aligned), then two spaces, the unit.
        const size_t unit_at = line.rfind("  ");
        ASSERT_NE(unit_at, std::string::npos) << line;
        if (value_end == std::string::npos) value_end = unit_at;
        EXPECT_EQ(unit_at, value_end) << line;
    }
    EXPECT_EQ(rows, knobs().size() + 1);  // and the DSCP map
    EXPECT_NE(t.find("rp_time_reset"), std::string::npos);
    EXPECT_NE(t.find("0x08"), std::string::npos);
}

TEST(ToolFormat, JsonKeysAreStable) {
    auto j = to_json(sample_config());
    for (const char* key : {"dev", "index", "netdev", "line_kbps", "profile", "rp_enable",
                            "np_enable", "ecn", "dcqcn"})
        EXPECT_TRUE(j.contains(key)) << key;
    EXPECT_EQ(j["dcqcn"].size(), static_cast<size_t>(RXECC_DCQCN_A_MAX));
    EXPECT_EQ(j["dcqcn"]["rp_time_reset"], 300);
    EXPECT_EQ(j["ecn"], "ect0");
    Config d = sample_config();
    d.dev.reset();
    EXPECT_EQ(to_json(d)["defaults"], true);
    EXPECT_FALSE(to_json(d).contains("dev"));

    Qp q;
    q.dev = DevId{1, "r0", "v0"};
    q.qpn = 17;
    q.type = 2;
    q.state = 3;
    q.limited = true;
    q.rate_kbps = 12500;
    auto jq = to_json(q);
    for (const char* key :
         {"dev", "qpn", "type", "state", "dest_qpn", "prio", "limited", "rate_kbps", "target_kbps",
          "alpha_ppm", "t_stage", "bc_stage", "cnp_handled", "cnp_sent", "rp_tx_deferred"})
        EXPECT_TRUE(jq.contains(key)) << key;
    EXPECT_EQ(jq["type"], "RC");
    EXPECT_EQ(jq["state"], "RTS");
    EXPECT_EQ(dump(to_json(std::vector<Qp>{q}), false).back(), '\n');

    Stats s{DevId{1, "r0", "v0"}, {{"np_cnp_sent", 4}, {"rp_cnp_handled", 5}}};
    EXPECT_EQ(to_json(s)["counters"]["rp_cnp_handled"], 5);
}

TEST(ToolFormat, QpTableAndDiff) {
    Qp q;
    q.dev = DevId{1, "r0", "v0"};
    q.qpn = 17;
    q.type = 2;
    q.state = 3;
    q.rate_kbps = 12500;
    q.target_kbps = 40000;
    q.alpha_ppm = 500000;
    const std::string t = to_text(std::vector<Qp>{q});
    std::istringstream in(t);
    std::string header;
    std::string row;
    std::getline(in, header);
    std::getline(in, row);
    EXPECT_EQ(header.rfind("dev", 0), 0U);
    // Right-aligned numbers end under the end of their header; the column
    // is the JSON key and holds the JSON value.
    EXPECT_EQ(row.find(" 12500 ") + 6, header.find("rate_kbps") + 9);
    EXPECT_NE(row.find(" 500000 "), std::string::npos);
    EXPECT_NE(row.find(" RC "), std::string::npos);
    EXPECT_NE(row.find(" RTS "), std::string::npos);

    Config a = sample_config();
    Config b = a;
    b.values[RXECC_DCQCN_A_RP_TIME_RESET - 1] = 1000;
    set_knob(b, "ecn", 1);
    b.profile = "custom";
    EXPECT_EQ(config_diff(a, b),
              "rp_time_reset 300 -> 1000, ecn ect0 -> ect1, profile mlx5 -> custom");
    EXPECT_EQ(config_diff(a, a), "");
}

}  // namespace
}  // namespace rxecc::tool
