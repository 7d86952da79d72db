#include "server.hpp"

#include <algorithm>
#include <cstring>
#include <deque>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "connection.hpp"

namespace rxecc::verbs {

ServerLayout server_layout(const Hello& h) {
    return {h.depth, buf_size_for(h.max_size), read_len_for(h.max_size)};
}

Hello check_hello(const Hello& h) {
    if (h.magic != kMagic || h.version != kVersion) {
        throw Error("the client is not rxecc-verbs version " + std::to_string(kVersion));
    }
    if (h.depth < 1 || h.depth > 256 || h.max_size < 16 || h.max_size > (1U << 20U) ||
        h.size > h.max_size || (h.test != 1 && h.test != 2) || (h.only > 3 && h.only != kAllOps)) {
        throw Error("the client's parameters are out of range");
    }
    return h;
}

Arrivals::Arrivals(const Schedule& sched)
    : sched_(&sched), expected_(sched.server_visible(0) ? 0 : sched.next_visible(0)) {}

void Arrivals::skip_to(uint64_t seq) {
    for (uint64_t s = expected_; s < seq; s = sched_->next_visible(s)) {
        ++lost_;
    }
}

bool Arrivals::arrive(uint64_t seq) {
    if (seq < expected_) {
        ++dup_;
        return false;
    }
    skip_to(seq);
    expected_ = sched_->next_visible(seq);
    return true;
}

void Arrivals::finish(uint64_t end) { skip_to(end); }

namespace {

// The server's side of one test: check each message the client sends and
// acknowledge it; answer FIN with its counts.
class Server {
  public:
    Server(const Hello& h, rdma_cm_id* id, bool busy)
        : lay_(server_layout(h)),
          ping_(h.test == static_cast<uint8_t>(Test::ping)),
          sched_(h.seed, h.max_size, lay_.read_len,
                 h.only == kAllOps ? std::nullopt : std::optional{static_cast<Op>(h.only)},
                 ping_ ? std::optional{h.size} : std::nullopt),
          c_(id, lay_.sq(), h.depth, lay_.total(), busy),
          arr_(sched_) {
        fill(c_.at(lay_.read_off(), lay_.read_len), kReadStream);
        for (uint32_t i = 0; i < h.depth; ++i) {
            c_.post_recv(i, lay_.recv_off(i), lay_.slot);
        }
    }

    void watch(rdma_event_channel* ch) { c_.watch(ch); }
    void set_path(const QpPath& p) { path_ = p; }

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
        const Counts n = counts();
        nlohmann::json j = {{"role", "server"}, {"test", ping_ ? "ping" : "verify"}};
        j["qp"] = to_json(path_);
        j.update(to_json(n));
        j["ok"] = n.clean();
        std::cout << j.dump() << "\n";
        return n.clean() ? 0 : 1;
    }

  private:
    // What this end checked, with the order's account.
    [[nodiscard]] Counts counts() const {
        Counts n = n_;
        n.lost = arr_.lost();
        n.dup = arr_.duplicated();
        return n;
    }

    void on_recv(const ibv_wc& wc) {
        if (wc.status != IBV_WC_SUCCESS) {
            throw Error("receive failed: " + wc_text(wc));
        }
        const uint64_t slot = wc.wr_id;
        auto rbuf = c_.at(lay_.recv_off(slot), lay_.slot);
        const bool is_ctl = (wc.wc_flags & IBV_WC_WITH_IMM) == 0;
        uint64_t seq = 0;
        if (is_ctl) {
            if (wc.byte_len != kCtlSize) {
                throw Error("a control message of " + std::to_string(wc.byte_len) + " bytes");
            }
            const Ctl ctl = decode_ctl(rbuf);
            if (ctl.magic != kMagic || (ctl.kind != Kind::fin && ctl.kind != Kind::notify)) {
                throw Error("an unknown control message");
            }
            if (ctl.kind == Kind::fin) {
                // Messages the client sent that never arrived.
                arr_.finish(ctl.value);
                const auto r = encode(result_ctl(counts()));
                std::ranges::copy(r, c_.at(lay_.send_off(acks_), r.size()).begin());
                c_.post_send(acks_, IBV_WR_SEND, lay_.send_off(acks_), r.size());
                ++acks_;
                fin_ = true;
                c_.watch(nullptr);  // the client disconnects once it has the result
                return;
            }
            seq = ctl.value;
        } else {
            seq = widen(arr_.expected(), imm_of(wc));
        }
        if (const uint64_t expected = arr_.expected(); !arr_.arrive(seq)) {
            std::cerr << "rxecc-verbs: message " << seq << " again (expected " << expected << ")\n";
            c_.post_recv(slot, lay_.recv_off(slot), lay_.slot);
            return;
        }
        const std::span<const std::byte> data = check(seq, wc, is_ctl, rbuf);
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
    QpPath path_{};
    bool ping_;
    Schedule sched_;
    Conn c_;
    Counts n_;  // all but lost and dup (arr_)
    Arrivals arr_;
    uint64_t acks_ = 0, acks_done_ = 0;
    bool fin_ = false;
    std::deque<ibv_wc> rq_;
};

}  // namespace

int run_server(const Options& o) {
    auto [ch, listen] = open_cm();
    sockaddr_storage ss = resolve(o.addr, o.port);
    if (rdma_bind_addr(listen.get(), sa(ss)) != 0 || rdma_listen(listen.get(), 1) != 0) {
        throw Error(errstr("listening on port " + std::to_string(o.port)));
    }
    std::cerr << "rxecc-verbs: listening on port " << o.port << "\n";

    // A client must come within --timeout, like every later event.
    IdPtr id;
    Hello h{};
    {
        Event ev(ch.get(), o.timeout);
        ev.expect(RDMA_CM_EVENT_CONNECT_REQUEST);
        id.reset(ev.get().id);
        h = check_hello(decode_hello(private_data(ev.get(), kHelloSize)));
    }
    Server srv(h, id.get(), o.busy_poll);
    const auto w = encode(srv.welcome());
    rdma_conn_param cp = conn_param(w, h.depth);
    if (rdma_accept(id.get(), &cp) != 0) {
        throw Error(errstr("rdma_accept"));
    }
    Event(ch.get(), o.timeout).expect(RDMA_CM_EVENT_ESTABLISHED);
    srv.set_path(qp_path(id.get()));
    srv.watch(ch.get());
    const int rc = srv.run(o.timeout);
    Event(ch.get(), o.timeout).expect(RDMA_CM_EVENT_DISCONNECTED);
    return rc;
}

}  // namespace rxecc::verbs
