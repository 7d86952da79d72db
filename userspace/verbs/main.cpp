// rxecc-verbs: moves patterned data over an RC QP with SEND, RDMA WRITE,
// WRITE with immediate and RDMA READ, and checks every byte, every
// completion and the order of every message; or, with --test ping, measures
// round trips of one message at a time. It uses librdmacm to connect and
// libibverbs for the data, so it runs against any RoCE device, rxecc or not.
//
// The client drives, the server checks: both derive each message's operation
// and size from the seed (pattern.hpp). The server acknowledges each message
// it saw with a SEND carrying the message's number (and, for ping, the
// data), and the client keeps no more than --depth messages unacknowledged,
// so a WRITE target slot is never rewritten before the server checked it.
//
// protocol.hpp has what the ends say to each other, connection.hpp the
// rdma_cm and verbs resources, server.hpp and client.hpp the two ends. The
// exit codes (0 clean, 1 a fault found, 2 a bad command line, 3 any other
// failure) are in the usage text (options.cpp).
#include <csignal>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "client.hpp"
#include "options.hpp"
#include "server.hpp"

int main(int argc, char** argv) {
    using namespace rxecc::verbs;
    try {
        const std::vector<std::string> args(argv + 1, argv + argc);
        const Options o = parse_options(args);
        struct sigaction sa {};
        sa.sa_handler = on_stop_signal;  // NOLINT(*-union-access): sigaction's C union
        sigaction(SIGINT, &sa, nullptr);
        sigaction(SIGTERM, &sa, nullptr);
        return o.server ? run_server(o) : run_client(o);
    } catch (const UsageError& e) {
        std::cerr << "rxecc-verbs: " << e.what() << "\n" << kUsage;
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "rxecc-verbs: " << e.what() << "\n";
        return 3;
    }
}
