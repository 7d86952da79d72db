// The tool's errors and its exit codes (documented in rxecc(8)).
#pragma once

#include <stdexcept>
#include <string>

namespace rxecc::tool {

enum class Exit : int {
    ok = 0,
    usage = 1,          // bad syntax: unknown command, option or keyword, missing argument
    no_module = 2,      // the rdma_rxecc module is not loaded (no "rxecc" netlink family)
    no_device = 3,      // no rxecc device of that name (in this network namespace)
    not_rxecc = 4,      // the device exists but belongs to another driver
    unknown_param = 5,  // no such parameter
    bad_value = 6,      // a value of the wrong type, or out of range (the kernel's message)
    permission = 7,     // CAP_NET_ADMIN is needed (-n: CAP_SYS_ADMIN)
    system = 8,         // any other netlink or system error
};

// An error that ends the command: one line on stderr, exit code `code`.
class Error : public std::runtime_error {
  public:
    Error(Exit code, const std::string& what) : std::runtime_error(what), code_(code) {}
    [[nodiscard]] Exit code() const { return code_; }

  private:
    Exit code_;
};

}  // namespace rxecc::tool
