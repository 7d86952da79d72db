#include "client.hpp"

#include <netinet/in.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <csignal>
#include <cstring>
#include <deque>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "connection.hpp"
#include "pattern.hpp"
#include "protocol.hpp"
#include "stats.hpp"

namespace rxecc::verbs {

namespace {

// NOLINTNEXTLINE(*-avoid-non-const-global-variables): the signal handler's flag
volatile std::sig_atomic_t g_stop = 0;

}  // namespace

extern "C" void on_stop_signal(int /*sig*/) { g_stop = 1; }

namespace {

struct Pending {
    uint64_t wr_id;
    ibv_wc_opcode opcode;
    uint64_t seq;
    size_t off;     // local buffer (a READ's destination)
    uint32_t size;  // a READ's length
    uint32_t read_off;
    uint64_t posted;  // mono_ns() at the post (a READ's round trip)
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
    void set_path(const QpPath& p) { path_ = p; }
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
        const size_t off = local_off(wr_);
        put_ctl(off, {kMagic, Kind::fin, visible_end, 0, 0, 0, 0, 0, 0});
        c_.post_send(wr_, IBV_WR_SEND, off, kCtlSize);
        pending_.push_back({wr_++, IBV_WC_SEND, ~uint64_t{0}, off, 0, 0, 0});
        while (!pending_.empty() || !result_) {
            progress();
        }
        const double secs = now_s() - t0;
        return report(secs);
    }

  private:
    [[nodiscard]] size_t local_off(uint64_t wr) const { return (wr % ring_) * slot_; }
    [[nodiscard]] size_t recv_off(uint64_t i) const { return (ring_ + i) * slot_; }

    // A control message into the local buffer at `off`.
    void put_ctl(size_t off, const Ctl& ctl) {
        const auto b = encode(ctl);
        std::ranges::copy(b, c_.at(off, b.size()).begin());
    }

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
                pending_.push_back({wr_++, IBV_WC_SEND, seq_, off, 0, 0, t_post});
                break;
            case Op::write_imm:
                fill(c_.at(off, st.size), seq_);
                c_.post_send(wr_, IBV_WR_RDMA_WRITE_WITH_IMM, off, st.size, seq32, slot_addr(),
                             w_.rkey);
                pending_.push_back({wr_++, IBV_WC_RDMA_WRITE, seq_, off, 0, 0, t_post});
                break;
            case Op::write: {
                fill(c_.at(off, st.size), seq_);
                c_.post_send(wr_, IBV_WR_RDMA_WRITE, off, st.size, std::nullopt, slot_addr(),
                             w_.rkey);
                pending_.push_back({wr_++, IBV_WC_RDMA_WRITE, seq_, off, 0, 0, t_post});
                const size_t coff = local_off(wr_);
                put_ctl(coff, {kMagic, Kind::notify, seq_, 0, 0, 0, 0, 0, 0});
                c_.post_send(wr_, IBV_WR_SEND, coff, kCtlSize);
                pending_.push_back({wr_++, IBV_WC_SEND, seq_, coff, 0, 0, t_post});
                break;
            }
            case Op::read:
                std::memset(c_.at(off, st.size).data(), 0, st.size);
                c_.post_send(wr_, IBV_WR_RDMA_READ, off, st.size, std::nullopt,
                             w_.read_addr + st.offset, w_.rkey);
                pending_.push_back(
                    {wr_++, IBV_WC_RDMA_READ, seq_, off, st.size, st.offset, t_post});
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
            // a READ's round trip: from the post to its completion
            rtts_.push_back(mono_ns() - p.posted);
        }
    }

    void on_recv(const ibv_wc& wc) {
        if (wc.status != IBV_WC_SUCCESS) {
            throw Error("receive failed: " + wc_text(wc));
        }
        const uint64_t i = wc.wr_id;
        auto rbuf = c_.at(recv_off(i), slot_);
        if ((wc.wc_flags & IBV_WC_WITH_IMM) == 0) {
            if (wc.byte_len != kCtlSize) {
                throw Error("a control message of " + std::to_string(wc.byte_len) + " bytes");
            }
            const Ctl r = decode_ctl(rbuf);
            if (r.magic != kMagic || r.kind != Kind::result) {
                throw Error("an unexpected control message from the server");
            }
            result_ = counts_of(r);
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
        }
        // From the post to the server's acknowledgement, which comes after
        // the transport's ACK of a message sent alone (--depth 1)
        rtts_.push_back(t - posted);
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
        j["qp"] = to_json(path_);
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
            // nearest rank, as the lab's reports compute it
            auto pct = [&](unsigned per_mille) {
                return static_cast<double>(stats::nearest_rank(v, per_mille)) / 1000.0;
            };
            j["rtt_us"] = {{"p50", pct(500)},
                           {"p99", pct(990)},
                           {"p99.9", pct(999)},
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
    QpPath path_{};
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

}  // namespace

int run_client(const Options& o) {
    auto [ch, id] = open_cm();
    sockaddr_storage dst = resolve(o.addr, o.port);
    // rdma_cm takes the flow label from the IPv6 source address.
    sockaddr_storage src{};
    if (o.flow_label) {
        if (dst.ss_family != AF_INET6) {
            throw Error("--flow-label: " + o.addr + " is not an IPv6 address");
        }
        // NOLINTNEXTLINE(*-reinterpret-cast): sockaddr casts
        auto* src6 = reinterpret_cast<sockaddr_in6*>(&src);
        src6->sin6_family = AF_INET6;
        src6->sin6_addr = in6addr_any;
        src6->sin6_flowinfo = htonl(*o.flow_label);
    }
    if (rdma_resolve_addr(id.get(), o.flow_label ? sa(src) : nullptr, sa(dst), 2000) != 0) {
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
    const auto h = encode(hello_for(o));
    // The QP exists before rdma_connect; the server's answer (its buffer's
    // address and key) arrives with ESTABLISHED.
    Client cl(o, id.get());
    rdma_conn_param cp = conn_param(h, o.depth);
    if (rdma_connect(id.get(), &cp) != 0) {
        throw Error(errstr("rdma_connect"));
    }
    {
        Event ev(ch.get(), o.timeout);
        ev.expect(RDMA_CM_EVENT_ESTABLISHED);
        cl.set_welcome(decode_welcome(private_data(ev.get(), kWelcomeSize)));
    }
    cl.set_path(qp_path(id.get()));
    cl.watch(ch.get());
    const int rc = cl.run();
    rdma_disconnect(id.get());
    Event(ch.get(), o.timeout).expect(RDMA_CM_EVENT_DISCONNECTED);
    return rc;
}

}  // namespace rxecc::verbs
