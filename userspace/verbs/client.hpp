// The client of rxecc-verbs: it connects, moves the schedule's messages
// (SEND, WRITE, WRITE with immediate, READ; or pings), checks every READ,
// completion and acknowledgement, and reports its own and the server's
// counts.
#pragma once

#include "options.hpp"

namespace rxecc::verbs {

// SIGINT or SIGTERM: the client stops sending, waits for what is in flight,
// and reports as if its --count or --duration had ended.
extern "C" void on_stop_signal(int sig);

// Connect to o.addr and o.port and run the test; the exit code (0: every
// message checked clean, 1: not). Throws on any other failure.
int run_client(const Options& o);

}  // namespace rxecc::verbs
