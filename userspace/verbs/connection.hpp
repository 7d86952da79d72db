// The rdma_cm and verbs resources of rxecc-verbs, each owned by one object:
// the event channel and id, a connection event, and one connection's PD,
// CQs, registered buffer and QP.
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "protocol.hpp"

namespace rxecc::verbs {

// "what: strerror(err)".
std::string errstr(const std::string& what, int err = errno);

// Seconds on the steady clock; CLOCK_MONOTONIC in ns.
double now_s();
uint64_t mono_ns();

// --- owning handles ------------------------------------------------------

template <auto Fn>
struct Deleter {
    template <typename T>
    void operator()(T* p) const {
        Fn(p);
    }
};
using ChannelPtr = std::unique_ptr<rdma_event_channel, Deleter<rdma_destroy_event_channel>>;
using IdPtr = std::unique_ptr<rdma_cm_id, Deleter<rdma_destroy_id>>;
using PdPtr = std::unique_ptr<ibv_pd, Deleter<ibv_dealloc_pd>>;
using CompPtr = std::unique_ptr<ibv_comp_channel, Deleter<ibv_destroy_comp_channel>>;
using CqPtr = std::unique_ptr<ibv_cq, Deleter<ibv_destroy_cq>>;
using MrPtr = std::unique_ptr<ibv_mr, Deleter<ibv_dereg_mr>>;

// One CM event, acknowledged when it goes out of scope.
class Event {
  public:
    // Waits up to `timeout` s for it; throws Error when none comes.
    Event(rdma_event_channel* ch, double timeout);
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    Event(Event&&) = delete;
    Event& operator=(Event&&) = delete;
    ~Event() { rdma_ack_cm_event(ev_); }
    [[nodiscard]] const rdma_cm_event& get() const { return *ev_; }
    // Throws Error unless the event is `t`.
    void expect(rdma_cm_event_type t) const;

  private:
    rdma_cm_event* ev_ = nullptr;
};

// The verbs resources of one connection: PD, CQs, one registered buffer,
// the QP. The QP is destroyed first, the PD last.
class Conn {
  public:
    Conn(rdma_cm_id* id, uint32_t send_wr, uint32_t recv_wr, size_t buf_len, bool busy);
    Conn(const Conn&) = delete;
    Conn& operator=(const Conn&) = delete;
    Conn(Conn&&) = delete;
    Conn& operator=(Conn&&) = delete;
    ~Conn();

    [[nodiscard]] std::span<std::byte> at(size_t off, size_t len) const {
        return {buf_.get() + off, len};
    }
    [[nodiscard]] uint64_t addr(size_t off) const {
        // NOLINTNEXTLINE(*-reinterpret-cast): verbs' integer addresses
        return reinterpret_cast<uintptr_t>(buf_.get() + off);
    }
    [[nodiscard]] uint32_t lkey() const { return mr_->lkey; }
    [[nodiscard]] uint32_t rkey() const { return mr_->rkey; }

    void post_recv(uint64_t wr_id, size_t off, uint32_t len);

    // Post one send-queue work request on `len` bytes at `off`.
    void post_send(uint64_t wr_id, ibv_wr_opcode opcode, size_t off, uint32_t len,
                   std::optional<uint32_t> imm = std::nullopt, uint64_t raddr = 0,
                   uint32_t rkey = 0);

    // Connection events (device removal, disconnection) end a transfer:
    // wait() watches `ch` from now on.
    void watch(rdma_event_channel* ch) { cm_ = ch; }

    // Wait up to `timeout` s for completions; returns those of the send and
    // the receive queue (either may be empty, not both).
    void wait(std::vector<ibv_wc>& sends, std::vector<ibv_wc>& recvs, double timeout);

  private:
    void sleep_for_event();
    void check_cm(int timeout_ms);
    void arm();
    bool drain(std::vector<ibv_wc>& sends, std::vector<ibv_wc>& recvs);

    rdma_cm_id* id_;
    bool busy_;
    PdPtr pd_;
    CompPtr comp_;
    CqPtr scq_, rcq_;
    unsigned events_s_ = 0, events_r_ = 0;
    std::unique_ptr<std::byte[]> buf_;
    size_t len_ = 0;
    MrPtr mr_;
    bool qp_ = false;
    rdma_event_channel* cm_ = nullptr;
};

// A completion's status, wr_id and vendor error, for a message.
std::string wc_text(const ibv_wc& wc);
// A completion's immediate (host byte order).
uint32_t imm_of(const ibv_wc& wc);

// The QpPath of the id's connected QP.
QpPath qp_path(rdma_cm_id* id);

// `host` (empty: any) and `port` as a socket address.
sockaddr_storage resolve(const std::string& host, uint16_t port);
sockaddr* sa(sockaddr_storage& ss);

// The private data of a connection event, at least `need` bytes of it.
std::span<const std::byte> private_data(const rdma_cm_event& ev, size_t need);

// An event channel and an RC (RDMA_PS_TCP) id on it. The id is declared
// second so that it is destroyed first.
std::pair<ChannelPtr, IdPtr> open_cm();

// Connection parameters: our private data, up to 16 RDMA READs in flight
// each way (at most `depth`), 7 transport and RNR retries (7 RNR: forever).
rdma_conn_param conn_param(std::span<const std::byte> data, uint32_t depth);

}  // namespace rxecc::verbs
