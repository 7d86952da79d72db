// rxecc-coll's RDMA side: one RC QP to every other rank (rdma_cm), one
// registered buffer per rank whose address and key every peer learns when
// it connects, RDMA WRITE with immediate into a peer's buffer, and the
// receive completions those writes make.
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "connection.hpp"

namespace rxecc::coll {

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

using verbs::Deleter;
using verbs::IdPtr;

// The private data of a connection request and of its acceptance.
struct Hello {
    uint32_t magic;
    uint32_t rank;
    uint64_t addr;
    uint32_t rkey;
    uint32_t pad;
    uint64_t config;  // the run's settings: every rank must have the same
};

class Mesh {
  public:
    // Connects rank `rank` to every other rank of `hosts` (one address per
    // rank; each listens on `port` at its own), with a buffer of `bytes`.
    // `config` stands for the run's settings: a rank with another one is
    // refused. `qp`: options of the connections (rdma_cm's defaults when
    // unset).
    struct QpOptions {
        // the IP type of service of the connections this rank makes (the
        // accepting side takes the traffic class from the request)
        std::optional<uint8_t> tos;
        // the local ACK timeout exponent of every QP (4.096 us x 2^N)
        std::optional<uint8_t> ack_timeout;
    };
    Mesh(unsigned rank, const std::vector<std::string>& hosts, uint16_t port, size_t bytes,
         double timeout, uint64_t config, QpOptions qp = {});
    Mesh(const Mesh&) = delete;
    Mesh& operator=(const Mesh&) = delete;
    Mesh(Mesh&&) = delete;
    Mesh& operator=(Mesh&&) = delete;
    ~Mesh();

    [[nodiscard]] std::byte* buf() const { return buf_.get(); }
    [[nodiscard]] unsigned size() const { return static_cast<unsigned>(peers_.size()); }

    // RDMA WRITE with immediate `imm` of `len` bytes at `off` of this
    // rank's buffer to `remote_off` of peer `to`'s.
    void write(unsigned to, size_t off, size_t len, size_t remote_off, uint32_t imm);
    // The next immediate peer `from` wrote, in the order it wrote them.
    uint32_t recv_from(unsigned from);
    // Wait until every write posted so far has completed.
    void drain_sends();

  private:
    struct Peer {
        IdPtr id;
        uint64_t addr = 0;
        uint32_t rkey = 0;
        bool up = false;
        std::deque<uint32_t> inbox;
    };
    void connect_all();
    void on_event(rdma_cm_event_type type, rdma_cm_id* id, const std::optional<Hello>& h,
                  int status);
    void on_request(rdma_cm_id* id, const std::optional<Hello>& h);
    void on_established(rdma_cm_id* id, const std::optional<Hello>& h);
    rdma_conn_param conn_param();  // our Hello, kept in mine_
    void connect_to(unsigned peer);
    void drop(unsigned peer);  // its QP and id, when it is not connected
    void setup_qp(rdma_cm_id* id);
    static void post_recvs(rdma_cm_id* id, unsigned count);
    void poll_one_recv();
    void poll_sends();
    // Nothing completed: arm the CQs that are not armed (the caller then
    // polls once more), or wait on the channel up to 50 ms.
    void idle();
    // The QP options on an id: `active` for one this rank connects.
    void set_options(rdma_cm_id* id, bool active) const;
    // The peer whose QP has number `qpn`, or size() if none has.
    [[nodiscard]] unsigned peer_of_qp(uint32_t qpn) const;

    unsigned rank_;
    std::vector<std::string> hosts_;
    uint16_t port_;
    double timeout_;
    QpOptions qp_;
    uint64_t config_;
    size_t len_;
    // Declared in the order of creation: destroyed in reverse (the QPs, in
    // the destructor's body, first).
    std::unique_ptr<rdma_event_channel, Deleter<rdma_destroy_event_channel>> ch_;
    std::unique_ptr<std::byte[]> buf_;
    IdPtr listen_;
    std::unique_ptr<ibv_pd, Deleter<ibv_dealloc_pd>> pd_;
    // Both CQs report to one channel: a rank with nothing to do sleeps on it
    // (eight ranks polling would take the CPUs rxe's work needs).
    rxecc::verbs::CompPtr comp_;
    std::unique_ptr<ibv_cq, Deleter<ibv_destroy_cq>> scq_, rcq_;
    bool scq_armed_ = false;
    bool rcq_armed_ = false;
    std::unique_ptr<ibv_mr, Deleter<ibv_dereg_mr>> mr_;
    std::vector<Peer> peers_;
    unsigned up_ = 0;     // peers connected
    unsigned sends_ = 0;  // writes not yet completed
    Hello mine_{};
};

}  // namespace rxecc::coll
