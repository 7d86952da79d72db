// The rxecc netlink family from the tool's side: requests and replies as
// plain structs (include/uapi/rdma/rxecc_netlink.h is the wire format).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "errors.hpp"
#include "fields.hpp"
#include "netlink.hpp"

namespace rxecc::tool {

struct DevId {
    uint32_t index = 0;
    std::string name;
    std::string netdev;
};

struct Config {
    std::optional<DevId> dev;  // nullopt: the defaults for new devices
    uint64_t line_kbps = 0;
    std::string profile;
    // One value per knob, in knobs() order (the DCQCN parameters first, in
    // the core's table order): Knob::index.
    std::vector<uint32_t> values = std::vector<uint32_t>(knobs().size());
    std::vector<uint8_t> dscp2prio;  // 64 entries
};

// The value of any knob in a configuration.
[[nodiscard]] uint32_t knob_value(const Config& cfg, const Knob& knob);
// ... by name (tests; the knob must exist).
void set_knob(Config& cfg, std::string_view name, uint32_t value);

struct Counter {
    std::string name;
    uint64_t value = 0;
};

struct Stats {
    DevId dev;
    std::vector<Counter> counters;
};

struct Qp {
    DevId dev;
    uint32_t qpn = 0;
    uint8_t type = 0;   // enum ib_qp_type
    uint8_t state = 0;  // enum ib_qp_state
    uint32_t dest_qpn = 0;
    uint8_t prio = 0;
    bool limited = false;
    uint64_t rate_kbps = 0;
    uint64_t target_kbps = 0;
    uint32_t alpha_ppm = 0;
    uint32_t t_stage = 0;
    uint32_t bc_stage = 0;
    uint64_t cnp_handled = 0;
    uint64_t cnp_sent = 0;
    uint64_t rp_tx_deferred = 0;
};

// The fields of a QP (RXECC_ATTR_QP's nest), in output order.
[[nodiscard]] std::span<const Field<Qp>> qp_fields();

// Requests as messages (no socket needed: tests build and inspect them).
// With `dscp2prio` changes, `base_map` is the map they apply to.
[[nodiscard]] nl::Message set_request(uint16_t family, const Command& cmd,
                                      const std::vector<uint8_t>& base_map = {});

// Decoding of reply and notification messages.
[[nodiscard]] Config decode_config(const nlmsghdr* nlh);
[[nodiscard]] Stats decode_stats(const nlmsghdr* nlh);
[[nodiscard]] Qp decode_qp(const nlmsghdr* nlh);

// What a kernel error means for the user: exit code and one line naming
// the attribute the kernel pointed at.
[[nodiscard]] Error explain(const nl::KernelError& err, const nl::Message& req,
                            const std::optional<std::string>& dev);

class Client {
  public:
    // Throws Error(no_module) if the family is not registered.
    Client();
    [[nodiscard]] std::vector<Config> configs(const std::optional<std::string>& dev);
    [[nodiscard]] Config defaults();
    void set(const Command& cmd);  // dcqcn set / profile
    [[nodiscard]] std::vector<Stats> stats(const std::optional<std::string>& dev);
    void reset_stats(const std::string& dev);
    [[nodiscard]] std::vector<Qp> qps(const std::optional<std::string>& dev);
    // Join the "config" group on a second socket and return it.
    [[nodiscard]] nl::Socket subscribe();
    [[nodiscard]] uint16_t family() const { return family_.id; }

  private:
    void run(nl::Message& msg, const nl::Handler& on_reply);
    nl::Socket sock_;
    nl::Socket::Family family_;
};

}  // namespace rxecc::tool
