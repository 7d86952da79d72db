// What rxecc-coll and rxecc-mpi share around their collectives: reading a
// numeric option, and nccl-tests' report of a message size (the JSON object
// and the text table's header and row).
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "collective.hpp"

namespace rxecc::coll {

// A bad command line: the message names the option and what is wrong.
struct Usage : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The value of option `opt`: a whole number (decimal, 0x hex) in [lo, hi].
uint64_t number(const std::string& opt, const std::string& v, uint64_t lo, uint64_t hi);

// The report of one size from every rank's iteration times
// (times[rank][iteration], seconds) and the wrong elements of all ranks.
nlohmann::json report(Op op, unsigned ranks, size_t bytes, unsigned iters,
                      const std::vector<std::vector<double>>& times, size_t wrong);

// The text table: a header naming the run, then a row per report().
std::string table_header(Op op, unsigned ranks, unsigned iters, unsigned warmup);
std::string table_row(const nlohmann::json& j);

}  // namespace rxecc::coll
