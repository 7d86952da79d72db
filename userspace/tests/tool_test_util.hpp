// Helpers of the tool's host tests: what a call throws, the command line.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "errors.hpp"

namespace rxecc::tool::test {

// The exit code of the Error `f` throws (Exit::ok if none).
inline Exit code_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.code();
    }
    return Exit::ok;
}

// The message of the Error `f` throws (empty if none).
inline std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return {};
}

inline Command parse(std::vector<std::string> args) { return parse_command(args); }

}  // namespace rxecc::tool::test
