#include "cli.hpp"

#include <algorithm>
#include <cstdint>

#include "errors.hpp"

namespace rxecc::tool {
namespace {

constexpr std::string_view kOverview =
    "Usage: rxecc [OPTIONS] OBJECT COMMAND [ARGUMENTS]\n"
    "Configure and observe the congestion control of rdma_rxecc devices.\n"
    "\n"
    "Objects and commands:\n"
    "  rxecc dcqcn show [dev DEV | defaults]\n"
    "  rxecc dcqcn set {dev DEV | defaults} NAME VALUE [NAME VALUE ...]\n"
    "  rxecc dcqcn profile {dev DEV | defaults} PROFILE\n"
    "  rxecc stats [show] [dev DEV]\n"
    "  rxecc stats reset dev DEV\n"
    "  rxecc qp [show] [dev DEV]\n"
    "  rxecc monitor [dev DEV] [interval SECONDS] [count N]\n"
    "\n"
    "Options:\n"
    "  -j, --json     JSON output (read commands)\n"
    "  -p, --pretty   indented JSON (with -j)\n"
    "  -h, --help     this help; 'rxecc OBJECT help' for one object\n"
    "  -V, --version  the tool's and the netlink interface's version\n"
    "\n"
    "Exit codes: 0 ok, 1 usage, 2 module not loaded, 3 unknown device, 4 not an rxecc\n"
    "device, 5 unknown parameter, 6 bad value, 7 permission denied, 8 other error.\n"
    "See rxecc(8).\n";

constexpr std::string_view kDcqcnHead =
    "Usage: rxecc dcqcn show [dev DEV | defaults]\n"
    "       rxecc dcqcn set {dev DEV | defaults} NAME VALUE [NAME VALUE ...]\n"
    "       rxecc dcqcn profile {dev DEV | defaults} PROFILE\n"
    "\n"
    "show     the DCQCN parameters, priority enables and ECN mode of every device\n"
    "         (or one, or the defaults new devices start with)\n"
    "set      change any number of values in one step: all are applied, or none\n"
    "profile  load a named set of DCQCN values\n"
    "\n"
    "Values take units: times 300, 300us, 1.5ms; rates 5, 5mbit, 500kbit, 25gbit;\n"
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

constexpr std::string_view kMonitor =
    "Usage: rxecc monitor [dev DEV] [interval SECONDS] [count N]\n"
    "\n"
    "Print every configuration change as the module announces it and, every\n"
    "interval (default 1 s), the rate of every QP. Stops after N refreshes, or\n"
    "on Ctrl-C. With -j: one JSON object per line.\n";

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
    static const Knob count{"count", Unit::plain, "refreshes", 1, UINT32_MAX, -1};
    return parse_value(count, text);
}

uint32_t parse_interval_ms(const std::string& text) {
    static const Knob interval{"interval", Unit::micros, "s", 0, UINT32_MAX, -1};
    // Seconds by default ("0.5"), or with a unit ("500ms").
    const bool bare = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return (c >= '0' && c <= '9') || c == '.';
    });
    const uint32_t us = parse_value(interval, bare ? text + "s" : text);
    if (us < 100000) throw Error(Exit::bad_value, "interval: at least 0.1 s");
    return us / 1000;
}

void parse_dcqcn(Args& args, Command& cmd) {
    const std::string sub = args.done() ? "show" : args.next("a command");
    if (sub == "show" || sub == "list") {
        cmd.verb = Verb::dcqcn_show;
        parse_target(args, cmd, true);
    } else if (sub == "set") {
        cmd.verb = Verb::dcqcn_set;
        if (!parse_target(args, cmd, true)) usage("dcqcn set needs 'dev DEV' or 'defaults'");
        if (args.done()) usage("dcqcn set needs at least one NAME VALUE");
        while (!args.done()) {
            const std::string& name = args.next("a parameter name");
            const Knob* knob = find_knob(name);
            if (knob == nullptr)
                throw Error(Exit::unknown_param,
                            "unknown parameter '" + name + "' (see 'rxecc dcqcn help')");
            if (std::any_of(cmd.settings.begin(), cmd.settings.end(),
                            [&](const Setting& s) { return s.knob == knob; }))
                usage("parameter '" + name + "' given twice");
            const std::string& value = args.next("a value for " + name);
            cmd.settings.push_back({knob, parse_value(*knob, value)});
        }
    } else if (sub == "profile") {
        cmd.verb = Verb::dcqcn_profile;
        if (!parse_target(args, cmd, true)) usage("dcqcn profile needs 'dev DEV' or 'defaults'");
        cmd.profile = args.next("a profile name (mlx5, paper, lab)");
        const auto names = profile_names();
        if (std::find(names.begin(), names.end(), cmd.profile) == names.end())
            throw Error(Exit::bad_value,
                        "unknown profile '" + cmd.profile + "' (mlx5, paper, lab)");
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
        usage("missing OBJECT (dcqcn, stats, qp, monitor; see 'rxecc --help')");
    Args args(argv.subspan(first));
    const std::string& object = args.next("an object");
    if (object == "help") {
        cmd.verb = Verb::help;
        if (!args.done()) cmd.help_topic = args.next("a topic");
        if (!help_text(cmd.help_topic).empty()) return cmd;
        usage("no help on '" + cmd.help_topic + "'");
    }
    if (object != "dcqcn" && object != "stats" && object != "qp" && object != "monitor")
        usage("unknown object '" + object + "' (dcqcn, stats, qp, monitor)");
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
    else
        parse_monitor(args, cmd);
    return cmd;
}

std::string help_text(std::string_view topic) {
    if (topic.empty()) return std::string(kOverview);
    if (topic == "stats") return std::string(kStats);
    if (topic == "qp") return std::string(kQp);
    if (topic == "monitor") return std::string(kMonitor);
    if (topic != "dcqcn") return {};
    std::string text(kDcqcnHead);
    text += "Parameters (unit, range):\n";
    for (const auto& k : knobs()) {
        text += "  " + k.name + std::string(k.name.size() < 30 ? 30 - k.name.size() : 1, ' ') +
                k.unit_name + ", " + format_value(k, k.min) + ".." + format_value(k, k.max) + "\n";
    }
    text += "Profiles:";
    for (const auto& p : profile_names()) text += " " + p;
    text += "\n";
    return text;
}

}  // namespace rxecc::tool
