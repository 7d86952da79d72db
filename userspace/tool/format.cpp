#include "format.hpp"

#include <algorithm>
#include <array>
#include <cstdio>

namespace rxecc::tool {
namespace {

std::string pad(const std::string& s, size_t width, bool right = false) {
    if (s.size() >= width) return s;
    const std::string fill(width - s.size(), ' ');
    return right ? fill + s : s + fill;
}

std::string dev_line(const DevId& d) {
    return "dev " + d.name + " index " + std::to_string(d.index) + " netdev " + d.netdev;
}

void put_dev(nlohmann::json& j, const DevId& d) {
    j["dev"] = d.name;
    j["index"] = d.index;
    j["netdev"] = d.netdev;
}

}  // namespace

// A table: a header row, then rows; columns as wide as their widest cell,
// numbers (`right`) aligned right.
std::string table(const std::vector<std::string>& header, const std::vector<bool>& right,
                  const std::vector<std::vector<std::string>>& rows) {
    std::vector<size_t> w(header.size());
    for (size_t c = 0; c < header.size(); ++c) {
        w[c] = header[c].size();
        for (const auto& r : rows) w[c] = std::max(w[c], r[c].size());
    }
    auto line = [&](const std::vector<std::string>& cells) {
        std::string out;
        for (size_t c = 0; c < cells.size(); ++c) {
            const bool last = c + 1 == cells.size();
            out += last && !right[c] ? cells[c] : pad(cells[c], w[c], right[c]);
            if (!last) out += "  ";
        }
        return out + "\n";
    };
    std::string out = line(header);
    for (const auto& r : rows) out += line(r);
    return out;
}

std::string qp_type_name(uint8_t type) {
    static constexpr std::array<const char*, 5> names = {"SMI", "GSI", "RC", "UC", "UD"};
    if (type < names.size()) return names.at(type);
    return std::to_string(type);
}

std::string qp_state_name(uint8_t state) {
    static constexpr std::array<const char*, 7> names = {"RESET", "INIT", "RTR", "RTS",
                                                         "SQD",   "SQE",  "ERR"};
    if (state < names.size()) return names.at(state);
    return std::to_string(state);
}

// The DSCP map as ranges: "0-7:0 8-15:1 ... 56-63:7".
std::string dscp_map_text(const std::vector<uint8_t>& map) {
    std::string out;
    for (size_t d = 0; d < map.size();) {
        size_t e = d;
        while (e + 1 < map.size() && map[e + 1] == map[d]) ++e;
        if (!out.empty()) out += " ";
        out += std::to_string(d) + (e > d ? "-" + std::to_string(e) : "") + ":" +
               std::to_string(map[d]);
        d = e + 1;
    }
    return out.empty() ? "-" : out;
}

nlohmann::json to_json(const Config& c) {
    nlohmann::json j;
    if (c.dev) {
        put_dev(j, *c.dev);
        j["line_kbps"] = c.line_kbps;
    } else {
        j["defaults"] = true;
    }
    j["profile"] = c.profile;
    auto& params = j["dcqcn"];
    params = nlohmann::json::object();
    for (const auto& k : knobs()) {
        const uint32_t v = knob_value(c, k);
        if (k.dcqcn_index >= 0)
            params[k.name] = v;
        else if (k.unit == Unit::ecn || k.unit == Unit::prio || k.unit == Unit::udp_sport)
            j[k.name] = format_value(k, v);
        else
            j[k.name] = v;
    }
    j["dscp2prio"] = c.dscp2prio;
    return j;
}

nlohmann::json to_json(const Stats& s) {
    nlohmann::json j;
    put_dev(j, s.dev);
    auto& counters = j["counters"];
    counters = nlohmann::json::object();
    for (const auto& c : s.counters) counters[c.name] = c.value;
    return j;
}

nlohmann::json to_json(const Qp& q) {
    nlohmann::json j;
    put_dev(j, q.dev);
    put_json(j, qp_fields(), q);
    return j;
}

std::string dump(const nlohmann::json& j, bool pretty) { return j.dump(pretty ? 4 : -1) + "\n"; }

std::string to_text(const std::vector<Config>& configs) {
    std::string out;
    for (const auto& c : configs) {
        if (!out.empty()) out += "\n";
        if (c.dev)
            out += dev_line(*c.dev) + " line " + format_kbps(c.line_kbps);
        else
            out += "defaults (new devices)";
        out += " profile " + c.profile + "\n";
        std::vector<std::vector<std::string>> rows;
        for (const auto& k : knobs()) {
            // A rate's mlx5 name in whole Mbit/s, else in kbit/s with its
            // unit: the form `dcqcn set` takes back for the same value.
            const Knob& base = base_knob(k);
            std::string v = format_value(k, knob_value(c, k));
            if (&base != &k && k.unit == Unit::mbps) {
                const uint32_t kbps = knob_value(c, base);
                v = kbps % 1000 == 0 ? std::to_string(kbps / 1000) : std::to_string(kbps) + "kbit";
            }
            rows.push_back({"  " + k.name, v, k.unit_name});
        }
        rows.push_back({"  dscp2prio", dscp_map_text(c.dscp2prio), "dscp:prio"});
        // Rows only: the header row of table() is not printed here.
        const std::string t = table({"", "", ""}, {false, true, false}, rows);
        out += t.substr(t.find('\n') + 1);
    }
    return out;
}

std::string to_text(const std::vector<Stats>& stats) {
    std::string out;
    for (const auto& s : stats) {
        if (!out.empty()) out += "\n";
        out += dev_line(s.dev) + "\n";
        std::vector<std::vector<std::string>> rows;
        for (const auto& c : s.counters) rows.push_back({"  " + c.name, std::to_string(c.value)});
        const std::string t = table({"", ""}, {false, true}, rows);
        out += t.substr(t.find('\n') + 1);
    }
    return out;
}

std::string to_text(const std::vector<Qp>& qps) {
    if (qps.empty()) return {};
    std::vector<std::string> header = {"dev"};
    std::vector<bool> right = {false};
    for (auto& h : text_header(qp_fields())) header.push_back(h);
    for (bool r : text_right(qp_fields())) right.push_back(r);
    std::vector<std::vector<std::string>> rows;
    rows.reserve(qps.size());
    for (const auto& q : qps) {
        rows.push_back({q.dev.name});
        for (auto& cell : text_row(qp_fields(), q)) rows.back().push_back(cell);
    }
    return table(header, right, rows);
}

std::string config_diff(const Config& before, const Config& after) {
    std::string out;
    for (const auto& k : knobs()) {
        const uint32_t a = knob_value(before, k);
        const uint32_t b = knob_value(after, k);
        if (a == b) continue;
        if (!out.empty()) out += ", ";
        out += k.name + " " + format_value(k, a) + " -> " + format_value(k, b);
    }
    if (before.dscp2prio != after.dscp2prio)
        out += (out.empty() ? "" : ", ") + std::string("dscp2prio ") +
               dscp_map_text(before.dscp2prio) + " -> " + dscp_map_text(after.dscp2prio);
    if (before.profile != after.profile)
        out += (out.empty() ? "" : ", ") + std::string("profile ") + before.profile + " -> " +
               after.profile;
    return out;
}

}  // namespace rxecc::tool
