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
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <poll.h>
#include <rdma/rdma_cma.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <deque>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "options.hpp"
#include "pattern.hpp"

namespace rxecc::verbs {
namespace {

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// SIGINT or SIGTERM: the client stops sending, waits for what is in flight,
// and reports as if its --count or --duration had ended.
// NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables)
volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_stop_signal(int /*sig*/) { g_stop = 1; }

std::string errstr(const std::string& what, int err = errno) {
    return what + ": " + std::strerror(err);  // NOLINT(concurrency-mt-unsafe)
}

// What the client tells the server in its connect request, and the answer.
// Both ends run this program on one machine type, so the layout is shared.
constexpr uint32_t kMagic = 0x72786376;  // "rxcv"
constexpr uint8_t kVersion = 1;

struct Hello {
    uint32_t magic;
    uint8_t version;
    uint8_t test;
    uint8_t only;  // 0xff: the mix
    uint8_t reserved;
    uint32_t depth;
    uint32_t max_size;
    uint32_t size;  // ping size
    uint64_t seed;
};

struct Welcome {
    uint64_t slots_addr;
    uint64_t read_addr;
    uint32_t rkey;
    uint32_t read_len;
};

// A control message (plain SEND, no immediate).
enum class Kind : uint32_t { notify = 1, fin = 2, result = 3 };
struct Ctl {
    uint32_t magic;
    Kind kind;
    uint64_t value;
    uint64_t msgs, bytes, corrupt, lost, dup, bad;
};

struct Counts {
    uint64_t msgs = 0, bytes = 0, corrupt = 0, lost = 0, dup = 0, bad = 0;
    [[nodiscard]] bool clean() const { return corrupt == 0 && lost == 0 && dup == 0 && bad == 0; }
};

nlohmann::json to_json(const Counts& c) {
    return {{"messages", c.msgs}, {"bytes", c.bytes},    {"corrupt", c.corrupt},
            {"lost", c.lost},     {"duplicated", c.dup}, {"bad_completions", c.bad}};
}

uint32_t read_len_for(uint32_t max_size) { return 2 * max_size; }
uint32_t buf_size_for(uint32_t max_size) { return std::max<uint32_t>(max_size, sizeof(Ctl)); }

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

uint64_t mono_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

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
    Event(rdma_event_channel* ch, double timeout) {
        pollfd p{ch->fd, POLLIN, 0};
        const int r = ::poll(&p, 1, static_cast<int>(timeout * 1000));
        if (r == 0) {
            throw Error("no connection event within " + std::to_string(timeout) + " s");
        }
        if (r < 0 || rdma_get_cm_event(ch, &ev_) != 0) {
            throw Error(errstr("rdma_get_cm_event"));
        }
    }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    Event(Event&&) = delete;
    Event& operator=(Event&&) = delete;
    ~Event() { rdma_ack_cm_event(ev_); }
    [[nodiscard]] const rdma_cm_event& get() const { return *ev_; }
    void expect(rdma_cm_event_type t) const {
        if (ev_->event != t) {
            throw Error(std::string("expected ") + rdma_event_str(t) + ", got " +
                        rdma_event_str(ev_->event) + " (status " + std::to_string(ev_->status) +
                        ")");
        }
    }

  private:
    rdma_cm_event* ev_ = nullptr;
};

// The verbs resources of one connection: PD, CQs, one registered buffer,
// the QP. The QP is destroyed first, the PD last.
class Conn {
  public:
    Conn(rdma_cm_id* id, uint32_t send_wr, uint32_t recv_wr, size_t buf_len, bool busy)
        : id_(id), busy_(busy) {
        pd_.reset(ibv_alloc_pd(id->verbs));
        if (!pd_) {
            throw Error(errstr("ibv_alloc_pd"));
        }
        comp_.reset(ibv_create_comp_channel(id->verbs));
        if (!comp_) {
            throw Error(errstr("ibv_create_comp_channel"));
        }
        scq_.reset(ibv_create_cq(id->verbs, static_cast<int>(send_wr), nullptr, comp_.get(), 0));
        rcq_.reset(ibv_create_cq(id->verbs, static_cast<int>(recv_wr), nullptr, comp_.get(), 0));
        if (!scq_ || !rcq_) {
            throw Error(errstr("ibv_create_cq"));
        }
        buf_ = std::make_unique<std::byte[]>(buf_len);
        len_ = buf_len;
        mr_.reset(
            ibv_reg_mr(pd_.get(), buf_.get(), buf_len,
                       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ));
        if (!mr_) {
            throw Error(errstr("ibv_reg_mr"));
        }
        ibv_qp_init_attr qa{};
        qa.send_cq = scq_.get();
        qa.recv_cq = rcq_.get();
        qa.qp_type = IBV_QPT_RC;
        qa.sq_sig_all = 1;
        qa.cap.max_send_wr = send_wr;
        qa.cap.max_recv_wr = recv_wr;
        qa.cap.max_send_sge = 1;
        qa.cap.max_recv_sge = 1;
        if (rdma_create_qp(id, pd_.get(), &qa) != 0) {
            throw Error(errstr("rdma_create_qp"));
        }
        qp_ = true;
        arm();
    }
    Conn(const Conn&) = delete;
    Conn& operator=(const Conn&) = delete;
    Conn(Conn&&) = delete;
    Conn& operator=(Conn&&) = delete;
    ~Conn() {
        if (qp_) {
            rdma_destroy_qp(id_);
        }
        if (scq_ && rcq_) {
            ibv_ack_cq_events(scq_.get(), events_s_);
            ibv_ack_cq_events(rcq_.get(), events_r_);
        }
    }

    [[nodiscard]] std::span<std::byte> at(size_t off, size_t len) const {
        return {buf_.get() + off, len};
    }
    [[nodiscard]] uint64_t addr(size_t off) const {
        return reinterpret_cast<uintptr_t>(buf_.get() + off);  // NOLINT(*-reinterpret-cast)
    }
    [[nodiscard]] uint32_t lkey() const { return mr_->lkey; }
    [[nodiscard]] uint32_t rkey() const { return mr_->rkey; }

    void post_recv(uint64_t wr_id, size_t off, uint32_t len) {
        ibv_sge sge{addr(off), len, lkey()};
        ibv_recv_wr wr{};
        ibv_recv_wr* bad = nullptr;
        wr.wr_id = wr_id;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        if (const int e = ibv_post_recv(id_->qp, &wr, &bad); e != 0) {
            throw Error(errstr("ibv_post_recv", e));
        }
    }

    // Post one send-queue work request on `len` bytes at `off`.
    void post_send(uint64_t wr_id, ibv_wr_opcode opcode, size_t off, uint32_t len,
                   std::optional<uint32_t> imm = std::nullopt, uint64_t raddr = 0,
                   uint32_t rkey = 0) {
        ibv_sge sge{addr(off), len, lkey()};
        ibv_send_wr wr{};
        ibv_send_wr* bad = nullptr;
        wr.wr_id = wr_id;
        wr.sg_list = &sge;
        wr.num_sge = len != 0 ? 1 : 0;
        wr.opcode = opcode;
        if (imm) {
            wr.imm_data = htonl(*imm);  // NOLINT(cppcoreguidelines-pro-type-union-access)
        }
        wr.wr.rdma.remote_addr = raddr;  // NOLINT(cppcoreguidelines-pro-type-union-access)
        wr.wr.rdma.rkey = rkey;          // NOLINT(cppcoreguidelines-pro-type-union-access)
        if (const int e = ibv_post_send(id_->qp, &wr, &bad); e != 0) {
            throw Error(errstr("ibv_post_send", e));
        }
    }

    // Connection events (device removal, disconnection) end a transfer:
    // wait() watches `ch` from now on.
    void watch(rdma_event_channel* ch) { cm_ = ch; }

    // Wait up to `timeout` s for completions; returns those of the send and
    // the receive queue (either may be empty, not both).
    void wait(std::vector<ibv_wc>& sends, std::vector<ibv_wc>& recvs, double timeout) {
        const double deadline = now_s() + timeout;
        for (unsigned spin = 0;; ++spin) {
            if (drain(sends, recvs)) {
                return;
            }
            if (now_s() > deadline) {
                throw Error("no completion for " + std::to_string(timeout) + " s");
            }
            if (busy_) {
                if (spin % 4096 == 0) {
                    check_cm(0);
                }
                continue;
            }
            sleep_for_event();
        }
    }

  private:
    // Sleep until the completion channel or the connection channel has
    // something (at most 100 ms); re-arm the CQs after a completion event.
    void sleep_for_event() {
        std::array<pollfd, 2> p{
            {{comp_->fd, POLLIN, 0}, {cm_ != nullptr ? cm_->fd : -1, POLLIN, 0}}};
        const int r = ::poll(p.data(), p.size(), 100);
        if (r < 0 && errno != EINTR) {
            throw Error(errstr("poll"));
        }
        if (r > 0 && (p[1].revents & POLLIN) != 0) {
            check_cm(0);
        }
        if (r > 0 && (p[0].revents & POLLIN) != 0) {
            ibv_cq* cq = nullptr;
            void* ctx = nullptr;
            if (ibv_get_cq_event(comp_.get(), &cq, &ctx) != 0) {
                throw Error(errstr("ibv_get_cq_event"));
            }
            (cq == scq_.get() ? events_s_ : events_r_)++;
            arm();
        }
    }

    // A connection event that arrived while data moves: another client's
    // request is refused, anything else ends the transfer.
    void check_cm(int timeout_ms) {
        if (cm_ == nullptr) {
            return;
        }
        pollfd p{cm_->fd, POLLIN, 0};
        if (::poll(&p, 1, timeout_ms) <= 0) {
            return;
        }
        const Event ev(cm_, 1);
        if (ev.get().event == RDMA_CM_EVENT_CONNECT_REQUEST) {
            rdma_reject(ev.get().id, nullptr, 0);
            return;
        }
        throw Error(std::string("connection event during the transfer: ") +
                    rdma_event_str(ev.get().event));
    }

    void arm() {
        if (!busy_ &&
            (ibv_req_notify_cq(scq_.get(), 0) != 0 || ibv_req_notify_cq(rcq_.get(), 0) != 0)) {
            throw Error(errstr("ibv_req_notify_cq"));
        }
    }
    bool drain(std::vector<ibv_wc>& sends, std::vector<ibv_wc>& recvs) {
        std::array<ibv_wc, 16> wc{};
        for (auto [cq, out] : {std::pair{scq_.get(), &sends}, std::pair{rcq_.get(), &recvs}}) {
            int n = 0;
            while ((n = ibv_poll_cq(cq, static_cast<int>(wc.size()), wc.data())) > 0) {
                out->insert(out->end(), wc.begin(), wc.begin() + n);
            }
            if (n < 0) {
                throw Error("ibv_poll_cq failed");
            }
        }
        return !sends.empty() || !recvs.empty();
    }

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

std::string wc_text(const ibv_wc& wc) {
    return std::string(ibv_wc_status_str(wc.status)) + " (wr_id " + std::to_string(wc.wr_id) +
           ", vendor_err " + std::to_string(wc.vendor_err) + ")";
}

uint32_t imm_of(const ibv_wc& wc) {
    return ntohl(wc.imm_data);  // NOLINT(cppcoreguidelines-pro-type-union-access)
}

// The 64-bit message number nearest `near` whose low 32 bits are `imm`.
uint64_t widen(uint64_t near, uint32_t imm) {
    const auto d = static_cast<int32_t>(imm - static_cast<uint32_t>(near));
    return near + static_cast<uint64_t>(static_cast<int64_t>(d));
}

sockaddr_storage resolve(const std::string& host, uint16_t port) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_flags = AI_NUMERICSERV | (host.empty() ? AI_PASSIVE : 0);
    addrinfo* res = nullptr;
    const std::string service = std::to_string(port);
    if (const int e =
            getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &res);
        e != 0) {
        throw Error("address '" + host + "': " + gai_strerror(e));
    }
    sockaddr_storage ss{};
    std::memcpy(&ss, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    return ss;
}

sockaddr* sa(sockaddr_storage& ss) {
    return reinterpret_cast<sockaddr*>(&ss);  // NOLINT(*-reinterpret-cast)
}

template <typename T>
T from_private(const rdma_cm_event& ev) {
    T t{};
    const rdma_conn_param& conn = ev.param.conn;  // NOLINT(cppcoreguidelines-pro-type-union-access)
    if (conn.private_data == nullptr || conn.private_data_len < sizeof(T)) {
        throw Error("the peer's connection data is missing or short");
    }
    std::memcpy(&t, conn.private_data, sizeof(T));
    return t;
}

// An event channel and an RC (RDMA_PS_TCP) id on it. The id is declared
// second so that it is destroyed first.
std::pair<ChannelPtr, IdPtr> open_cm() {
    ChannelPtr ch(rdma_create_event_channel());
    if (!ch) {
        throw Error(errstr("rdma_create_event_channel"));
    }
    rdma_cm_id* raw = nullptr;
    if (rdma_create_id(ch.get(), &raw, nullptr, RDMA_PS_TCP) != 0) {
        throw Error(errstr("rdma_create_id"));
    }
    return {std::move(ch), IdPtr(raw)};
}

// Connection parameters: our private data, up to 16 RDMA READs in flight
// each way (at most `depth`), 7 transport and RNR retries (7 RNR: forever).
rdma_conn_param conn_param(const void* data, size_t len, uint32_t depth) {
    rdma_conn_param cp{};
    cp.private_data = data;
    cp.private_data_len = static_cast<uint8_t>(len);
    cp.responder_resources = static_cast<uint8_t>(std::min<uint32_t>(depth, 16));
    cp.initiator_depth = cp.responder_resources;
    cp.retry_count = 7;
    cp.rnr_retry_count = 7;
    return cp;
}

// --- server --------------------------------------------------------------

// Layout of the server's buffer: the WRITE slots, the READ region, the
// receive buffers, the send (acknowledgement) buffers, one per send-queue
// entry.
struct ServerLayout {
    uint32_t depth, slot, read_len;
    [[nodiscard]] uint32_t sq() const { return 2 * depth + 2; }
    [[nodiscard]] size_t slot_off(uint64_t seq) const { return (seq % depth) * slot; }
    [[nodiscard]] size_t read_off() const { return size_t{depth} * slot; }
    [[nodiscard]] size_t recv_off(uint64_t i) const { return read_off() + read_len + i * slot; }
    [[nodiscard]] size_t send_off(uint64_t i) const { return recv_off(depth) + (i % sq()) * slot; }
    [[nodiscard]] size_t total() const { return send_off(0) + size_t{sq()} * slot; }
};

Hello check_hello(const Hello& h) {
    if (h.magic != kMagic || h.version != kVersion) {
        throw Error("the client is not rxecc-verbs version " + std::to_string(kVersion));
    }
    if (h.depth < 1 || h.depth > 256 || h.max_size < 16 || h.max_size > (1U << 20U) ||
        h.size > h.max_size || (h.test != 1 && h.test != 2) || (h.only > 3 && h.only != 0xff)) {
        throw Error("the client's parameters are out of range");
    }
    return h;
}

// The server's side of one test: check each message the client sends and
// acknowledge it; answer FIN with its counts.
class Server {
  public:
    Server(const Hello& h, rdma_cm_id* id, bool busy)
        : lay_{h.depth, buf_size_for(h.max_size), read_len_for(h.max_size)},
          ping_(h.test == static_cast<uint8_t>(Test::ping)),
          sched_(h.seed, h.max_size, lay_.read_len,
                 h.only == 0xff ? std::nullopt : std::optional{static_cast<Op>(h.only)},
                 ping_ ? std::optional{h.size} : std::nullopt),
          c_(id, lay_.sq(), h.depth, lay_.total(), busy),
          expected_(sched_.server_visible(0) ? 0 : sched_.next_visible(0)) {
        fill(c_.at(lay_.read_off(), lay_.read_len), kReadStream);
        for (uint32_t i = 0; i < h.depth; ++i) {
            c_.post_recv(i, lay_.recv_off(i), lay_.slot);
        }
    }

    void watch(rdma_event_channel* ch) { c_.watch(ch); }

    [[nodiscard]] Welcome welcome() const {
        return {c_.addr(0), c_.addr(lay_.read_off()), c_.rkey(), lay_.read_len};
    }

    int run(double timeout) {
        std::vector<ibv_wc> sends;
        std::vector<ibv_wc> recvs;
        while (!fin_ || acks_done_ < acks_) {
            if (!rq_.empty() && acks_ - acks_done_ < lay_.sq()) {
                const ibv_wc wc = rq_.front();
                rq_.pop_front();
                on_recv(wc);
                continue;
            }
            sends.clear();
            recvs.clear();
            c_.wait(sends, recvs, timeout);
            for (const auto& wc : sends) {
                if (wc.status != IBV_WC_SUCCESS) {
                    throw Error("acknowledgement failed: " + wc_text(wc));
                }
                ++acks_done_;
            }
            rq_.insert(rq_.end(), recvs.begin(), recvs.end());
        }
        nlohmann::json j = {{"role", "server"}, {"test", ping_ ? "ping" : "verify"}};
        j.update(to_json(n_));
        j["ok"] = n_.clean();
        std::cout << j.dump() << "\n";
        return n_.clean() ? 0 : 1;
    }

  private:
    void on_recv(const ibv_wc& wc) {
        if (wc.status != IBV_WC_SUCCESS) {
            throw Error("receive failed: " + wc_text(wc));
        }
        const uint64_t slot = wc.wr_id;
        auto rbuf = c_.at(lay_.recv_off(slot), lay_.slot);
        const bool is_ctl = (wc.wc_flags & IBV_WC_WITH_IMM) == 0;
        uint64_t seq = 0;
        if (is_ctl) {
            Ctl ctl{};
            if (wc.byte_len != sizeof(Ctl)) {
                throw Error("a control message of " + std::to_string(wc.byte_len) + " bytes");
            }
            std::memcpy(&ctl, rbuf.data(), sizeof(ctl));
            if (ctl.magic != kMagic || (ctl.kind != Kind::fin && ctl.kind != Kind::notify)) {
                throw Error("an unknown control message");
            }
            if (ctl.kind == Kind::fin) {
                // Messages the client sent that never arrived.
                for (uint64_t s = expected_; s < ctl.value; s = sched_.next_visible(s)) {
                    ++n_.lost;
                }
                const Ctl r{kMagic,     Kind::result, 0,      n_.msgs, n_.bytes,
                            n_.corrupt, n_.lost,      n_.dup, n_.bad};
                std::memcpy(c_.at(lay_.send_off(acks_), sizeof(r)).data(), &r, sizeof(r));
                c_.post_send(acks_, IBV_WR_SEND, lay_.send_off(acks_), sizeof(r));
                ++acks_;
                fin_ = true;
                c_.watch(nullptr);  // the client disconnects once it has the result
                return;
            }
            seq = ctl.value;
        } else {
            seq = widen(expected_, imm_of(wc));
        }
        if (seq < expected_) {
            ++n_.dup;
            std::cerr << "rxecc-verbs: message " << seq << " again (expected " << expected_
                      << ")\n";
            c_.post_recv(slot, lay_.recv_off(slot), lay_.slot);
            return;
        }
        for (uint64_t s = expected_; s < seq; s = sched_.next_visible(s)) {
            ++n_.lost;
        }
        const std::span<const std::byte> data = check(seq, wc, is_ctl, rbuf);
        expected_ = sched_.next_visible(seq);
        // The acknowledgement carries the number and, for ping, the data;
        // the receive buffer goes back first so the client never waits for it.
        const auto echo = static_cast<uint32_t>(ping_ ? data.size() : 0);
        const size_t off = lay_.send_off(acks_);
        std::memcpy(c_.at(off, echo).data(), data.data(), echo);
        c_.post_recv(slot, lay_.recv_off(slot), lay_.slot);
        c_.post_send(acks_, IBV_WR_SEND_WITH_IMM, off, echo, static_cast<uint32_t>(seq));
        ++acks_;
    }

    // Check message `seq` against what the schedule says it is; returns its
    // data.
    std::span<const std::byte> check(uint64_t seq, const ibv_wc& wc, bool is_ctl,
                                     std::span<std::byte> rbuf) {
        const Step st = sched_.at(seq);
        std::span<const std::byte> data;
        bool shape_ok = false;
        switch (st.op) {
            case Op::send:
                shape_ok = !is_ctl && wc.opcode == IBV_WC_RECV && wc.byte_len == st.size;
                data = rbuf.first(std::min<size_t>(st.size, rbuf.size()));
                break;
            case Op::write:
                shape_ok = is_ctl;
                data = c_.at(lay_.slot_off(seq), st.size);
                break;
            case Op::write_imm:
                shape_ok =
                    !is_ctl && wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM && wc.byte_len == st.size;
                data = c_.at(lay_.slot_off(seq), st.size);
                break;
            case Op::read:
                break;
        }
        if (!shape_ok) {
            ++n_.bad;
            std::cerr << "rxecc-verbs: message " << seq << " (" << op_name(st.op) << ", " << st.size
                      << " B) arrived as opcode " << wc.opcode << " with " << wc.byte_len << " B\n";
        } else if (auto at = first_mismatch(data, seq)) {
            ++n_.corrupt;
            std::cerr << "rxecc-verbs: message " << seq << " (" << op_name(st.op) << ", " << st.size
                      << " B) differs at byte " << *at << "\n";
        } else {
            ++n_.msgs;
            n_.bytes += st.size;
        }
        return data;
    }

    ServerLayout lay_;
    bool ping_;
    Schedule sched_;
    Conn c_;
    Counts n_;
    uint64_t expected_;
    uint64_t acks_ = 0, acks_done_ = 0;
    bool fin_ = false;
    std::deque<ibv_wc> rq_;
};

int run_server(const Options& o) {
    auto [ch, listen] = open_cm();
    sockaddr_storage ss = resolve(o.addr, o.port);
    if (rdma_bind_addr(listen.get(), sa(ss)) != 0 || rdma_listen(listen.get(), 1) != 0) {
        throw Error(errstr("listening on port " + std::to_string(o.port)));
    }
    std::cerr << "rxecc-verbs: listening on port " << o.port << "\n";

    IdPtr id;
    Hello h{};
    {
        Event ev(ch.get(), 3600);
        ev.expect(RDMA_CM_EVENT_CONNECT_REQUEST);
        id.reset(ev.get().id);
        h = check_hello(from_private<Hello>(ev.get()));
    }
    Server srv(h, id.get(), o.busy_poll);
    const Welcome w = srv.welcome();
    rdma_conn_param cp = conn_param(&w, sizeof(w), h.depth);
    if (rdma_accept(id.get(), &cp) != 0) {
        throw Error(errstr("rdma_accept"));
    }
    Event(ch.get(), o.timeout).expect(RDMA_CM_EVENT_ESTABLISHED);
    srv.watch(ch.get());
    const int rc = srv.run(o.timeout);
    Event(ch.get(), o.timeout).expect(RDMA_CM_EVENT_DISCONNECTED);
    return rc;
}

// --- client --------------------------------------------------------------

struct Pending {
    uint64_t wr_id;
    ibv_wc_opcode opcode;
    uint64_t seq;
    size_t off;     // local buffer (a READ's destination)
    uint32_t size;  // a READ's length
    uint32_t read_off;
};

class Client {
  public:
    Client(const Options& o, rdma_cm_id* id)
        : o_(o),
          slot_(buf_size_for(o.max_size)),
          ring_(2 * o.depth + 2),  // send-queue entries, one local buffer each
          sched_(o.seed, o.max_size, read_len_for(o.max_size), o.only,
                 o.test == Test::ping ? std::optional{o.size} : std::nullopt),
          c_(id, ring_, o.depth + 1, size_t{slot_} * (ring_ + o.depth + 1), o.busy_poll) {
        for (uint32_t i = 0; i <= o.depth; ++i) {
            c_.post_recv(i, recv_off(i), slot_);
        }
    }

    void set_welcome(const Welcome& w) { w_ = w; }
    void watch(rdma_event_channel* ch) { c_.watch(ch); }

    int run() {
        const double end = o_.duration > 0 ? now_s() + o_.duration : 0;
        const uint64_t limit = o_.count != 0 ? o_.count : ~uint64_t{0};
        const double t0 = now_s();
        while (seq_ < limit && (end == 0 || now_s() < end) && g_stop == 0) {
            const Step st = sched_.at(seq_);
            const uint32_t wrs = st.op == Op::write ? 2 : 1;
            const bool visible = st.op != Op::read;
            // A visible message uses the server's slot seq % depth (and a
            // receive buffer): wait until the oldest unacknowledged one is
            // less than depth behind.
            const bool slot_busy =
                visible && !unacked_.empty() && seq_ - unacked_.front().first >= o_.depth;
            if (pending_.size() + wrs > ring_ || slot_busy) {
                progress();
                continue;
            }
            post(st);
            ++seq_;
        }
        while (!pending_.empty() || !unacked_.empty()) {
            progress();
        }
        // FIN: how many server-visible messages there were; the answer is
        // the server's own count.
        const uint64_t visible_end = sched_.server_visible(seq_) ? seq_ : sched_.next_visible(seq_);
        Ctl fin{kMagic, Kind::fin, visible_end, 0, 0, 0, 0, 0, 0};
        const size_t off = local_off(wr_);
        std::memcpy(c_.at(off, sizeof(fin)).data(), &fin, sizeof(fin));
        c_.post_send(wr_, IBV_WR_SEND, off, sizeof(fin));
        pending_.push_back({wr_++, IBV_WC_SEND, ~uint64_t{0}, off, 0, 0});
        while (!pending_.empty() || !result_) {
            progress();
        }
        const double secs = now_s() - t0;
        return report(secs);
    }

  private:
    [[nodiscard]] size_t local_off(uint64_t wr) const { return (wr % ring_) * slot_; }
    [[nodiscard]] size_t recv_off(uint64_t i) const { return (ring_ + i) * slot_; }

    void post(const Step& st) {
        // Before posting: ibv_post_send may carry the packet through the
        // whole path (the requester runs in the system call) before it returns.
        const uint64_t t_post = mono_ns();
        const size_t off = local_off(wr_);
        const auto seq32 = static_cast<uint32_t>(seq_);
        switch (st.op) {
            case Op::send:
                fill(c_.at(off, st.size), seq_);
                c_.post_send(wr_, IBV_WR_SEND_WITH_IMM, off, st.size, seq32);
                pending_.push_back({wr_++, IBV_WC_SEND, seq_, off, 0, 0});
                break;
            case Op::write_imm:
                fill(c_.at(off, st.size), seq_);
                c_.post_send(wr_, IBV_WR_RDMA_WRITE_WITH_IMM, off, st.size, seq32, slot_addr(),
                             w_.rkey);
                pending_.push_back({wr_++, IBV_WC_RDMA_WRITE, seq_, off, 0, 0});
                break;
            case Op::write: {
                fill(c_.at(off, st.size), seq_);
                c_.post_send(wr_, IBV_WR_RDMA_WRITE, off, st.size, std::nullopt, slot_addr(),
                             w_.rkey);
                pending_.push_back({wr_++, IBV_WC_RDMA_WRITE, seq_, off, 0, 0});
                const size_t coff = local_off(wr_);
                const Ctl n{kMagic, Kind::notify, seq_, 0, 0, 0, 0, 0, 0};
                std::memcpy(c_.at(coff, sizeof(n)).data(), &n, sizeof(n));
                c_.post_send(wr_, IBV_WR_SEND, coff, sizeof(n));
                pending_.push_back({wr_++, IBV_WC_SEND, seq_, coff, 0, 0});
                break;
            }
            case Op::read:
                std::memset(c_.at(off, st.size).data(), 0, st.size);
                c_.post_send(wr_, IBV_WR_RDMA_READ, off, st.size, std::nullopt,
                             w_.read_addr + st.offset, w_.rkey);
                pending_.push_back({wr_++, IBV_WC_RDMA_READ, seq_, off, st.size, st.offset});
                break;
        }
        ++by_op_.at(static_cast<size_t>(st.op));
        if (st.op != Op::read) {
            unacked_.emplace_back(seq_, t_post);
        }
        bytes_ += st.size;
    }

    [[nodiscard]] uint64_t slot_addr() const {
        return w_.slots_addr + (seq_ % o_.depth) * uint64_t{buf_size_for(o_.max_size)};
    }

    void progress() {
        sends_.clear();
        recvs_.clear();
        c_.wait(sends_, recvs_, o_.timeout);
        for (const auto& wc : sends_) {
            on_send(wc);
        }
        for (const auto& wc : recvs_) {
            on_recv(wc);
        }
    }

    void on_send(const ibv_wc& wc) {
        if (pending_.empty()) {
            throw Error("a completion for nothing posted (wr_id " + std::to_string(wc.wr_id) + ")");
        }
        const Pending p = pending_.front();
        pending_.pop_front();
        if (wc.status != IBV_WC_SUCCESS) {
            throw Error("message " + std::to_string(p.seq) + " failed: " + wc_text(wc));
        }
        if (wc.wr_id != p.wr_id || wc.opcode != p.opcode) {
            ++mine_.bad;
            std::cerr << "rxecc-verbs: completion out of order: wr_id " << wc.wr_id << " opcode "
                      << wc.opcode << ", expected wr_id " << p.wr_id << " opcode " << p.opcode
                      << "\n";
            return;
        }
        ++completions_;
        if (p.opcode == IBV_WC_RDMA_READ) {
            if (wc.byte_len != p.size) {
                ++mine_.bad;
            } else if (auto at = first_mismatch(c_.at(p.off, p.size), kReadStream, p.read_off)) {
                ++mine_.corrupt;
                std::cerr << "rxecc-verbs: READ " << p.seq << " (" << p.size << " B at "
                          << p.read_off << ") differs at byte " << *at << "\n";
            } else {
                ++mine_.msgs;
                mine_.bytes += p.size;
            }
        }
    }

    void on_recv(const ibv_wc& wc) {
        if (wc.status != IBV_WC_SUCCESS) {
            throw Error("receive failed: " + wc_text(wc));
        }
        const uint64_t i = wc.wr_id;
        auto rbuf = c_.at(recv_off(i), slot_);
        if ((wc.wc_flags & IBV_WC_WITH_IMM) == 0) {
            Ctl r{};
            if (wc.byte_len != sizeof(r)) {
                throw Error("a control message of " + std::to_string(wc.byte_len) + " bytes");
            }
            std::memcpy(&r, rbuf.data(), sizeof(r));
            if (r.magic != kMagic || r.kind != Kind::result) {
                throw Error("an unexpected control message from the server");
            }
            result_ = Counts{r.msgs, r.bytes, r.corrupt, r.lost, r.dup, r.bad};
        } else {
            on_ack(wc, rbuf);
        }
        c_.post_recv(i, recv_off(i), slot_);
    }

    // The server's acknowledgement of the oldest unacknowledged message (for
    // ping, with the message's data).
    void on_ack(const ibv_wc& wc, std::span<const std::byte> rbuf) {
        const uint64_t seq = widen(unacked_.empty() ? seq_ : unacked_.front().first, imm_of(wc));
        if (unacked_.empty() || seq != unacked_.front().first) {
            // An acknowledgement out of order, twice, or for nothing.
            ++mine_.bad;
            std::cerr << "rxecc-verbs: acknowledgement for " << seq << ", expected "
                      << (unacked_.empty() ? std::string("none")
                                           : std::to_string(unacked_.front().first))
                      << "\n";
            return;
        }
        const uint64_t t = mono_ns();
        const uint64_t posted = unacked_.front().second;
        if (o_.test == Test::ping) {
            const uint32_t size = sched_.at(seq).size;
            if (wc.byte_len != size || first_mismatch(rbuf.first(size), seq)) {
                ++mine_.corrupt;
            } else {
                ++mine_.msgs;
                mine_.bytes += size;
            }
            if (!o_.samples.empty()) {
                samples_.emplace_back(posted, t - posted);
            }
            rtts_.push_back(t - posted);
        }
        unacked_.pop_front();
        ++acked_;
    }

    int report(double secs) {
        nlohmann::json j = {{"role", "client"},
                            {"test", o_.test == Test::ping ? "ping" : "verify"},
                            {"seed", o_.seed},
                            {"seconds", secs},
                            {"messages_sent", seq_},
                            {"bytes_sent", bytes_},
                            {"completions", completions_},
                            {"acknowledged", acked_}};
        for (Op op : {Op::send, Op::write, Op::write_imm, Op::read}) {
            j["by_op"][std::string(op_name(op))] = by_op_.at(static_cast<size_t>(op));
        }
        j["client_checked"] = to_json(mine_);
        j["server_checked"] = to_json(*result_);
        // Every message was checked by one side: READs by the client, the
        // rest by the server (and, for ping, the echo by the client too).
        const uint64_t reads = by_op_.at(static_cast<size_t>(Op::read));
        const bool all = result_->msgs == seq_ - reads &&
                         (o_.test == Test::ping ? mine_.msgs == seq_ : mine_.msgs == reads);
        j["all_checked"] = all;
        if (!rtts_.empty()) {
            std::vector<uint64_t> v = rtts_;
            std::sort(v.begin(), v.end());
            auto pct = [&](double q) {
                const auto k =
                    static_cast<size_t>(std::lround(q * static_cast<double>(v.size() - 1)));
                return static_cast<double>(v[k]) / 1000.0;
            };
            j["rtt_us"] = {{"p50", pct(0.5)},
                           {"p99", pct(0.99)},
                           {"p99.9", pct(0.999)},
                           {"max", static_cast<double>(v.back()) / 1000.0}};
        }
        const bool ok = all && mine_.clean() && result_->clean();
        j["ok"] = ok;
        if (!o_.samples.empty()) {
            std::ofstream f(o_.samples);
            for (const auto& [t, rtt] : samples_) {
                f << t << ' ' << rtt << '\n';
            }
            if (!f) {
                throw Error("cannot write " + o_.samples);
            }
        }
        std::cout << j.dump() << "\n";
        return ok ? 0 : 1;
    }

    const Options& o_;
    Welcome w_{};
    uint32_t slot_;
    uint32_t ring_;
    Schedule sched_;
    Conn c_;
    uint64_t seq_ = 0, wr_ = 0, bytes_ = 0, completions_ = 0, acked_ = 0;
    std::array<uint64_t, 4> by_op_{};
    std::deque<Pending> pending_;
    std::deque<std::pair<uint64_t, uint64_t>> unacked_;  // (seq, posted at)
    Counts mine_;
    std::optional<Counts> result_;
    std::vector<ibv_wc> sends_, recvs_;
    std::vector<uint64_t> rtts_;
    std::vector<std::pair<uint64_t, uint64_t>> samples_;
};

int run_client(const Options& o) {
    auto [ch, id] = open_cm();
    sockaddr_storage dst = resolve(o.addr, o.port);
    if (rdma_resolve_addr(id.get(), nullptr, sa(dst), 2000) != 0) {
        throw Error(errstr("rdma_resolve_addr " + o.addr));
    }
    Event(ch.get(), o.timeout).expect(RDMA_CM_EVENT_ADDR_RESOLVED);
    if (o.tos) {
        uint8_t tos = *o.tos;
        if (rdma_set_option(id.get(), RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof(tos)) != 0) {
            throw Error(errstr("setting the TOS"));
        }
    }
    if (rdma_resolve_route(id.get(), 2000) != 0) {
        throw Error(errstr("rdma_resolve_route"));
    }
    Event(ch.get(), o.timeout).expect(RDMA_CM_EVENT_ROUTE_RESOLVED);
    if (o.ack_timeout) {
        uint8_t t = *o.ack_timeout;
        if (rdma_set_option(id.get(), RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &t, sizeof(t)) !=
            0) {
            throw Error(errstr("setting the ACK timeout"));
        }
    }
    const Hello h{kMagic,
                  kVersion,
                  static_cast<uint8_t>(o.test),
                  o.only ? static_cast<uint8_t>(*o.only) : uint8_t{0xff},
                  0,
                  o.depth,
                  o.max_size,
                  o.test == Test::ping ? o.size : 0,
                  o.seed};
    // The QP exists before rdma_connect; the server's answer (its buffer's
    // address and key) arrives with ESTABLISHED.
    Client cl(o, id.get());
    rdma_conn_param cp = conn_param(&h, sizeof(h), o.depth);
    if (rdma_connect(id.get(), &cp) != 0) {
        throw Error(errstr("rdma_connect"));
    }
    {
        Event ev(ch.get(), o.timeout);
        ev.expect(RDMA_CM_EVENT_ESTABLISHED);
        cl.set_welcome(from_private<Welcome>(ev.get()));
    }
    cl.watch(ch.get());
    const int rc = cl.run();
    rdma_disconnect(id.get());
    Event(ch.get(), o.timeout).expect(RDMA_CM_EVENT_DISCONNECTED);
    return rc;
}

}  // namespace
}  // namespace rxecc::verbs

int main(int argc, char** argv) {
    using namespace rxecc::verbs;
    try {
        const std::vector<std::string> args(argv + 1, argv + argc);
        const Options o = parse_options(args);
        struct sigaction sa {};
        sa.sa_handler = on_stop_signal;  // NOLINT(cppcoreguidelines-pro-type-union-access)
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
