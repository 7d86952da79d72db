// The command line of `rxecc`, parsed into a Command (no I/O here).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "params.hpp"

namespace rxecc::tool {

enum class Verb {
    help,
    version,
    dcqcn_show,
    dcqcn_set,
    dcqcn_profile,
    stats_show,
    stats_reset,
    qp_show,
    monitor,
};

struct Setting {
    const Knob* knob;
    uint32_t value;
};

struct Command {
    Verb verb = Verb::help;
    bool json = false;
    bool pretty = false;
    std::optional<std::string> dev;  // `dev NAME`
    bool defaults = false;           // `defaults` instead of a device
    std::vector<Setting> settings;   // dcqcn set
    std::string profile;             // dcqcn profile
    uint32_t interval_ms = 1000;     // monitor
    std::optional<uint32_t> count;   // monitor: stop after this many refreshes
    std::string help_topic;          // help: "", "dcqcn", "stats", "qp", "monitor"
};

// Parse the arguments after the program name. Throws Error(usage) for bad
// syntax, Error(unknown_param) and Error(bad_value) for settings.
[[nodiscard]] Command parse_command(std::span<const std::string> argv);

// The help text of a topic ("" for the overview).
[[nodiscard]] std::string help_text(std::string_view topic);

}  // namespace rxecc::tool
