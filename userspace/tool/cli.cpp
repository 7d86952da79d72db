#include "cli.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>

#include "dcqcn_core.hpp"
#include "errors.hpp"
#include "qdisc.hpp"

namespace rxecc::tool {
namespace {

constexpr std::string_view kOverview =
    "Usage: rxecc [OPTIONS] OBJECT COMMAND [ARGUMENTS]\n"
    "Configure and observe the congestion control of rdma_rxecc devices.\n"
    "\n"
    "Objects and commands:\n"
    "  rxecc dcqcn show [dev DEV | defaults]\n"
    "  rxecc dcqcn set {dev DEV | defaults} NAME VALUE [NAME VALUE ...]\n"
    "  rxecc dcqcn profile {dev DEV | defaults} PROFILE [scale RATE [speedup N]]\n"
    "  rxecc stats [show] [dev DEV]\n"
    "  rxecc stats reset dev DEV\n"
    "  rxecc qp [show] [dev DEV]\n"
    "  rxecc monitor [dev DEV] [interval SECONDS] [count N]\n"
    "  rxecc qdisc [show] [dev NETDEV]\n"
    "  rxecc qdisc {add | change | replace} dev NETDEV [OPTIONS]\n"
    "  rxecc qdisc del dev NETDEV\n"
    "  rxecc metrics [dev DEV] [openmetrics]\n"
    "\n"
    "Options:\n"
    "  -j, --json         JSON output (read commands)\n"
    "  -p, --pretty       indented JSON (with -j)\n"
    "  -n, --netns NAME   run in network namespace NAME (as 'ip -n')\n"
    "  -h, --help         this help; 'rxecc OBJECT help' for one object\n"
    "  -V, --version      the tool's and the netlink interface's version\n"
    "\n"
    "Exit codes: 0 ok, 1 usage, 2 module not loaded, 3 unknown device, 4 not an rxecc\n"
    "device, 5 unknown parameter, 6 bad value, 7 permission denied, 8 other error.\n"
    "See rxecc(8).\n";

constexpr std::string_view kDcqcnHead =
    "Usage: rxecc dcqcn show [dev DEV | defaults]\n"
    "       rxecc dcqcn set {dev DEV | defaults} NAME VALUE [NAME VALUE ...]\n"
    "       rxecc dcqcn profile {dev DEV | defaults} PROFILE [scale RATE [speedup N]]\n"
    "\n"
    "show     the DCQCN parameters, priority enables and ECN mode of every device\n"
    "         (or one, or the defaults new devices start with)\n"
    "set      change any number of values in one step: all are applied, or none\n"
    "profile  load a named set of DCQCN values; with scale, mlx5's or the paper's\n"
    "         for a line rate of RATE (times and rates kept in packet times and\n"
    "         fractions of the line rate: paper scale 50mbit); speedup N runs\n"
    "         the scaled profile's clocks N times faster (times and the byte\n"
    "         counter divided by N, 1 to 1024: paper scale 25mbit speedup 16)\n"
    "\n"
    "Values take units: times 300, 300us, 1.5ms; rates 5, 5mbit, 500kbit, 25gbit\n"
    "(a rate that is no whole number of Mbit/s sets the NAME_kbps twin);\n"
    "rp_byte_reset 32767 (64-byte units) or 2MiB; masks 0xff, all, none.\n"
    "\n";

constexpr std::string_view kStats =
    "Usage: rxecc stats [show] [dev DEV]\n"
    "       rxecc stats reset dev DEV\n"
    "\n"
    "show   the port counters of every device (or one): rxe's and rxecc's\n"
    "reset  zero the port counters and the per-QP counts of one device\n";

constexpr std::string_view kQp =
    "Usage: rxecc qp [show] [dev DEV]\n"
    "\n"
    "Every QP with its congestion state: rate, target rate, alpha, stages,\n"
    "CNPs handled and sent, packets the limiter held back.\n";

constexpr std::string_view kQdisc =
    "Usage: rxecc qdisc [show] [dev NETDEV]\n"
    "       rxecc qdisc {add | change | replace} dev NETDEV [PORT OPTIONS] [QUEUE OPTIONS]\n"
    "                   [prio P QUEUE OPTIONS ...]\n"
    "       rxecc qdisc del dev NETDEV\n"
    "\n"
    "The lossless switch-port qdisc 'pfc' (module sch_pfc) as the root qdisc of a\n"
    "netdev: eight priority queues, PFC towards the ports the traffic came from,\n"
    "PFC received honoured, ECN marking. show: configuration and per-priority\n"
    "statistics of every pfc qdisc (or one).\n"
    "\n"
    "Port options:\n"
    "  rate RATE        port rate, whole Mbit/s (50, 50mbit, 1gbit; 0 or none = no limit)\n"
    "  pfc MASK         priorities with PFC (0x08, 0,0,0,1,0,0,0,0, all, none)\n"
    "  trust dscp|pcp   classify by DSCP (default) or VLAN PCP / skb priority\n"
    "  link_speed SPEED speed that turns quanta into time (default 10gbit)\n"
    "  delay TIME       response time the headroom must cover (default 100us)\n"
    "  quanta N         pause time of XOFF frames, 1..65535 (default 65535); the\n"
    "                   XOFF is refreshed at half of it, at most once a ms and\n"
    "                   every 4 packet times at the rate: a shorter pause lapses\n"
    "PFC watchdog options (port; times in ms, or with us, ms, s):\n"
    "  wd_detection TIME    a PFC queue holding packets and paused 99% or more of\n"
    "                       this long is in a storm; 0 = watchdog off (default 0,\n"
    "                       else 10 to 5000; SONiC and Junos detect in 200ms)\n"
    "  wd_action ACTION     drop (its packets and pauses, the default), forward\n"
    "                       (ignore pauses), alert (count and log only)\n"
    "  wd_restoration TIME  no pause received this long ends the storm\n"
    "                       (default 0 = twice wd_detection; wd_poll to 60000)\n"
    "  wd_poll TIME         time between two checks, 10 to 5000 and at most\n"
    "                       wd_detection (default 0 = wd_detection/2)\n"
    "Queue options (every priority, or the one after 'prio P'; bytes: B, KB, KiB,\n"
    "MB, MiB, GB, GiB):\n"
    "  limit BYTES      queue size (default 1MiB)\n"
    "  xoff BYTES       bytes from one ingress port that send XOFF (default 64KiB)\n"
    "  xon BYTES        ... and XON again (default 32KiB)\n"
    "  headroom BYTES   accepted from a port after XOFF (default 160KiB)\n"
    "  kmin BYTES       ECN marking starts (default 0)\n"
    "  kmax BYTES       every ECT packet marked; 0 = no marking (default 0)\n"
    "  pmax PERCENT     marking probability at kmax (default 20)\n";

constexpr std::string_view kMonitor =
    "Usage: rxecc monitor [dev DEV] [interval SECONDS] [count N]\n"
    "\n"
    "Print every configuration change as the module announces it and, every\n"
    "interval (default 1 s), the rate of every QP and (without dev) the PFC\n"
    "watchdog's storms detected and ended since the last interval on the pfc\n"
    "qdiscs of the namespace. Stops after N refreshes, or on Ctrl-C. With -j:\n"
    "one JSON object per line.\n";

constexpr std::string_view kMetrics =
    "Usage: rxecc metrics [dev DEV] [openmetrics]\n"
    "\n"
    "Every port counter of every device (or one) and, without dev, every statistic\n"
    "of the pfc qdiscs of the namespace, in the Prometheus text format 0.0.4 (as\n"
    "node_exporter's textfile collector reads it) or, with openmetrics, OpenMetrics\n"
    "1.0. Names: rxecc_port_<counter>_total{device,netdev,port[,prio]},\n"
    "rxecc_qdisc_<statistic>{netdev}, rxecc_qdisc_prio_<statistic>{netdev,prio};\n"
    "times in seconds, sizes in bytes. Without the rdma_rxecc module: the qdiscs.\n";

[[noreturn]] void usage(const std::string& what) { throw Error(Exit::usage, what); }

class Args {
  public:
    explicit Args(std::span<const std::string> a) : a_(a) {}
    [[nodiscard]] bool done() const { return i_ >= a_.size(); }
    [[nodiscard]] const std::string& peek() const { return a_[i_]; }
    const std::string& next(std::string_view what) {
        if (done()) usage("missing " + std::string(what));
        return a_[i_++];
    }
    [[nodiscard]] bool is_help() const {
        return !done() && (peek() == "help" || peek() == "-h" || peek() == "--help");
    }

  private:
    std::span<const std::string> a_;
    size_t i_ = 0;
};

// `dev DEV` or `defaults` (if allowed); true if one was given.
bool parse_target(Args& args, Command& cmd, bool allow_defaults) {
    if (args.done()) return false;
    if (args.peek() == "dev") {
        (void)args.next("dev");
        cmd.dev = args.next("a device name after 'dev'");
        return true;
    }
    if (allow_defaults && args.peek() == "defaults") {
        (void)args.next("defaults");
        cmd.defaults = true;
        return true;
    }
    return false;
}

void no_more(Args& args) {
    if (!args.done()) usage("unexpected argument '" + args.peek() + "'");
}

uint32_t parse_count(const std::string& text) {
    static const Knob count{"count", Unit::plain, "refreshes", 1, UINT32_MAX, -1, 0, Wire::none};
    return parse_value(count, text);
}

uint32_t parse_interval_ms(const std::string& text) {
    static const Knob interval{"interval", Unit::micros, "us", 0, UINT32_MAX, -1, 0, Wire::none};
    // Seconds by default ("0.5"), or with a unit ("500ms").
    const bool bare = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return (c >= '0' && c <= '9') || c == '.';
    });
    const uint32_t us = parse_value(interval, bare ? text + "s" : text);
    if (us < 100000) throw Error(Exit::bad_value, "interval: at least 0.1 s");
    return us / 1000;
}

// "26:3,46:5", "default" or "default,26:3".
void parse_dscp2prio(const std::string& text, Command& cmd) {
    auto fail = [&]() {
        throw Error(Exit::bad_value, "dscp2prio: '" + text +
                                         "' is not DSCP:PRIO[,DSCP:PRIO...] (DSCP 0..63, PRIO "
                                         "0..7) or default");
    };
    size_t pos = 0;
    while (pos <= text.size()) {
        const size_t end = std::min(text.find(',', pos), text.size());
        const std::string item = text.substr(pos, end - pos);
        pos = end + 1;
        if (item == "default") {
            cmd.dscp2prio_default = true;
            continue;
        }
        const size_t colon = item.find(':');
        if (colon == std::string::npos || colon == 0 || colon + 2 != item.size()) fail();
        unsigned dscp = 0;
        for (char c : item.substr(0, colon)) {
            if (c < '0' || c > '9' || dscp > 63) fail();
            dscp = dscp * 10 + static_cast<unsigned>(c - '0');
        }
        const char p = item[colon + 1];
        if (dscp > 63 || p < '0' || p > '7') fail();
        cmd.dscp2prio.emplace_back(static_cast<uint8_t>(dscp), static_cast<uint8_t>(p - '0'));
    }
}

// dcqcn set {dev DEV | defaults} NAME VALUE ...
void parse_dcqcn_set(Args& args, Command& cmd) {
    std::vector<const Knob*> typed;  // the names as given (a rate may go to its twin)
    cmd.verb = Verb::dcqcn_set;
    if (!parse_target(args, cmd, true)) usage("dcqcn set needs 'dev DEV' or 'defaults'");
    if (args.done()) usage("dcqcn set needs at least one NAME VALUE");
    while (!args.done()) {
        const std::string& name = args.next("a parameter name");
        if (name == "dscp2prio") {
            if (cmd.dscp2prio_default || !cmd.dscp2prio.empty())
                usage("parameter 'dscp2prio' given twice");
            parse_dscp2prio(args.next("a map for dscp2prio (DSCP:PRIO,... or default)"), cmd);
            continue;
        }
        const Knob* knob = find_knob(name);
        if (knob == nullptr)
            throw Error(Exit::unknown_param,
                        "unknown parameter '" + name + "' (see 'rxecc dcqcn help')");
        const Knob& base = base_knob(*knob);
        for (const Knob* t : typed) {
            if (t == knob) usage("parameter '" + name + "' given twice");
            if (&base_knob(*t) == &base)
                usage("parameters '" + t->name + "' and '" + name +
                      "' are one rate: give one of the two");
        }
        typed.push_back(knob);
        const std::string& value = args.next("a value for " + name);
        const auto [target, v] = parse_setting(*knob, value);
        cmd.settings.push_back({target, v});
    }
}

// The core's profile names, "mlx5, paper, lab"; `scalable`: only those with
// a reference line rate.
std::string profile_list(bool scalable) {
    std::string list;
    for (const auto& n : profile_names()) {
        const int p = rxecc_dcqcn_profile_find(n.c_str());
        if (scalable && rxecc_dcqcn_profile_kbps(static_cast<rxecc_dcqcn_profile>(p)) == 0)
            continue;
        list += (list.empty() ? "" : ", ") + n;
    }
    return list;
}

// dcqcn profile {dev DEV | defaults} PROFILE [scale RATE [speedup N]]
void parse_dcqcn_profile(Args& args, Command& cmd) {
    cmd.verb = Verb::dcqcn_profile;
    if (!parse_target(args, cmd, true)) usage("dcqcn profile needs 'dev DEV' or 'defaults'");
    const auto names = profile_names();
    const std::string list = profile_list(false);
    cmd.profile = args.next("a profile name (" + list + ")");
    if (std::find(names.begin(), names.end(), cmd.profile) == names.end())
        throw Error(Exit::bad_value, "unknown profile '" + cmd.profile + "' (" + list + ")");
    if (!args.done()) {
        const std::string& word = args.next("scale");
        if (word != "scale") usage("dcqcn profile: unknown word '" + word + "' (scale RATE)");
        // A rate as everywhere in the tool: Mbit/s without a unit.
        const Knob line{"scale", Unit::kbps, "kbps", 1, 400000000, -1, 0, Wire::none};
        std::string rate = args.next("a line rate for scale");
        if (!rate.empty() && rate.find_first_not_of("0123456789.") == std::string::npos)
            rate += "mbit";
        cmd.profile_kbps = parse_value(line, rate);
        const int prof = rxecc_dcqcn_profile_find(cmd.profile.c_str());
        if (rxecc_dcqcn_profile_kbps(static_cast<rxecc_dcqcn_profile>(prof)) == 0)
            throw Error(Exit::bad_value, "scale: profile '" + cmd.profile +
                                             "' has no reference line rate (" + profile_list(true) +
                                             ")");
        if (args.done()) return;
        const std::string& more = args.next("speedup");
        if (more != "speedup") usage("dcqcn profile: unknown word '" + more + "' (speedup N)");
        const Knob speedup{"speedup",         Unit::plain, "times", 1,
                           RXECC_SPEEDUP_MAX, -1,          0,       Wire::none};
        cmd.profile_speedup = parse_value(speedup, args.next("a factor for speedup"));
    }
    no_more(args);
}

void parse_dcqcn(Args& args, Command& cmd) {
    const std::string sub = args.done() ? "show" : args.next("a command");
    if (sub == "show" || sub == "list") {
        cmd.verb = Verb::dcqcn_show;
        parse_target(args, cmd, true);
    } else if (sub == "set") {
        parse_dcqcn_set(args, cmd);
    } else if (sub == "profile") {
        parse_dcqcn_profile(args, cmd);
    } else {
        usage("unknown dcqcn command '" + sub + "' (show, set, profile)");
    }
    no_more(args);
}

void parse_stats(Args& args, Command& cmd) {
    cmd.verb = Verb::stats_show;
    if (!args.done() && (args.peek() == "show" || args.peek() == "list")) (void)args.next("show");
    if (!args.done() && args.peek() == "reset") {
        (void)args.next("reset");
        cmd.verb = Verb::stats_reset;
        if (!parse_target(args, cmd, false)) usage("stats reset needs 'dev DEV'");
    } else {
        parse_target(args, cmd, false);
    }
    no_more(args);
}

void parse_qp(Args& args, Command& cmd) {
    cmd.verb = Verb::qp_show;
    if (!args.done() && (args.peek() == "show" || args.peek() == "list")) (void)args.next("show");
    parse_target(args, cmd, false);
    no_more(args);
}

void parse_metrics(Args& args, Command& cmd) {
    cmd.verb = Verb::metrics;
    while (!args.done()) {
        const std::string& key = args.next("a keyword");
        if (key == "dev")
            cmd.dev = args.next("a device name after 'dev'");
        else if (key == "openmetrics")
            cmd.openmetrics = true;
        else
            usage("unknown metrics argument '" + key + "' (dev, openmetrics)");
    }
    if (cmd.json) usage("metrics has no JSON output (-j): its formats are Prometheus' own");
}

void parse_monitor(Args& args, Command& cmd) {
    cmd.verb = Verb::monitor;
    while (!args.done()) {
        const std::string& key = args.next("a keyword");
        if (key == "dev")
            cmd.dev = args.next("a device name after 'dev'");
        else if (key == "interval")
            cmd.interval_ms = parse_interval_ms(args.next("seconds after 'interval'"));
        else if (key == "count")
            cmd.count = parse_count(args.next("a number after 'count'"));
        else
            usage("unknown monitor argument '" + key + "' (dev, interval, count)");
    }
}

// An option of `fields` into `opt` (by attribute); false if `key` is none.
template <typename T, typename V, size_t N>
bool parse_option(const std::string& key, Args& args, std::span<const Field<T>> fields,
                  std::array<std::optional<V>, N>& opt) {
    for (const auto& f : fields) {
        if (f.option.empty() || f.option != key) continue;
        const std::string& text = args.next("a value after '" + key + "'");
        // rate none: no limit
        opt.at(f.attr) =
            static_cast<V>(f.unit == Unit::speed && text == "none" ? 0 : f.parse(text));
        return true;
    }
    return false;
}

void merge(QdiscPrio& into, const QdiscPrio& from) {
    for (size_t a = 0; a < into.opt.size(); ++a)
        if (from.opt.at(a) && !into.opt.at(a)) into.opt.at(a) = from.opt.at(a);
}

void parse_qdisc_options(Args& args, QdiscSpec& q) {
    QdiscPrio all;
    int cur = -1;  // the priority after `prio P`, -1 before any
    while (!args.done()) {
        const std::string& key = args.next("an option");
        QdiscPrio& target = cur < 0 ? all : q.prio.at(static_cast<size_t>(cur));
        if (parse_option(key, args, qdisc_prio_fields(), target.opt)) continue;
        if (key == "prio") {
            const std::string& p = args.next("a priority after 'prio'");
            if (p.size() != 1 || p[0] < '0' || p[0] > '7')
                throw Error(Exit::bad_value, "prio: '" + p + "' is not a priority (0..7)");
            cur = p[0] - '0';
        } else if (cur >= 0) {
            usage("'" + key + "' is no queue option (port options come before 'prio')");
        } else if (!parse_option(key, args, qdisc_port_fields(), q.opt)) {
            usage("unknown qdisc option '" + key + "' (see 'rxecc qdisc help')");
        }
    }
    for (auto& p : q.prio) merge(p, all);
}

void parse_qdisc(Args& args, Command& cmd) {
    const std::string sub = args.done() ? "show" : args.next("a command");
    if (sub == "show" || sub == "list") {
        cmd.verb = Verb::qdisc_show;
        if (!args.done()) {
            if (args.next("dev") != "dev") usage("qdisc show takes only 'dev NETDEV'");
            cmd.qdisc.netdev = args.next("a netdev after 'dev'");
        }
        no_more(args);
        return;
    }
    if (sub == "del" || sub == "delete") {
        cmd.verb = Verb::qdisc_del;
    } else if (sub == "add" || sub == "change" || sub == "replace") {
        cmd.verb = Verb::qdisc_set;
        cmd.qdisc.op = sub == "add"      ? QdiscSpec::Op::add
                       : sub == "change" ? QdiscSpec::Op::change
                                         : QdiscSpec::Op::replace;
    } else {
        usage("unknown qdisc command '" + sub + "' (show, add, change, replace, del)");
    }
    if (args.done() || args.next("dev") != "dev") usage("qdisc " + sub + " needs 'dev NETDEV'");
    cmd.qdisc.netdev = args.next("a netdev after 'dev'");
    if (cmd.verb == Verb::qdisc_set)
        parse_qdisc_options(args, cmd.qdisc);
    else
        no_more(args);
}

constexpr size_t kDone = SIZE_MAX;

// The options before the object; returns how many arguments they took, or
// kDone after --help or --version (nothing else is looked at).
size_t parse_options(std::span<const std::string> argv, Command& cmd) {
    size_t i = 0;
    for (; i < argv.size() && argv[i].size() > 1 && argv[i][0] == '-'; ++i) {
        const std::string& o = argv[i];
        if (o == "-j" || o == "--json") {
            cmd.json = true;
        } else if (o == "-p" || o == "--pretty") {
            cmd.pretty = true;
        } else if (o == "-jp" || o == "-pj") {
            cmd.json = cmd.pretty = true;
        } else if (o == "-n" || o == "--netns") {
            if (++i == argv.size() || argv[i].empty())
                usage("option '" + o + "' needs a network namespace name");
            cmd.netns = argv[i];
        } else if (o == "-h" || o == "--help") {
            cmd.verb = Verb::help;
            return kDone;
        } else if (o == "-V" || o == "--version") {
            cmd.verb = Verb::version;
            return kDone;
        } else {
            usage("unknown option '" + o + "' (see 'rxecc --help')");
        }
    }
    return i;
}

bool asks_help(std::span<const std::string> args) {
    return std::any_of(args.begin(), args.end(),
                       [](const std::string& a) { return a == "-h" || a == "--help"; });
}

}  // namespace

Command parse_command(std::span<const std::string> argv) {
    Command cmd;
    const size_t first = parse_options(argv, cmd);
    if (first == kDone) return cmd;
    if (first == argv.size())
        usage("missing OBJECT (dcqcn, stats, qp, monitor, qdisc, metrics; see 'rxecc --help')");
    Args args(argv.subspan(first));
    const std::string& object = args.next("an object");
    if (object == "help") {
        cmd.verb = Verb::help;
        if (!args.done()) cmd.help_topic = args.next("a topic");
        if (!help_text(cmd.help_topic).empty()) return cmd;
        usage("no help on '" + cmd.help_topic + "'");
    }
    if (object != "dcqcn" && object != "stats" && object != "qp" && object != "monitor" &&
        object != "qdisc" && object != "metrics")
        usage("unknown object '" + object + "' (dcqcn, stats, qp, monitor, qdisc, metrics)");
    // `help`, or `--help` anywhere after the object: that object's help.
    if (args.is_help() || asks_help(argv.subspan(first))) {
        cmd.verb = Verb::help;
        cmd.help_topic = object;
        return cmd;
    }
    if (object == "dcqcn")
        parse_dcqcn(args, cmd);
    else if (object == "stats")
        parse_stats(args, cmd);
    else if (object == "qp")
        parse_qp(args, cmd);
    else if (object == "qdisc")
        parse_qdisc(args, cmd);
    else if (object == "metrics")
        parse_metrics(args, cmd);
    else
        parse_monitor(args, cmd);
    return cmd;
}

std::string help_text(std::string_view topic) {
    if (topic.empty()) return std::string(kOverview);
    if (topic == "stats") return std::string(kStats);
    if (topic == "qp") return std::string(kQp);
    if (topic == "monitor") return std::string(kMonitor);
    if (topic == "qdisc") return std::string(kQdisc);
    if (topic == "metrics") return std::string(kMetrics);
    if (topic != "dcqcn") return {};
    std::string text(kDcqcnHead);
    text += "Parameters (unit, range):\n";
    for (const auto& k : knobs()) {
        text += "  " + k.name + std::string(k.name.size() < 33 ? 33 - k.name.size() : 1, ' ') +
                k.unit_name + ", " + format_value(k, k.min) + ".." + format_value(k, k.max) + "\n";
    }
    text += "Profiles:";
    for (const auto& p : profile_names()) text += " " + p;
    text += "\n";
    return text;
}

}  // namespace rxecc::tool
