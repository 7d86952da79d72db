#include "options.hpp"

#include <charconv>
#include <cmath>
#include <limits>

namespace rxecc::verbs {

const char* const kUsage =
    "usage: rxecc-verbs server [ADDR] [-p PORT] [--timeout S]\n"
    "       rxecc-verbs client ADDR [-p PORT] [--test verify|ping] [--op "
    "send|write|write_imm|read]\n"
    "                   [--count N] [--duration S] [--size B] [--max-size B] [--depth N]\n"
    "                   [--seed N] [--tos N] [--ack-timeout N] [--poll busy|event]\n"
    "                   [--flow-label N] [--samples FILE] [--timeout S]\n"
    "--flow-label N: the IPv6 flow label (0..1048575) of the connection (an IPv6 ADDR);\n"
    "  rdma_cm otherwise derives one from its ports\n"
    "--timeout S: the longest wait for the peer, an event or a completion (default 30),\n"
    "  the server's wait for its client included\n"
    "exit status:\n"
    "  0  the test ran to its end and found no fault (JSON on stdout)\n"
    "  1  the test ran to its end and found a fault, which the JSON on stdout counts:\n"
    "     a message corrupt, lost, duplicated or (client) left unchecked, or a completion\n"
    "     or an acknowledgement out of order or of the wrong shape\n"
    "  2  a bad command line: what, and this usage, on stderr\n"
    "  3  any other failure, said on stderr: no peer, event or completion within\n"
    "     --timeout, a verbs or rdma_cm call or a completion that failed, a connection\n"
    "     event during the test, a peer that is not this rxecc-verbs, --samples not\n"
    "     written; JSON only if the test had ended and the disconnection after it failed\n";

namespace {

template <typename T>
T number(const std::string& opt, const std::string& v, T lo, T hi) {
    T out{};
    const auto* end = v.data() + v.size();
    auto [p, ec] = std::from_chars(v.data(), end, out);
    if ((ec != std::errc{} && ec != std::errc::result_out_of_range) || p != end || v.empty()) {
        throw UsageError(opt + ": '" + v + "' is not a number");
    }
    if (ec == std::errc::result_out_of_range || out < lo || out > hi) {
        throw UsageError(opt + ": " + v + " is out of range " + std::to_string(lo) + ".." +
                         std::to_string(hi));
    }
    return out;
}

double seconds(const std::string& opt, const std::string& v) {
    size_t used = 0;
    double d = 0;
    try {
        d = std::stod(v, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != v.size() || v.empty() || !std::isfinite(d) || d < 0 || d > 86400) {
        throw UsageError(opt + ": '" + v + "' is not a number of seconds (0..86400)");
    }
    return d;
}

Op op_from(const std::string& v) {
    for (Op op : {Op::send, Op::write, Op::write_imm, Op::read}) {
        if (v == op_name(op)) {
            return op;
        }
    }
    throw UsageError("--op: '" + v + "' is not send, write, write_imm or read");
}

}  // namespace

// NOLINTNEXTLINE(readability-function-cognitive-complexity): a flat option parser
Options parse_options(const std::vector<std::string>& args) {
    Options o;
    if (args.empty() || (args[0] != "server" && args[0] != "client")) {
        throw UsageError("the first argument must be 'server' or 'client'");
    }
    o.server = args[0] == "server";
    bool poll_set = false;
    for (size_t i = 1; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a.empty() || a[0] != '-') {
            if (!o.addr.empty()) {
                throw UsageError("unexpected argument '" + a + "'");
            }
            o.addr = a;
            continue;
        }
        if (i + 1 >= args.size()) {
            throw UsageError(a + " needs a value");
        }
        const std::string& v = args[++i];
        if (a == "-p" || a == "--port") {
            o.port = number<uint16_t>(a, v, 1, 65535);
        } else if (a == "--test") {
            if (v != "verify" && v != "ping") {
                throw UsageError("--test: '" + v + "' is not verify or ping");
            }
            o.test = v == "ping" ? Test::ping : Test::verify;
        } else if (a == "--op") {
            o.only = op_from(v);
        } else if (a == "--size") {
            o.size = number<uint32_t>(a, v, 0, 1U << 20U);
        } else if (a == "--max-size") {
            o.max_size = number<uint32_t>(a, v, 16, 1U << 20U);
        } else if (a == "--depth") {
            o.depth = number<uint32_t>(a, v, 1, 256);
        } else if (a == "--seed") {
            o.seed = number<uint64_t>(a, v, 0, std::numeric_limits<uint64_t>::max());
        } else if (a == "--count") {
            o.count = number<uint64_t>(a, v, 1, uint64_t{1} << 40U);
        } else if (a == "--duration") {
            o.duration = seconds(a, v);
        } else if (a == "--timeout") {
            o.timeout = seconds(a, v);
            if (o.timeout < 0.1) {
                throw UsageError("--timeout: must be at least 0.1 s");
            }
        } else if (a == "--tos") {
            o.tos = number<uint8_t>(a, v, 0, 255);
        } else if (a == "--ack-timeout") {
            o.ack_timeout = number<uint8_t>(a, v, 0, 31);
        } else if (a == "--flow-label") {
            o.flow_label = number<uint32_t>(a, v, 0, 0xfffff);
        } else if (a == "--poll") {
            if (v != "busy" && v != "event") {
                throw UsageError("--poll: '" + v + "' is not busy or event");
            }
            o.busy_poll = v == "busy";
            poll_set = true;
        } else if (a == "--samples") {
            o.samples = v;
        } else {
            throw UsageError("unknown option '" + a + "'");
        }
    }
    if (o.server && o.flow_label) {
        throw UsageError("--flow-label: the client's option (the server takes the client's)");
    }
    if (!o.server) {
        if (o.addr.empty()) {
            throw UsageError("client: the server's address is missing");
        }
        if (o.count == 0 && o.duration == 0) {
            throw UsageError("client: give --count or --duration");
        }
        if (o.test == Test::ping) {
            if (o.only && *o.only != Op::send) {
                throw UsageError("--op: the ping test sends only");
            }
            o.only = Op::send;
            o.max_size = std::max<uint32_t>(o.size, 16);
            o.depth = 1;
        }
        if (!poll_set) {
            o.busy_poll = o.test == Test::ping;
        }
    }
    return o;
}

}  // namespace rxecc::verbs
