#include "mesh.hpp"

#include <poll.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <thread>
#include <utility>

namespace rxecc::coll {
namespace {

constexpr uint32_t kMagic = 0x72636f6c;  // "rcol"
constexpr unsigned kRecvDepth = 256;     // receives posted per QP
constexpr unsigned kSendDepth = 256;

using verbs::errstr;
using verbs::now_s;
using verbs::resolve;
using verbs::sa;

// The peer index an id stands for, kept in its context (index + 1).
void set_peer(rdma_cm_id* id, unsigned peer) {
    // NOLINTNEXTLINE(*-reinterpret-cast,*-no-int-to-ptr): a peer index as void* context
    id->context = reinterpret_cast<void*>(uintptr_t{peer} + 1);
}
unsigned peer_of(const rdma_cm_id* id) {
    // NOLINTNEXTLINE(*-reinterpret-cast): rdma_cm's void* context
    return static_cast<unsigned>(reinterpret_cast<uintptr_t>(id->context) - 1);
}

}  // namespace

Mesh::Mesh(unsigned rank, const std::vector<std::string>& hosts, uint16_t port, size_t bytes,
           double timeout, uint64_t config, QpOptions qp)
    : rank_(rank),
      hosts_(hosts),
      port_(port),
      timeout_(timeout),
      qp_(qp),
      config_(config),
      len_(bytes),
      ch_(rdma_create_event_channel()),
      buf_(std::make_unique<std::byte[]>(bytes)),
      peers_(hosts.size()) {
    if (!ch_) throw Error(errstr("rdma_create_event_channel"));
    rdma_cm_id* raw = nullptr;
    if (rdma_create_id(ch_.get(), &raw, nullptr, RDMA_PS_TCP) != 0) {
        throw Error(errstr("rdma_create_id"));
    }
    listen_.reset(raw);
    sockaddr_storage me = resolve(hosts_.at(rank_), port_);
    if (rdma_bind_addr(listen_.get(), sa(me)) != 0 ||
        rdma_listen(listen_.get(), static_cast<int>(hosts_.size())) != 0) {
        throw Error(errstr("listening on " + hosts_[rank_] + " port " + std::to_string(port_)));
    }
    if (listen_->verbs == nullptr) {
        throw Error(hosts_[rank_] + " is not the address of an RDMA device");
    }
    pd_.reset(ibv_alloc_pd(listen_->verbs));
    const int cqe = static_cast<int>(kRecvDepth * hosts_.size() + kSendDepth);
    comp_.reset(ibv_create_comp_channel(listen_->verbs));
    if (!comp_) throw Error(errstr("ibv_create_comp_channel"));
    scq_.reset(ibv_create_cq(listen_->verbs, cqe, nullptr, comp_.get(), 0));
    rcq_.reset(ibv_create_cq(listen_->verbs, cqe, nullptr, comp_.get(), 0));
    if (!pd_ || !scq_ || !rcq_) throw Error(errstr("PD or CQ"));
    mr_.reset(
        ibv_reg_mr(pd_.get(), buf_.get(), len_, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
    if (!mr_) throw Error(errstr("ibv_reg_mr"));

    connect_all();
}

// Connect to the ranks below, one at a time (a storm of connection requests
// times out on a slow host), and accept the ranks above.
void Mesh::connect_all() {
    const auto n = static_cast<unsigned>(hosts_.size());
    if (rank_ > 0) connect_to(0);
    const double deadline = now_s() + timeout_;
    while (up_ < n - 1) {
        pollfd pfd{ch_->fd, POLLIN, 0};
        const double left = deadline - now_s();
        if (left <= 0 || ::poll(&pfd, 1, static_cast<int>(left * 1000) + 1) <= 0) {
            throw Error("not every rank connected within " + std::to_string(timeout_) + " s (" +
                        std::to_string(up_) + " of " + std::to_string(n - 1) + ")");
        }
        rdma_cm_event* ev = nullptr;
        if (rdma_get_cm_event(ch_.get(), &ev) != 0) throw Error(errstr("rdma_get_cm_event"));
        const rdma_cm_event_type type = ev->event;
        rdma_cm_id* id = ev->id;
        const int status = ev->status;
        std::optional<Hello> h;
        // NOLINTNEXTLINE(*-union-access): verbs' C unions
        const rdma_conn_param& conn = ev->param.conn;
        if (conn.private_data != nullptr && conn.private_data_len >= sizeof(Hello)) {
            h.emplace();
            std::memcpy(&*h, conn.private_data, sizeof(Hello));
        }
        rdma_ack_cm_event(ev);
        on_event(type, id, h, status);
    }
}

void Mesh::on_event(rdma_cm_event_type type, rdma_cm_id* id, const std::optional<Hello>& h,
                    int status) {
    switch (type) {
        case RDMA_CM_EVENT_ADDR_RESOLVED:
            if (rdma_resolve_route(id, 2000) != 0) throw Error(errstr("rdma_resolve_route"));
            break;
        case RDMA_CM_EVENT_ROUTE_RESOLVED: {
            setup_qp(id);
            rdma_conn_param cp = conn_param();
            if (rdma_connect(id, &cp) != 0) throw Error(errstr("rdma_connect"));
            break;
        }
        case RDMA_CM_EVENT_CONNECT_REQUEST:
            on_request(id, h);
            break;
        case RDMA_CM_EVENT_ESTABLISHED:
            on_established(id, h);
            break;
        case RDMA_CM_EVENT_DISCONNECTED:
        case RDMA_CM_EVENT_REJECTED:
        case RDMA_CM_EVENT_UNREACHABLE:
        case RDMA_CM_EVENT_ADDR_ERROR:
        case RDMA_CM_EVENT_ROUTE_ERROR:
        case RDMA_CM_EVENT_CONNECT_ERROR: {
            // A rank not listening yet, or an attempt that timed out: the
            // rank above tries again, with a new id.
            const unsigned j = peer_of(id);
            if (peers_.at(j).up) throw Error("rank " + std::to_string(j) + " left");
            drop(j);
            if (j < rank_) {
                std::this_thread::sleep_for(std::chrono::milliseconds(200));
                connect_to(j);
            }
            break;
        }
        case RDMA_CM_EVENT_TIMEWAIT_EXIT:
            break;
        default:
            throw Error(std::string("unexpected connection event ") + rdma_event_str(type) +
                        " (status " + std::to_string(status) + ")");
    }
}

rdma_conn_param Mesh::conn_param() {
    // NOLINTNEXTLINE(*-reinterpret-cast): verbs' integer addresses
    const auto addr = reinterpret_cast<uintptr_t>(buf_.get());
    mine_ = {kMagic, rank_, addr, mr_->rkey, 0, config_};
    rdma_conn_param cp{};
    cp.private_data = &mine_;
    cp.private_data_len = sizeof(mine_);
    cp.retry_count = 7;
    cp.rnr_retry_count = 7;
    return cp;
}

void Mesh::on_request(rdma_cm_id* id, const std::optional<Hello>& h) {
    const auto n = static_cast<unsigned>(hosts_.size());
    if (h && h->magic == kMagic && h->config != config_) {
        rdma_reject(id, nullptr, 0);
        rdma_destroy_id(id);
        throw Error("rank " + std::to_string(h->rank) + " runs with other options");
    }
    if (!h || h->magic != kMagic || h->rank <= rank_ || h->rank >= n || peers_[h->rank].up) {
        rdma_reject(id, nullptr, 0);
        rdma_destroy_id(id);
        return;
    }
    drop(h->rank);  // an earlier attempt of the same rank
    set_peer(id, h->rank);
    Peer& p = peers_[h->rank];
    p.id.reset(id);
    p.addr = h->addr;
    p.rkey = h->rkey;
    set_options(id, false);
    setup_qp(id);
    rdma_conn_param cp = conn_param();
    if (rdma_accept(id, &cp) != 0) throw Error(errstr("rdma_accept"));
}

void Mesh::on_established(rdma_cm_id* id, const std::optional<Hello>& h) {
    const unsigned j = peer_of(id);
    Peer& p = peers_.at(j);
    if (j < rank_) {
        if (!h || h->magic != kMagic || h->rank != j) {
            throw Error("rank " + std::to_string(j) + " answered with the wrong data");
        }
        if (h->config != config_) {
            throw Error("rank " + std::to_string(j) + " runs with other options");
        }
        p.addr = h->addr;
        p.rkey = h->rkey;
    }
    // Receives only now: the receives of an attempt that fails are flushed
    // into the shared CQ, which nothing reads before the data; until they are
    // posted, a peer's first write waits on RNR NAKs (retried for ever).
    post_recvs(id, kRecvDepth);
    p.up = true;
    ++up_;
    if (j + 1 < rank_) connect_to(j + 1);
}

Mesh::~Mesh() {
    for (auto& p : peers_) {
        if (p.id && p.up) rdma_disconnect(p.id.get());
    }
    for (auto& p : peers_) {
        if (p.id && p.id->qp != nullptr) rdma_destroy_qp(p.id.get());
        p.id.reset();
    }
}

void Mesh::drop(unsigned peer) {
    Peer& p = peers_.at(peer);
    if (p.id && p.id->qp != nullptr) rdma_destroy_qp(p.id.get());
    p.id.reset();
    p.up = false;
}

void Mesh::connect_to(unsigned peer) {
    rdma_cm_id* raw = nullptr;
    if (rdma_create_id(ch_.get(), &raw, nullptr, RDMA_PS_TCP) != 0) {
        throw Error(errstr("rdma_create_id"));
    }
    set_peer(raw, peer);
    peers_[peer].id.reset(raw);
    set_options(raw, true);
    sockaddr_storage src = resolve(hosts_[rank_], 0);
    sockaddr_storage dst = resolve(hosts_[peer], port_);
    if (rdma_resolve_addr(raw, sa(src), sa(dst), 2000) != 0) {
        throw Error(errstr("rdma_resolve_addr " + hosts_[peer]));
    }
}

void Mesh::setup_qp(rdma_cm_id* id) {
    ibv_qp_init_attr a{};
    a.send_cq = scq_.get();
    a.recv_cq = rcq_.get();
    a.qp_type = IBV_QPT_RC;
    a.cap.max_send_wr = kSendDepth;
    a.cap.max_recv_wr = kRecvDepth;
    a.cap.max_send_sge = 1;
    a.cap.max_recv_sge = 1;
    if (rdma_create_qp(id, pd_.get(), &a) != 0) throw Error(errstr("rdma_create_qp"));
}

void Mesh::post_recvs(rdma_cm_id* id, unsigned count) {
    for (unsigned i = 0; i < count; ++i) {
        ibv_recv_wr wr{};
        ibv_recv_wr* bad = nullptr;
        wr.wr_id = id->qp->qp_num;
        if (const int e = ibv_post_recv(id->qp, &wr, &bad); e != 0) {
            throw Error(errstr("ibv_post_recv", e));
        }
    }
}

unsigned Mesh::peer_of_qp(uint32_t qpn) const {
    for (unsigned j = 0; j < peers_.size(); ++j) {
        if (peers_[j].id && peers_[j].id->qp != nullptr && peers_[j].id->qp->qp_num == qpn) {
            return j;
        }
    }
    return static_cast<unsigned>(peers_.size());  // none: a QP dropped before
}

void Mesh::write(unsigned to, size_t off, size_t len, size_t remote_off, uint32_t imm) {
    if (off + len > len_ || remote_off + len > len_) throw Error("write beyond the buffer");
    const double deadline = now_s() + timeout_;
    for (poll_sends(); sends_ >= kSendDepth; poll_sends()) {
        if (now_s() > deadline) throw Error("no send slot free within the timeout");
        idle();
    }
    Peer& p = peers_.at(to);
    // NOLINTNEXTLINE(*-reinterpret-cast): verbs' integer addresses
    ibv_sge sge{reinterpret_cast<uintptr_t>(buf_.get() + off), static_cast<uint32_t>(len),
                mr_->lkey};
    ibv_send_wr wr{};
    ibv_send_wr* bad = nullptr;
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.send_flags = IBV_SEND_SIGNALED;
    // NOLINTNEXTLINE(*-union-access): verbs' C unions
    wr.imm_data = htonl(imm);
    // NOLINTNEXTLINE(*-union-access): verbs' C unions
    wr.wr.rdma.remote_addr = p.addr + remote_off;
    // NOLINTNEXTLINE(*-union-access): verbs' C unions
    wr.wr.rdma.rkey = p.rkey;
    if (const int e = ibv_post_send(p.id->qp, &wr, &bad); e != 0) {
        throw Error(errstr("ibv_post_send", e));
    }
    ++sends_;
}

void Mesh::poll_sends() {
    std::array<ibv_wc, 16> wc{};
    const int got = ibv_poll_cq(scq_.get(), static_cast<int>(wc.size()), wc.data());
    if (got < 0) throw Error("polling the send CQ failed");
    for (int i = 0; i < got; ++i) {
        const ibv_wc& w = wc.at(static_cast<size_t>(i));
        if (w.status != IBV_WC_SUCCESS) {
            throw Error(std::string("a write failed: ") + ibv_wc_status_str(w.status));
        }
        --sends_;
    }
}

void Mesh::poll_one_recv() {
    const double deadline = now_s() + timeout_;
    ibv_wc w{};
    for (;;) {
        const int got = ibv_poll_cq(rcq_.get(), 1, &w);
        if (got < 0) throw Error("polling the receive CQ failed");
        // The receives of a QP dropped during connection setup (rdma_cm
        // moves it to the error state) are flushed into the shared CQ.
        if (got == 1 && peer_of_qp(w.qp_num) < peers_.size()) break;
        if (got == 1) continue;
        if (sends_ > 0) poll_sends();
        if (now_s() > deadline) {
            throw Error("no data from a peer within " + std::to_string(timeout_) + " s");
        }
        idle();
    }
    if (w.status != IBV_WC_SUCCESS || w.opcode != IBV_WC_RECV_RDMA_WITH_IMM) {
        throw Error(std::string("a receive completion failed: ") + ibv_wc_status_str(w.status));
    }
    const unsigned j = peer_of_qp(w.qp_num);
    // NOLINTNEXTLINE(*-union-access): verbs' C unions
    peers_[j].inbox.push_back(ntohl(w.imm_data));
    post_recvs(peers_[j].id.get(), 1);
}

void Mesh::set_options(rdma_cm_id* id, bool active) const {
    if (qp_.tos && active) {
        uint8_t tos = *qp_.tos;
        if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof(tos)) != 0)
            throw Error(errstr("rdma_set_option TOS"));
    }
    if (qp_.ack_timeout) {
        uint8_t t = *qp_.ack_timeout;
        if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &t, sizeof(t)) != 0)
            throw Error(errstr("rdma_set_option ACK_TIMEOUT"));
    }
}

void Mesh::idle() {
    bool armed = false;
    for (auto [cq, flag] :
         {std::pair{scq_.get(), &scq_armed_}, std::pair{rcq_.get(), &rcq_armed_}}) {
        if (*flag) continue;
        if (const int e = ibv_req_notify_cq(cq, 0); e != 0)
            throw Error(errstr("ibv_req_notify_cq", e));
        *flag = armed = true;
    }
    if (armed) return;  // a completion may have come before the arming: poll first
    pollfd pfd{comp_->fd, POLLIN, 0};
    const int n = ::poll(&pfd, 1, 50);
    if (n < 0 && errno != EINTR) throw Error(errstr("poll"));
    if (n <= 0) return;
    ibv_cq* cq = nullptr;
    void* ctx = nullptr;
    if (ibv_get_cq_event(comp_.get(), &cq, &ctx) != 0) throw Error(errstr("ibv_get_cq_event"));
    ibv_ack_cq_events(cq, 1);
    (cq == scq_.get() ? scq_armed_ : rcq_armed_) = false;
}

uint32_t Mesh::recv_from(unsigned from) {
    Peer& p = peers_.at(from);
    while (p.inbox.empty()) poll_one_recv();
    const uint32_t imm = p.inbox.front();
    p.inbox.pop_front();
    return imm;
}

void Mesh::drain_sends() {
    const double deadline = now_s() + timeout_;
    while (sends_ > 0) {
        poll_sends();
        if (sends_ == 0) break;
        if (now_s() > deadline) throw Error("writes not completed within the timeout");
        idle();
    }
}

}  // namespace rxecc::coll
