// The tool's PFC side without a kernel: the device's priority and PFC knobs,
// the DSCP map, and `rxecc qdisc` (command line, rtnetlink requests,
// decoding of the qdisc's dump, error mapping, output).
#include <gtest/gtest.h>
#include <linux/gen_stats.h>
#include <linux/genetlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/sch_pfc.h>
#include <rdma/rxecc_netlink.h>

#include <cerrno>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli.hpp"
#include "errors.hpp"
#include "netlink_client.hpp"
#include "params.hpp"
#include "qdisc.hpp"
#include "tool_test_util.hpp"

namespace rxecc::tool {
namespace {

using test::code_of;
using test::message_of;
using test::parse;

uint32_t offset_of(const nl::Message& m, const nlattr* a) {
    return static_cast<uint32_t>(
        reinterpret_cast<const uint8_t*>(a) -           // NOLINT(*-reinterpret-cast): byte offsets
        reinterpret_cast<const uint8_t*>(m.header()));  // NOLINT(*-reinterpret-cast): byte offsets
}

TEST(ToolPfcValues, MasksPrioritiesAndSpeeds) {
    const Knob* pfc = find_knob("pfc_enable");
    const Knob* prio = find_knob("roce_prio");
    const Knob* speed = find_knob("link_speed");
    ASSERT_TRUE(pfc != nullptr && prio != nullptr && speed != nullptr);
    // mlnx_qos's eight flags, priority 0 first.
    EXPECT_EQ(parse_value(*pfc, "0,0,0,1,0,0,0,0"), 0x08U);
    EXPECT_EQ(parse_value(*pfc, "1,1,1,1,1,1,1,1"), 0xffU);
    EXPECT_EQ(parse_value(*pfc, "0x18"), 0x18U);
    EXPECT_EQ(code_of([&] { (void)parse_value(*pfc, "0,0,0,2,0,0,0,0"); }), Exit::bad_value);
    EXPECT_EQ(code_of([&] { (void)parse_value(*pfc, "0,0,0,1,0,0,0,0,"); }), Exit::bad_value);
    EXPECT_EQ(parse_value(*prio, "dscp"), 8U);
    EXPECT_EQ(parse_value(*prio, "3"), 3U);
    EXPECT_EQ(code_of([&] { (void)parse_value(*prio, "8"); }), Exit::bad_value);
    EXPECT_EQ(format_value(*prio, 8), "dscp");
    EXPECT_EQ(parse_value(*speed, "auto"), 0U);
    EXPECT_EQ(parse_value(*speed, "25gbit"), 25000U);
    EXPECT_EQ(format_value(*speed, 0), "auto");
}

TEST(ToolPfcValues, QueueLimitAndWaitsTakeUnits) {
    const Knob* qlimit = find_knob("tx_qlimit");
    const Knob* xoff = find_knob("pfc_rx_xoff");
    ASSERT_TRUE(qlimit != nullptr && xoff != nullptr);
    EXPECT_EQ(parse_value(*qlimit, "64KiB"), 65536U);
    EXPECT_EQ(parse_value(*qlimit, "1MB"), 1000000U);
    EXPECT_EQ(parse_value(*qlimit, "1500"), 1500U);
    EXPECT_EQ(code_of([&] { (void)parse_value(*qlimit, "12 parsecs"); }), Exit::bad_value);
    EXPECT_EQ(parse_value(*xoff, "1ms"), 1000U);
    EXPECT_EQ(parse_value(*xoff, "250"), 250U);
    EXPECT_EQ(code_of([&] { (void)parse_value(*xoff, "1.5ns"); }), Exit::bad_value);
}

TEST(ToolPfcRequest, DeviceKnobsAndDscpMap) {
    auto c = parse({"dcqcn", "set", "dev", "r0", "pfc_enable", "0x08", "roce_prio", "3",
                    "link_speed", "1gbit", "dscp2prio", "26:5,0:1", "pfc_rx_xoff", "1ms",
                    "pfc_rx_xon", "200us", "tx_qlimit", "64KiB"});
    ASSERT_EQ(c.dscp2prio.size(), 2U);
    std::vector<uint8_t> base(kDscpCount, 7);
    auto msg = set_request(42, c, base);
    auto tb = nl::parse(msg.header(), sizeof(genlmsghdr), RXECC_ATTR_MAX);
    ASSERT_NE(tb[RXECC_ATTR_PFC_ENABLE], nullptr);
    EXPECT_EQ(nl::get_u8(tb[RXECC_ATTR_PFC_ENABLE]), 0x08);
    EXPECT_EQ(nl::get_u8(tb[RXECC_ATTR_ROCE_PRIO]), 3);
    EXPECT_EQ(nl::get_u32(tb[RXECC_ATTR_LINK_SPEED]), 1000U);
    EXPECT_EQ(nl::get_u32(tb[RXECC_ATTR_PFC_RX_XOFF]), 1000U);
    EXPECT_EQ(nl::get_u32(tb[RXECC_ATTR_PFC_RX_XON]), 200U);
    EXPECT_EQ(nl::get_u32(tb[RXECC_ATTR_TX_QLIMIT]), 65536U);
    ASSERT_NE(tb[RXECC_ATTR_DSCP2PRIO], nullptr);
    ASSERT_EQ(mnl_attr_get_payload_len(tb[RXECC_ATTR_DSCP2PRIO]), kDscpCount);
    const auto* map = static_cast<const uint8_t*>(mnl_attr_get_payload(tb[RXECC_ATTR_DSCP2PRIO]));
    // The changes on top of the current map; the rest as it was.
    EXPECT_EQ(map[26], 5);
    EXPECT_EQ(map[0], 1);
    EXPECT_EQ(map[27], 7);
    // `default` starts again from the top three bits of the DSCP.
    auto d = parse({"dcqcn", "set", "defaults", "dscp2prio", "default,46:6"});
    auto m2 = set_request(42, d, base);
    auto t2 = nl::parse(m2.header(), sizeof(genlmsghdr), RXECC_ATTR_MAX);
    const auto* map2 = static_cast<const uint8_t*>(mnl_attr_get_payload(t2[RXECC_ATTR_DSCP2PRIO]));
    EXPECT_EQ(map2[26], 3);
    EXPECT_EQ(map2[46], 6);
    for (const char* bad : {"64:1", "26:8", "26", ":3", "a:1", "26:3,"})
        EXPECT_EQ(code_of([&] {
                      (void)parse({"dcqcn", "set", "dev", "r0", "dscp2prio", bad});
                  }),
                  Exit::bad_value)
            << bad;
    // The kernel's complaint about the map is reported under its name.
    auto e =
        explain({ERANGE, "DSCP2PRIO: a priority above 7", offset_of(msg, tb[RXECC_ATTR_DSCP2PRIO])},
                msg, "r0");
    EXPECT_EQ(e.code(), Exit::bad_value);
    e = explain({EINVAL, "integer out of range", offset_of(msg, tb[RXECC_ATTR_ROCE_PRIO])}, msg,
                "r0");
    EXPECT_EQ(std::string(e.what()), "roce_prio: integer out of range");
    e = explain(
        {ERANGE, "pfc_rx_xon: not below pfc_rx_xoff", offset_of(msg, tb[RXECC_ATTR_PFC_RX_XON])},
        msg, "r0");
    EXPECT_EQ(std::string(e.what()), "pfc_rx_xon: not below pfc_rx_xoff");
}

TEST(ToolQdiscCli, OptionsPerPortAndPerPriority) {
    auto c = parse(
        {"qdisc", "add",   "dev",        "swp1",   "rate",  "50",   "pfc",    "0,0,0,1,0,0,0,0",
         "trust", "pcp",   "link_speed", "25gbit", "delay", "20us", "quanta", "1000",
         "xoff",  "24KiB", "xon",        "12KiB",  "prio",  "3",    "xoff",   "30KB",
         "kmax",  "1MB",   "pmax",       "50%"});
    EXPECT_EQ(c.verb, Verb::qdisc_set);
    const QdiscSpec& q = c.qdisc;
    EXPECT_EQ(q.op, QdiscSpec::Op::add);
    EXPECT_EQ(q.netdev, "swp1");
    EXPECT_EQ(q.opt[TCA_PFC_RATE], 50000000U);
    EXPECT_EQ(q.opt[TCA_PFC_ENABLE], 0x08);
    EXPECT_EQ(q.opt[TCA_PFC_TRUST], 1);
    EXPECT_EQ(q.opt[TCA_PFC_LINK_SPEED], 25000U);
    EXPECT_EQ(q.opt[TCA_PFC_DELAY], 20000U);
    EXPECT_EQ(q.opt[TCA_PFC_QUANTA], 1000);
    // The options before `prio` go to every priority unless it sets its own.
    EXPECT_EQ(q.prio[0].opt[TCA_PFC_PRIO_XOFF], 24576U);
    EXPECT_EQ(q.prio[3].opt[TCA_PFC_PRIO_XOFF], 30000U);
    EXPECT_EQ(q.prio[3].opt[TCA_PFC_PRIO_XON], 12288U);
    EXPECT_EQ(q.prio[3].opt[TCA_PFC_PRIO_KMAX], 1000000U);
    EXPECT_EQ(q.prio[3].opt[TCA_PFC_PRIO_PMAX], 50U);
    EXPECT_FALSE(q.prio[0].opt[TCA_PFC_PRIO_KMAX]);
    EXPECT_FALSE(q.prio[0].opt[TCA_PFC_PRIO_LIMIT]);
    EXPECT_EQ(parse({"qdisc"}).verb, Verb::qdisc_show);
    EXPECT_EQ(parse({"qdisc", "show", "dev", "x"}).qdisc.netdev, "x");
    EXPECT_EQ(parse({"qdisc", "del", "dev", "x"}).verb, Verb::qdisc_del);
    EXPECT_EQ(parse({"qdisc", "replace", "dev", "x"}).qdisc.op, QdiscSpec::Op::replace);
    EXPECT_EQ(code_of([] { (void)parse({"qdisc", "add"}); }), Exit::usage);
    EXPECT_EQ(code_of([] {
                  (void)parse({"qdisc", "add", "dev", "x", "bogus", "1"});
              }),
              Exit::usage);
    EXPECT_EQ(code_of([] {
                  (void)parse({"qdisc", "add", "dev", "x", "prio", "3", "rate", "5"});
              }),
              Exit::usage);
    EXPECT_EQ(code_of([] {
                  (void)parse({"qdisc", "add", "dev", "x", "prio", "8"});
              }),
              Exit::bad_value);
    EXPECT_EQ(code_of([] {
                  (void)parse({"qdisc", "add", "dev", "x", "xoff", "12q"});
              }),
              Exit::bad_value);
    EXPECT_EQ(code_of([] {
                  (void)parse({"qdisc", "add", "dev", "x", "quanta", "70000"});
              }),
              Exit::bad_value);
    EXPECT_EQ(code_of([] {
                  (void)parse({"qdisc", "add", "dev", "x", "trust", "ip"});
              }),
              Exit::bad_value);
    EXPECT_EQ(code_of([] { (void)parse({"qdisc", "del", "dev", "x", "rate", "5"}); }), Exit::usage);
    EXPECT_FALSE(help_text("qdisc").empty());
}

// The watchdog's options: times in ms (or us, ms, s: whole ms), actions by name.
TEST(ToolQdiscCli, WatchdogOptions) {
    auto c = parse({"qdisc", "change", "dev", "swp1", "wd_detection", "200", "wd_restoration",
                    "1.5s", "wd_action", "forward", "wd_poll", "50ms"});
    const QdiscSpec& q = c.qdisc;
    EXPECT_EQ(q.opt[TCA_PFC_WD_DETECTION], 200U);
    EXPECT_EQ(q.opt[TCA_PFC_WD_RESTORATION], 1500U);
    EXPECT_EQ(q.opt[TCA_PFC_WD_ACTION], TC_PFC_WD_FORWARD);
    EXPECT_EQ(q.opt[TCA_PFC_WD_POLL], 50U);
    EXPECT_EQ(
        parse({"qdisc", "add", "dev", "x", "wd_action", "ALERT"}).qdisc.opt[TCA_PFC_WD_ACTION],
        TC_PFC_WD_ALERT);
    EXPECT_EQ(parse({"qdisc", "add", "dev", "x", "wd_action", "drop"}).qdisc.opt[TCA_PFC_WD_ACTION],
              TC_PFC_WD_DROP);
    EXPECT_EQ(message_of([] {
                  (void)parse({"qdisc", "add", "dev", "x", "wd_action", "stop"});
              }),
              "wd_action: 'stop' is not a watchdog action (drop, forward, alert)");
    // Not a whole millisecond, past the range, a priority's option.
    EXPECT_EQ(code_of([] {
                  (void)parse({"qdisc", "add", "dev", "x", "wd_poll", "1500us"});
              }),
              Exit::bad_value);
    EXPECT_EQ(message_of([] {
                  (void)parse({"qdisc", "add", "dev", "x", "wd_detection", "6s"});
              }),
              "wd_detection: out of range 0..5000 ms ('6s')");
    EXPECT_EQ(code_of([] {
                  (void)parse({"qdisc", "add", "dev", "x", "prio", "3", "wd_detection", "200"});
              }),
              Exit::usage);
    // The request carries them as the kernel's attributes and widths.
    auto msg = qdisc_set_request(q, 7);
    auto tb = nl::parse(msg.header(), sizeof(tcmsg), TCA_MAX);
    auto o = nl::parse_nested(tb[TCA_OPTIONS], TCA_PFC_MAX);
    EXPECT_EQ(nl::get_u32(o[TCA_PFC_WD_DETECTION]), 200U);
    EXPECT_EQ(nl::get_u8(o[TCA_PFC_WD_ACTION]), TC_PFC_WD_FORWARD);
    EXPECT_EQ(mnl_attr_get_payload_len(o[TCA_PFC_WD_ACTION]), 1U);
}

// `rxecc metrics [dev DEV] [openmetrics]`: its words, and what it refuses.
TEST(ToolMetricsCli, DevAndFormat) {
    auto c = parse({"metrics"});
    EXPECT_EQ(c.verb, Verb::metrics);
    EXPECT_FALSE(c.dev);
    EXPECT_FALSE(c.openmetrics);
    c = parse({"metrics", "openmetrics", "dev", "h1"});
    EXPECT_EQ(c.dev, "h1");
    EXPECT_TRUE(c.openmetrics);
    EXPECT_EQ(message_of([] {
                  (void)parse({"metrics", "json"});
              }),
              "unknown metrics argument 'json' (dev, openmetrics)");
    EXPECT_EQ(code_of([] { (void)parse({"metrics", "dev"}); }), Exit::usage);
    EXPECT_EQ(code_of([] { (void)parse({"-j", "metrics"}); }), Exit::usage);
    EXPECT_EQ(parse({"metrics", "help"}).verb, Verb::help);
    EXPECT_FALSE(help_text("metrics").empty());
}

TEST(ToolQdiscRequest, LayoutAndErrorMapping) {
    auto c = parse({"qdisc", "replace", "dev", "swp1", "rate", "50", "pfc", "0x08", "prio", "3",
                    "xon", "40KB"});
    auto msg = qdisc_set_request(c.qdisc, 7);
    const nlmsghdr* nlh = msg.header();
    EXPECT_EQ(nlh->nlmsg_type, RTM_NEWQDISC);
    EXPECT_EQ(nlh->nlmsg_flags & (NLM_F_CREATE | NLM_F_REPLACE), NLM_F_CREATE | NLM_F_REPLACE);
    const auto* tcm = static_cast<const tcmsg*>(mnl_nlmsg_get_payload(nlh));
    EXPECT_EQ(tcm->tcm_ifindex, 7);
    EXPECT_EQ(tcm->tcm_parent, TC_H_ROOT);
    auto tb = nl::parse(nlh, sizeof(tcmsg), TCA_MAX);
    ASSERT_NE(tb[TCA_KIND], nullptr);
    EXPECT_EQ(nl::get_str(tb[TCA_KIND]), "pfc");
    ASSERT_NE(tb[TCA_OPTIONS], nullptr);
    auto o = nl::parse_nested(tb[TCA_OPTIONS], TCA_PFC_MAX);
    EXPECT_EQ(nl::get_u64(o[TCA_PFC_RATE]), 50000000U);
    EXPECT_EQ(nl::get_u8(o[TCA_PFC_ENABLE]), 0x08);
    EXPECT_EQ(o[TCA_PFC_QUANTA], nullptr);
    // Only the priority with a setting gets a nest.
    const nlattr* prio = nullptr;
    int nests = 0;
    for (const nlattr* a : nl::children(tb[TCA_OPTIONS]))
        if (mnl_attr_get_type(a) == TCA_PFC_PRIO) {
            prio = a;
            ++nests;
        }
    ASSERT_EQ(nests, 1);
    auto p = nl::parse_nested(prio, TCA_PFC_PRIO_MAX);
    EXPECT_EQ(nl::get_u8(p[TCA_PFC_PRIO_ID]), 3);
    EXPECT_EQ(nl::get_u32(p[TCA_PFC_PRIO_XON]), 40000U);
    // Errors: the kernel's message with where it is, one code each.
    auto e = explain_qdisc(
        {EINVAL, "prio 3: xon 40000 above xoff 24576", offset_of(msg, p[TCA_PFC_PRIO_XON])}, msg,
        "swp1");
    EXPECT_EQ(e.code(), Exit::bad_value);
    EXPECT_EQ(std::string(e.what()), "qdisc on 'swp1': prio 3: xon 40000 above xoff 24576");
    e = explain_qdisc({ERANGE, "integer out of range", offset_of(msg, o[TCA_PFC_RATE])}, msg,
                      "swp1");
    EXPECT_EQ(std::string(e.what()), "qdisc on 'swp1': rate: integer out of range");
    EXPECT_EQ(explain_qdisc({ENOENT, "Error: Specified qdisc kind is unknown.", std::nullopt}, msg,
                            "swp1")
                  .code(),
              Exit::no_module);
    EXPECT_EQ(explain_qdisc({EPERM, "", std::nullopt}, msg, "swp1").code(), Exit::permission);
    EXPECT_EQ(explain_qdisc({EEXIST, "", std::nullopt}, msg, "swp1").code(), Exit::system);
    auto del = qdisc_del_request(7);
    EXPECT_EQ(del.header()->nlmsg_type, RTM_DELQDISC);
    auto add = qdisc_set_request(parse({"qdisc", "add", "dev", "x"}).qdisc, 7);
    EXPECT_EQ(add.header()->nlmsg_flags & (NLM_F_CREATE | NLM_F_EXCL), NLM_F_CREATE | NLM_F_EXCL);
}

// The qdisc's dump message as the kernel builds it decodes into its values.
TEST(ToolQdiscRequest, DecodeDumpAndFormat) {
    tcmsg tcm{};
    tcm.tcm_ifindex = 1;  // lo: its name resolves everywhere
    tcm.tcm_parent = TC_H_ROOT;
    tcm.tcm_handle = 0x80010000;
    nl::Message m(RTM_NEWQDISC, 0, &tcm, sizeof(tcm));
    m.put_str(TCA_KIND, "pfc");
    auto* opts = m.nest_start(TCA_OPTIONS);
    m.put_u64(TCA_PFC_RATE, 50000000);
    m.put_u8(TCA_PFC_ENABLE, 0x08);
    m.put_u32(TCA_PFC_LINK_SPEED, 10000);
    m.put_u16(TCA_PFC_QUANTA, 65535);
    m.put_u32(TCA_PFC_WD_DETECTION, 200);
    m.put_u8(TCA_PFC_WD_ACTION, TC_PFC_WD_FORWARD);
    auto* p3 = m.nest_start(TCA_PFC_PRIO);
    m.put_u8(TCA_PFC_PRIO_ID, 3);
    m.put_u32(TCA_PFC_PRIO_XOFF, 24576);
    m.nest_end(p3);
    m.nest_end(opts);
    auto* st = m.nest_start(TCA_STATS2);
    tc_pfc_xstats x{};
    x.prio[3].pause_tx = 11;
    x.prio[3].xon_tx = 4;
    x.prio[3].pause_tx_duration = 2500000;
    x.pfc_rx_ignored = 2;
    x.wd[3].storm = 1;
    x.wd[3].storms = 2;
    x.wd[3].storm_duration = 7000000;
    m.put_raw(TCA_STATS_APP, &x, sizeof(x));
    m.nest_end(st);
    auto q = decode_qdisc(m.header());
    ASSERT_TRUE(q);
    EXPECT_EQ(q->netdev, "lo");
    EXPECT_EQ(q->rate_bps, 50000000U);
    EXPECT_EQ(q->enable, 0x08);
    EXPECT_EQ(q->quanta, 65535);
    EXPECT_EQ(q->prio[3].xoff, 24576U);
    EXPECT_EQ(q->prio[3].stats.pause_tx, 11U);
    EXPECT_EQ(q->pfc_rx_ignored, 2U);
    EXPECT_EQ(q->wd_detection_ms, 200U);
    EXPECT_EQ(q->wd_action, TC_PFC_WD_FORWARD);
    EXPECT_EQ(q->prio[3].wd.storms, 2U);
    auto j = to_json(*q);
    EXPECT_EQ(j["handle"], "8001:");
    EXPECT_EQ(j["prio"][3]["pause_tx_duration_us"], 2500);
    EXPECT_EQ(j["prio"][3]["pfc"], true);
    EXPECT_EQ(j["prio"][2]["pfc"], false);
    EXPECT_EQ(j["wd_action"], "forward");
    EXPECT_EQ(j["prio"][3]["wd_storm"], true);
    EXPECT_EQ(j["prio"][3]["wd_storm_duration_us"], 7000);
    for (const char* key : {"netdev", "rate_bps", "pfc_enable", "trust", "link_speed", "delay_ns",
                            "quanta", "drops", "prio"})
        EXPECT_TRUE(j.contains(key)) << key;
    const std::string t = to_text({*q});
    EXPECT_NE(t.find("qdisc pfc netdev lo handle 8001: rate_bps 50000000 pfc_enable 0x08 trust "
                     "dscp link_speed 10000 delay_ns 0 quanta 65535 wd_detection_ms 200 "
                     "wd_restoration_ms 0 wd_action forward wd_poll_ms 0\n"),
              std::string::npos)
        << t;
    EXPECT_NE(t.find("  drops 0 pfc_tx_errors 0 pfc_rx_ignored 2 "), std::string::npos) << t;
    EXPECT_NE(t.find("pause_tx_duration_us"), std::string::npos);
    // Another kind, or not the root: not ours.
    nl::Message other(RTM_NEWQDISC, 0, &tcm, sizeof(tcm));
    other.put_str(TCA_KIND, "tbf");
    EXPECT_FALSE(decode_qdisc(other.header()));
}

}  // namespace
}  // namespace rxecc::tool
