#include "connection.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <ctime>

namespace rxecc::verbs {

std::string errstr(const std::string& what, int err) { return what + ": " + std::strerror(err); }

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

uint64_t mono_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

// --- Event ---------------------------------------------------------------

Event::Event(rdma_event_channel* ch, double timeout) {
    pollfd p{ch->fd, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(timeout * 1000));
    if (r == 0) {
        throw Error("no connection event within " + std::to_string(timeout) + " s");
    }
    if (r < 0 || rdma_get_cm_event(ch, &ev_) != 0) {
        throw Error(errstr("rdma_get_cm_event"));
    }
}

void Event::expect(rdma_cm_event_type t) const {
    if (ev_->event != t) {
        throw Error(std::string("expected ") + rdma_event_str(t) + ", got " +
                    rdma_event_str(ev_->event) + " (status " + std::to_string(ev_->status) + ")");
    }
}

// --- Conn ----------------------------------------------------------------

Conn::Conn(rdma_cm_id* id, uint32_t send_wr, uint32_t recv_wr, size_t buf_len, bool busy)
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

Conn::~Conn() {
    if (qp_) {
        rdma_destroy_qp(id_);
    }
    if (scq_ && rcq_) {
        ibv_ack_cq_events(scq_.get(), events_s_);
        ibv_ack_cq_events(rcq_.get(), events_r_);
    }
}

void Conn::post_recv(uint64_t wr_id, size_t off, uint32_t len) {
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

void Conn::post_send(uint64_t wr_id, ibv_wr_opcode opcode, size_t off, uint32_t len,
                     std::optional<uint32_t> imm, uint64_t raddr, uint32_t rkey) {
    ibv_sge sge{addr(off), len, lkey()};
    ibv_send_wr wr{};
    ibv_send_wr* bad = nullptr;
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = len != 0 ? 1 : 0;
    wr.opcode = opcode;
    if (imm) {
        wr.imm_data = htonl(*imm);  // NOLINT(*-union-access): verbs' C unions
    }
    wr.wr.rdma.remote_addr = raddr;  // NOLINT(*-union-access): verbs' C unions
    wr.wr.rdma.rkey = rkey;          // NOLINT(*-union-access): verbs' C unions
    if (const int e = ibv_post_send(id_->qp, &wr, &bad); e != 0) {
        throw Error(errstr("ibv_post_send", e));
    }
}

void Conn::wait(std::vector<ibv_wc>& sends, std::vector<ibv_wc>& recvs, double timeout) {
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

// Sleep until the completion channel or the connection channel has
// something (at most 100 ms); re-arm the CQs after a completion event.
void Conn::sleep_for_event() {
    std::array<pollfd, 2> p{{{comp_->fd, POLLIN, 0}, {cm_ != nullptr ? cm_->fd : -1, POLLIN, 0}}};
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
void Conn::check_cm(int timeout_ms) {
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

void Conn::arm() {
    if (!busy_ &&
        (ibv_req_notify_cq(scq_.get(), 0) != 0 || ibv_req_notify_cq(rcq_.get(), 0) != 0)) {
        throw Error(errstr("ibv_req_notify_cq"));
    }
}

bool Conn::drain(std::vector<ibv_wc>& sends, std::vector<ibv_wc>& recvs) {
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

// --- helpers -------------------------------------------------------------

std::string wc_text(const ibv_wc& wc) {
    return std::string(ibv_wc_status_str(wc.status)) + " (wr_id " + std::to_string(wc.wr_id) +
           ", vendor_err " + std::to_string(wc.vendor_err) + ")";
}

uint32_t imm_of(const ibv_wc& wc) {
    return ntohl(wc.imm_data);  // NOLINT(*-union-access): verbs' C unions
}

QpPath qp_path(rdma_cm_id* id) {
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    if (const int e = ibv_query_qp(id->qp, &attr, IBV_QP_AV | IBV_QP_DEST_QPN, &init); e != 0) {
        throw Error(errstr("ibv_query_qp", e));
    }
    return {id->qp->qp_num, attr.dest_qp_num, attr.ah_attr.grh.flow_label,
            ntohs(rdma_get_src_port(id)), ntohs(rdma_get_dst_port(id))};
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
    return reinterpret_cast<sockaddr*>(&ss);  // NOLINT(*-reinterpret-cast): sockaddr casts
}

std::span<const std::byte> private_data(const rdma_cm_event& ev, size_t need) {
    const rdma_conn_param& conn = ev.param.conn;  // NOLINT(*-union-access): verbs' C unions
    if (conn.private_data == nullptr || conn.private_data_len < need) {
        throw Error("the peer's connection data is missing or short");
    }
    return {static_cast<const std::byte*>(conn.private_data), conn.private_data_len};
}

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

rdma_conn_param conn_param(std::span<const std::byte> data, uint32_t depth) {
    rdma_conn_param cp{};
    cp.private_data = data.data();
    cp.private_data_len = static_cast<uint8_t>(data.size());
    cp.responder_resources = static_cast<uint8_t>(std::min<uint32_t>(depth, 16));
    cp.initiator_depth = cp.responder_resources;
    cp.retry_count = 7;
    cp.rnr_retry_count = 7;
    return cp;
}

}  // namespace rxecc::verbs
