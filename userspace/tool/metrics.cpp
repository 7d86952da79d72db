#include "metrics.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <utility>

namespace rxecc::tool {
namespace {

enum class Type { counter, gauge };

using Labels = std::vector<std::pair<std::string, std::string>>;

struct Sample {
    Labels labels;
    std::string value;
};

// One metric family: `name` without the counter's _total; a unit, when it
// has one, ends the name (OpenMetrics' rule).
struct Family {
    std::string name;
    Type type = Type::counter;
    std::string unit;
    std::string help;
    std::vector<Sample> samples;
};

// How a source value becomes a sample: its family's name, type, unit and
// the divisor to that unit (microseconds and nanoseconds to seconds).
struct Kind {
    std::string name;
    Type type = Type::counter;
    std::string unit;
    uint64_t per_unit = 1;
};

class Families {
  public:
    void add(const Kind& k, const std::string& help, Labels labels, uint64_t v) {
        auto [it, fresh] = index_.try_emplace(k.name, all_.size());
        if (fresh) all_.push_back({k.name, k.type, k.unit, help, {}});
        all_.at(it->second).samples.push_back({std::move(labels), number(v, k.per_unit)});
    }
    [[nodiscard]] const std::vector<Family>& all() const { return all_; }

  private:
    // v / per_unit in decimal, exactly (per_unit a power of ten).
    static std::string number(uint64_t v, uint64_t per_unit) {
        if (per_unit == 1) return std::to_string(v);
        std::string frac = std::to_string(v % per_unit);
        frac.insert(0, std::to_string(per_unit).size() - 1 - frac.size(), '0');
        while (!frac.empty() && frac.back() == '0') frac.pop_back();
        return std::to_string(v / per_unit) + (frac.empty() ? "" : "." + frac);
    }
    std::vector<Family> all_;
    std::map<std::string, size_t> index_;
};

bool ends_with(std::string_view s, std::string_view tail) {
    return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// A metric name from a source name: what the format allows ([a-zA-Z0-9_]
// after the prefix), the rest as '_'.
std::string name_part(std::string_view key) {
    std::string out(key);
    for (char& c : out)
        if ((c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9')) c = '_';
    return out;
}

// A name with the unit its source key names: ..._us and ..._ns are seconds.
Kind kind_of(const std::string& prefix, std::string_view key, Type type) {
    Kind k{prefix + name_part(key), type, "", 1};
    for (const auto& [tail, per] :
         {std::pair{"_us", 1000000ULL}, std::pair{"_ns", 1000000000ULL}}) {
        if (!ends_with(key, tail)) continue;
        k.name = prefix + name_part(key.substr(0, key.size() - 3)) + "_seconds";
        k.unit = "seconds";
        k.per_unit = per;
    }
    return k;
}

// rx_prio3_pause_duration -> {"rx_prio_pause_duration", 3}; nullopt for a
// counter that is not per priority.
std::optional<std::pair<std::string, std::string>> per_prio(std::string_view name) {
    if (name.size() < 14 || (name.substr(0, 7) != "rx_prio" && name.substr(0, 7) != "tx_prio") ||
        name[7] < '0' || name[7] > '7' || name.substr(8, 6) != "_pause")
        return std::nullopt;
    return std::pair{std::string(name.substr(0, 7)) + std::string(name.substr(8)),
                     std::string(1, name[7])};
}

void add_port_counters(Families& out, const Stats& s) {
    const Labels dev = {{"device", s.dev.name}, {"netdev", s.dev.netdev}, {"port", "1"}};
    for (const auto& c : s.counters) {
        Labels labels = dev;
        std::string key = c.name;
        std::string help = "rdma_rxecc port counter " + c.name + " (hw_counters/" + c.name +
                           (ends_with(c.name, "_us") ? ", in us there" : "") +
                           "; docs/counters.md)";
        if (auto pp = per_prio(c.name)) {
            key = pp->first;
            labels.emplace_back("prio", pp->second);
            help = "rdma_rxecc port counters " + key.substr(0, 7) + "<p>" + key.substr(7) +
                   " (hw_counters" + (ends_with(key, "_duration") ? ", in us there" : "") +
                   "), priority p in the prio label";
        }
        // The per-priority durations are in us without saying so in their names.
        if (ends_with(key, "_pause_duration")) key += "_us";
        out.add(kind_of("rxecc_port_", key, Type::counter), help, std::move(labels), c.value);
    }
}

template <typename T>
void add_fields(Families& out, const std::string& prefix, std::span<const Field<T>> fields,
                const T& obj, const Labels& labels, const std::string& what) {
    for (const auto& f : fields) {
        const std::string_view key = f.key;
        if (key == "prio" || key == "pfc" || key == "handle") continue;  // labels, settings
        // Gauges: what is there now; the rest count up from the qdisc's creation.
        const bool gauge =
            key == "backlog" || key == "qlen" || key == "xoff_ports" || key == "wd_storm";
        Kind k = kind_of(prefix, key, gauge ? Type::gauge : Type::counter);
        if (key == "backlog") k = {prefix + "backlog_bytes", Type::gauge, "bytes", 1};
        if (key == "tx_bytes") k = {prefix + "tx_bytes", Type::counter, "bytes", 1};
        if (key == "qlen") k.name = prefix + "qlen_packets";
        const uint64_t v = f.show == Show::ns_as_us ? f.get(obj) / 1000 : f.get(obj);
        out.add(k,
                "pfc qdisc " + what + " " + std::string(key) + " (rxecc qdisc show" +
                    (k.unit == "seconds" ? ", in us there" : "") + "; docs/pfc.md)",
                labels, v);
    }
}

void add_qdisc(Families& out, const QdiscInfo& q) {
    add_fields(out, "rxecc_qdisc_", qdisc_port_stat_fields(), q, {{"netdev", q.netdev}},
               "statistic");
    for (const auto& p : q.prio) {
        const Labels labels = {{"netdev", q.netdev}, {"prio", std::to_string(p.id)}};
        add_fields(out, "rxecc_qdisc_prio_", qdisc_prio_stat_fields(), p.stats, labels,
                   "per-priority statistic");
        add_fields(out, "rxecc_qdisc_prio_", qdisc_prio_wd_fields(), p.wd, labels,
                   "per-priority PFC watchdog statistic");
    }
}

// A label value: backslash, double quote and newline escaped (both formats).
std::string escape(std::string_view s, bool quote) {
    std::string out;
    for (const char c : s) {
        if (c == '\\') {
            out += "\\\\";
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '"' && quote) {
            out += "\\\"";
        } else {
            out += c;
        }
    }
    return out;
}

std::string render(const std::vector<Family>& families, MetricsFormat format) {
    const bool om = format == MetricsFormat::openmetrics;
    std::string out;
    for (const auto& f : families) {
        const bool counter = f.type == Type::counter;
        // OpenMetrics names a counter family without _total, its samples with it;
        // format 0.0.4 names both with it.
        const std::string sample = counter ? f.name + "_total" : f.name;
        const std::string family = om ? f.name : sample;
        out += "# HELP " + family + " " + escape(f.help, om) + "\n";
        out += "# TYPE " + family + (counter ? " counter\n" : " gauge\n");
        if (om && !f.unit.empty()) out += "# UNIT " + family + " " + f.unit + "\n";
        for (const auto& s : f.samples) {
            out += sample;
            if (!s.labels.empty()) {
                out += "{";
                for (size_t i = 0; i < s.labels.size(); ++i)
                    out += (i != 0 ? "," : "") + s.labels[i].first + "=\"" +
                           escape(s.labels[i].second, true) + "\"";
                out += "}";
            }
            out += " " + s.value + "\n";
        }
    }
    if (om) out += "# EOF\n";
    return out;
}

}  // namespace

std::string metrics_text(const std::vector<Stats>& stats, const std::vector<QdiscInfo>& qdiscs,
                         MetricsFormat format) {
    Families out;
    for (const auto& s : stats) add_port_counters(out, s);
    for (const auto& q : qdiscs) add_qdisc(out, q);
    return render(out.all(), format);
}

}  // namespace rxecc::tool
