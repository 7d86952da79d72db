// Output of the read commands: aligned text for people, JSON with stable
// keys for programs (documented in rxecc(8) and docs/tool.md).
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "fields.hpp"
#include "netlink_client.hpp"

namespace rxecc::tool {

[[nodiscard]] std::string qp_type_name(uint8_t type);
// A table: a header row, then rows; columns as wide as their widest cell,
// numbers (`right`) aligned right.
[[nodiscard]] std::string table(const std::vector<std::string>& header,
                                const std::vector<bool>& right,
                                const std::vector<std::vector<std::string>>& rows);
[[nodiscard]] std::string qp_state_name(uint8_t state);

// Every field of `fields` in `obj`, into `j` under its key.
template <typename T>
void put_json(nlohmann::json& j, std::span<const Field<T>> fields, const T& obj) {
    for (const auto& f : fields) j[std::string(f.key)] = json_value(f.show, f.get(obj));
}

[[nodiscard]] nlohmann::json to_json(const Config& c);
[[nodiscard]] nlohmann::json to_json(const Stats& s);
[[nodiscard]] nlohmann::json to_json(const Qp& q);

template <typename T>
[[nodiscard]] nlohmann::json to_json(const std::vector<T>& items) {
    auto out = nlohmann::json::array();
    for (const auto& i : items) out.push_back(to_json(i));
    return out;
}

[[nodiscard]] std::string dump(const nlohmann::json& j, bool pretty);

[[nodiscard]] std::string to_text(const std::vector<Config>& configs);
[[nodiscard]] std::string to_text(const std::vector<Stats>& stats);
[[nodiscard]] std::string to_text(const std::vector<Qp>& qps);

// The knobs that differ between two configurations: "rp_ai_rate 5 -> 10, ...".
[[nodiscard]] std::string config_diff(const Config& before, const Config& after);

}  // namespace rxecc::tool
