// rxecc: configure and observe the congestion control of rdma_rxecc devices
// over the module's generic netlink family. See rxecc(8).
#include <fcntl.h>
#include <linux/genetlink.h>
#include <rdma/rxecc_netlink.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "cli.hpp"
#include "errors.hpp"
#include "format.hpp"
#include "metrics.hpp"
#include "netlink_client.hpp"
#include "qdisc.hpp"

namespace rxecc::tool {
namespace {

// NOLINTNEXTLINE(*-avoid-non-const-global-variables): the signal handler's flag
volatile std::sig_atomic_t g_stop = 0;

void on_signal(int /*sig*/) { g_stop = 1; }

double now_s() {
    using clock = std::chrono::steady_clock;
    static const auto start = clock::now();
    return std::chrono::duration<double>(clock::now() - start).count();
}

std::string stamp() {
    std::array<char, 16> buf{};
    std::snprintf(buf.data(), buf.size(), "[%9.3f]", now_s());  // NOLINT(*-vararg): snprintf
    return buf.data();
}

// What monitor prints.
class Monitor {
  public:
    Monitor(Client& client, const Command& cmd) : client_(client), cmd_(cmd) {
        for (auto& c : client.configs(cmd.dev)) known_[config_key(c)] = c;
        known_[""] = client.defaults();
        if (!cmd.dev) watchdog(false);
    }

    // A notification of the "config" group.
    void on_event(const nlmsghdr* nlh) {
        if (nlh->nlmsg_type != client_.family()) return;
        Config c = decode_config(nlh);
        if (cmd_.dev && (!c.dev || c.dev->name != *cmd_.dev)) return;
        const std::string key = config_key(c);
        if (cmd_.json) {
            auto j = to_json(c);
            j["event"] = "config";
            j["time"] = now_s();
            std::cout << dump(j, false);
        } else {
            const auto it = known_.find(key);
            const std::string diff = it != known_.end() ? config_diff(it->second, c) : "";
            std::cout << stamp() << " config "
                      << (c.dev ? "dev " + c.dev->name : std::string("defaults")) << ": "
                      << (diff.empty() ? "unchanged" : diff) << "\n";
        }
        known_[key] = c;
        std::cout.flush();
    }

    // The PFC watchdog's storms on the pfc qdiscs of the namespace, as the
    // counters changed since the last refresh (not with `dev`: they belong
    // to no rxecc device); with `print` false only the baseline. A qdisc is
    // known by its netdev's index and its handle: one added again starts
    // from zero, as does one whose counters went down.
    void watchdog(bool print = true) {
        std::map<WdKey, tc_pfc_wd_stats> now;
        for (const auto& q : qdiscs_.show("")) {
            for (const auto& p : q.prio) {
                const WdKey key{q.ifindex, q.handle, p.id};
                now[key] = p.wd;
                auto it = wd_.find(key);
                tc_pfc_wd_stats seen{};
                if (it != wd_.end() && it->second.storms <= p.wd.storms &&
                    it->second.restorations <= p.wd.restorations)
                    seen = it->second;
                if (print && p.wd.storms > seen.storms) wd_event("wd_storm", q, p);
                if (print && p.wd.restorations > seen.restorations) wd_event("wd_restored", q, p);
            }
        }
        wd_ = std::move(now);
    }

    // The periodic view of every QP.
    void refresh() {
        if (!cmd_.dev) watchdog();
        for (const auto& q : client_.qps(cmd_.dev)) {
            if (cmd_.json) {
                auto j = to_json(q);
                j["event"] = "qp";
                j["time"] = now_s();
                std::cout << dump(j, false);
                continue;
            }
            std::cout << stamp() << " qp dev " << q.dev.name << " " << text_pairs(qp_fields(), q)
                      << "\n";
        }
        std::cout.flush();
    }

  private:
    static std::string config_key(const Config& c) { return c.dev ? c.dev->name : std::string(); }

    void wd_event(const std::string& what, const QdiscInfo& q, const QdiscInfo::Prio& p) const {
        const std::string action = text_value(Show::wd_action, q.wd_action);
        if (cmd_.json) {
            nlohmann::json j = {{"event", what},
                                {"time", now_s()},
                                {"netdev", q.netdev},
                                {"prio", p.id},
                                {"wd_action", action}};
            put_json(j, qdisc_prio_wd_fields(), p.wd);
            std::cout << dump(j, false);
            return;
        }
        std::cout << stamp() << " " << what << " netdev " << q.netdev << " prio " << unsigned{p.id}
                  << " wd_action " << action << " " << text_pairs(qdisc_prio_wd_fields(), p.wd)
                  << "\n";
    }

    Client& client_;
    const Command& cmd_;
    std::map<std::string, Config> known_;
    QdiscClient qdiscs_;
    using WdKey = std::tuple<uint32_t, uint32_t, uint8_t>;  // ifindex, handle, priority
    std::map<WdKey, tc_pfc_wd_stats> wd_;
};

// Configuration changes as they are announced, QP rates every interval.
void monitor(Client& client, const Command& cmd) {
    Monitor mon(client, cmd);
    nl::Socket events = client.subscribe();
    // JSON: one line once subscribed, so that a script knows from when on
    // it sees every change.
    if (cmd.json) {
        std::cout << dump({{"event", "subscribed"}, {"time", now_s()}}, false);
        std::cout.flush();
    }
    (void)std::signal(SIGINT, on_signal);
    (void)std::signal(SIGTERM, on_signal);
    uint32_t refreshes = 0;
    auto next = now_s();
    while (g_stop == 0) {
        const double wait = next - now_s();
        if (wait > 0) {
            (void)events.receive(static_cast<int>(wait * 1000) + 1,
                                 [&](const nlmsghdr* nlh) { mon.on_event(nlh); });
            continue;
        }
        mon.refresh();
        if (cmd.count && ++refreshes >= *cmd.count) break;
        next += cmd.interval_ms / 1000.0;
    }
}

// The devices' counters and (without dev) the namespace's pfc qdiscs; a
// namespace without the rdma_rxecc module has its qdiscs only.
void metrics(const Command& cmd) {
    std::vector<Stats> stats;
    try {
        stats = Client().stats(cmd.dev);
    } catch (const Error& e) {
        if (e.code() != Exit::no_module || cmd.dev) throw;
    }
    std::vector<QdiscInfo> qdiscs;
    if (!cmd.dev) qdiscs = QdiscClient().show("");
    std::cout << metrics_text(
        stats, qdiscs, cmd.openmetrics ? MetricsFormat::openmetrics : MetricsFormat::prometheus);
}

// -n NAME: the network namespace that `ip netns add NAME` made (a path when
// NAME has a '/'), entered before any socket is opened. The tool reads
// nothing from sysfs, so unlike `ip netns exec` nothing is remounted.
void enter_netns(const std::string& name) {
    const std::string path = name.find('/') == std::string::npos ? "/run/netns/" + name : name;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);  // NOLINT(*-vararg): open(2)
    if (fd < 0) {
        const int err = errno;
        throw Error(err == EACCES ? Exit::permission : Exit::system,
                    "network namespace '" + name + "': " + std::strerror(err));
    }
    const int rc = ::setns(fd, CLONE_NEWNET);
    const int err = errno;
    ::close(fd);
    if (rc != 0)
        throw Error(err == EPERM ? Exit::permission : Exit::system,
                    "cannot enter network namespace '" + name + "': " + std::strerror(err));
}

int run(const Command& cmd) {
    if (!cmd.netns.empty() && cmd.verb != Verb::help && cmd.verb != Verb::version)
        enter_netns(cmd.netns);
    switch (cmd.verb) {
        case Verb::help:
            std::cout << help_text(cmd.help_topic);
            return 0;
        case Verb::version:
            std::cout << "rxecc " RXECC_TOOL_VERSION ", netlink family '" RXECC_GENL_NAME
                         "' version "
                      << RXECC_GENL_VERSION << "\n";
            return 0;
        case Verb::qdisc_show: {
            auto qdiscs = QdiscClient().show(cmd.qdisc.netdev);
            std::cout << (cmd.json ? dump(to_json(qdiscs), cmd.pretty) : to_text(qdiscs));
            return 0;
        }
        case Verb::qdisc_set:
            QdiscClient().set(cmd.qdisc);
            return 0;
        case Verb::qdisc_del:
            QdiscClient().del(cmd.qdisc.netdev);
            return 0;
        case Verb::metrics:
            metrics(cmd);
            return 0;
        default:
            break;
    }
    Client client;
    switch (cmd.verb) {
        case Verb::dcqcn_show: {
            std::vector<Config> configs;
            if (cmd.defaults)
                configs.push_back(client.defaults());
            else
                configs = client.configs(cmd.dev);
            std::cout << (cmd.json ? dump(to_json(configs), cmd.pretty) : to_text(configs));
            break;
        }
        case Verb::dcqcn_set:
        case Verb::dcqcn_profile:
            client.set(cmd);
            break;
        case Verb::stats_show: {
            auto stats = client.stats(cmd.dev);
            std::cout << (cmd.json ? dump(to_json(stats), cmd.pretty) : to_text(stats));
            break;
        }
        case Verb::stats_reset:
            client.reset_stats(*cmd.dev);
            break;
        case Verb::qp_show: {
            auto qps = client.qps(cmd.dev);
            std::cout << (cmd.json ? dump(to_json(qps), cmd.pretty) : to_text(qps));
            break;
        }
        case Verb::monitor:
            monitor(client, cmd);
            break;
        default:
            break;
    }
    return 0;
}

}  // namespace
}  // namespace rxecc::tool

int main(int argc, char** argv) {
    using rxecc::tool::Error;
    try {
        const std::vector<std::string> args(argv + 1, argv + argc);
        return rxecc::tool::run(rxecc::tool::parse_command(args));
    } catch (const Error& e) {
        std::cerr << "rxecc: " << e.what() << "\n";
        return static_cast<int>(e.code());
    } catch (const std::exception& e) {
        std::cerr << "rxecc: " << e.what() << "\n";
        return static_cast<int>(rxecc::tool::Exit::system);
    }
}
