#include "netlink.hpp"

#include <linux/genetlink.h>
#include <poll.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "errors.hpp"

// Netlink messages are byte buffers read through the kernel's header
// structs; libmnl's API is built on these casts.
// NOLINTBEGIN(*-reinterpret-cast): libmnl's API is built on these casts

namespace rxecc::tool::nl {
namespace {

constexpr size_t kTxSize = 8192;
constexpr size_t kRxSize = 65536;

[[noreturn]] void sys_error(const std::string& what) {
    throw Error(Exit::system, what + ": " + std::strerror(errno));
}

struct ExtAck {
    std::string msg;
    std::optional<uint32_t> offset;
};

// The extended ACK attributes of an error or done message, found after
// `skip` bytes of its payload.
ExtAck ext_ack(const nlmsghdr* nlh, size_t skip) {
    ExtAck ack;
    if ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) == 0) return ack;
    const auto* payload = static_cast<const uint8_t*>(mnl_nlmsg_get_payload(nlh));
    const auto* end = reinterpret_cast<const uint8_t*>(nlh) + nlh->nlmsg_len;
    const auto* a = reinterpret_cast<const nlattr*>(payload + MNL_ALIGN(skip));
    int len = static_cast<int>(end - reinterpret_cast<const uint8_t*>(a));
    for (; mnl_attr_ok(a, len); a = mnl_attr_next(a)) {
        len = static_cast<int>(end - reinterpret_cast<const uint8_t*>(mnl_attr_next(a)));
        const uint16_t type = mnl_attr_get_type(a);
        if (type == NLMSGERR_ATTR_MSG && mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
            ack.msg = mnl_attr_get_str(a);
        else if (type == NLMSGERR_ATTR_OFFS && mnl_attr_validate(a, MNL_TYPE_U32) == 0)
            ack.offset = mnl_attr_get_u32(a);
    }
    return ack;
}

void walk(const uint8_t* start, const uint8_t* end, const uint8_t* base, uint32_t offset,
          std::vector<uint16_t>& path) {
    const auto* a = reinterpret_cast<const nlattr*>(start);
    int len = static_cast<int>(end - start);
    for (; mnl_attr_ok(a, len); a = mnl_attr_next(a)) {
        const auto* p = reinterpret_cast<const uint8_t*>(a);
        len = static_cast<int>(end - reinterpret_cast<const uint8_t*>(mnl_attr_next(a)));
        const auto at = static_cast<uint32_t>(p - base);
        if (offset < at || offset >= at + a->nla_len) continue;
        path.push_back(mnl_attr_get_type(a));
        if (offset != at && (a->nla_type & NLA_F_NESTED) != 0)
            walk(p + MNL_ATTR_HDRLEN, p + a->nla_len, base, offset, path);
        return;
    }
}

}  // namespace

Message::Message(uint16_t family, uint8_t cmd, uint8_t version, uint16_t flags)
    : buf_(kTxSize), hdrlen_(sizeof(genlmsghdr)) {
    nlmsghdr* nlh = mnl_nlmsg_put_header(buf_.data());
    nlh->nlmsg_type = family;
    nlh->nlmsg_flags = static_cast<uint16_t>(NLM_F_REQUEST | flags);
    auto* g = static_cast<genlmsghdr*>(mnl_nlmsg_put_extra_header(nlh, sizeof(genlmsghdr)));
    g->cmd = cmd;
    g->version = version;
}

Message::Message(uint16_t type, uint16_t flags, const void* hdr, size_t hdrlen)
    : buf_(kTxSize), hdrlen_(hdrlen) {
    nlmsghdr* nlh = mnl_nlmsg_put_header(buf_.data());
    nlh->nlmsg_type = type;
    nlh->nlmsg_flags = static_cast<uint16_t>(NLM_F_REQUEST | flags);
    std::memcpy(mnl_nlmsg_put_extra_header(nlh, hdrlen), hdr, hdrlen);
}

nlmsghdr* Message::header() { return reinterpret_cast<nlmsghdr*>(buf_.data()); }

const nlmsghdr* Message::header() const { return reinterpret_cast<const nlmsghdr*>(buf_.data()); }

size_t Message::size() const { return header()->nlmsg_len; }

void Message::put_u8(uint16_t type, uint8_t v) {
    if (!mnl_attr_put_u8_check(header(), buf_.size(), type, v))
        throw Error(Exit::system, "netlink request too long");
}

void Message::put_u16(uint16_t type, uint16_t v) {
    if (!mnl_attr_put_u16_check(header(), buf_.size(), type, v))
        throw Error(Exit::system, "netlink request too long");
}

void Message::put_u64(uint16_t type, uint64_t v) {
    if (!mnl_attr_put_u64_check(header(), buf_.size(), type, v))
        throw Error(Exit::system, "netlink request too long");
}

void Message::put_u32(uint16_t type, uint32_t v) {
    if (!mnl_attr_put_u32_check(header(), buf_.size(), type, v))
        throw Error(Exit::system, "netlink request too long");
}

void Message::put_str(uint16_t type, std::string_view s) {
    const std::string z(s);
    if (!mnl_attr_put_strz_check(header(), buf_.size(), type, z.c_str()))
        throw Error(Exit::system, "netlink request too long");
}

void Message::put_raw(uint16_t type, const void* data, size_t len) {
    if (!mnl_attr_put_check(header(), buf_.size(), type, len, data))
        throw Error(Exit::system, "netlink request too long");
}

nlattr* Message::nest_start(uint16_t type) {
    nlattr* nest = mnl_attr_nest_start_check(header(), buf_.size(), type);
    if (nest == nullptr) throw Error(Exit::system, "netlink request too long");
    nest->nla_type |= NLA_F_NESTED;
    return nest;
}

void Message::nest_end(nlattr* nest) { mnl_attr_nest_end(header(), nest); }

std::vector<uint16_t> attr_path_at(const Message& msg, uint32_t offset) {
    std::vector<uint16_t> path;
    const uint8_t* base = msg.data();
    walk(base + MNL_NLMSG_HDRLEN + MNL_ALIGN(msg.hdrlen()), base + msg.size(), base, offset, path);
    return path;
}

Socket::Socket(int bus)
    : sock_(mnl_socket_open(bus)), seq_(static_cast<uint32_t>(time(nullptr))), rx_(kRxSize) {
    if (!sock_) sys_error("netlink socket");
    if (mnl_socket_bind(sock_.get(), 0, MNL_SOCKET_AUTOPID) < 0) sys_error("netlink bind");
    portid_ = mnl_socket_get_portid(sock_.get());
    int one = 1;
    // Extended ACK (messages, offsets), without a copy of the request.
    mnl_socket_setsockopt(sock_.get(), NETLINK_EXT_ACK, &one, sizeof(one));
    mnl_socket_setsockopt(sock_.get(), NETLINK_CAP_ACK, &one, sizeof(one));
}

int Socket::fd() const { return mnl_socket_get_fd(sock_.get()); }

namespace {

// The error (or success) an NLMSG_ERROR or NLMSG_DONE message reports.
std::optional<KernelError> end_of_request(const nlmsghdr* nlh) {
    if (nlh->nlmsg_type == NLMSG_ERROR) {
        if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + sizeof(nlmsgerr))
            throw Error(Exit::system, "netlink: truncated error message");
        const auto* e = static_cast<const nlmsgerr*>(mnl_nlmsg_get_payload(nlh));
        if (e->error == 0) return std::nullopt;
        const size_t skip = (nlh->nlmsg_flags & NLM_F_CAPPED) != 0
                                ? sizeof(*e)
                                : sizeof(*e) + e->msg.nlmsg_len - MNL_NLMSG_HDRLEN;
        auto ack = ext_ack(nlh, skip);
        return KernelError{-e->error, ack.msg, ack.offset};
    }
    int err = 0;
    if (nlh->nlmsg_len >= MNL_NLMSG_HDRLEN + sizeof(int))
        std::memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof(err));
    if (err == 0) return std::nullopt;
    auto ack = ext_ack(nlh, sizeof(int));
    return KernelError{-err, ack.msg, ack.offset};
}

}  // namespace

bool Socket::dispatch(const uint8_t* data, size_t len, const Handler& on_reply,
                      std::optional<KernelError>& end) const {
    const auto* nlh = reinterpret_cast<const nlmsghdr*>(data);
    int left = static_cast<int>(len);
    for (; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
        if (nlh->nlmsg_seq != seq_ || nlh->nlmsg_pid != portid_) continue;
        if (nlh->nlmsg_type == NLMSG_ERROR || nlh->nlmsg_type == NLMSG_DONE) {
            end = end_of_request(nlh);
            return true;
        }
        on_reply(nlh);
    }
    return false;
}

std::optional<KernelError> Socket::request(Message& msg, const Handler& on_reply) {
    nlmsghdr* req = msg.header();
    req->nlmsg_seq = ++seq_;
    const bool dump = (req->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP;
    // A dump ends with NLMSG_DONE; anything else is acknowledged.
    if (!dump) req->nlmsg_flags |= NLM_F_ACK;
    if (mnl_socket_sendto(sock_.get(), msg.data(), msg.size()) < 0) sys_error("netlink send");
    std::optional<KernelError> end;
    for (;;) {
        const ssize_t n = mnl_socket_recvfrom(sock_.get(), rx_.data(), rx_.size());
        if (n < 0) sys_error("netlink receive");
        if (dispatch(rx_.data(), static_cast<size_t>(n), on_reply, end)) return end;
    }
}

std::optional<Socket::Family> Socket::resolve(const std::string& name) {
    Message msg(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, 0);
    msg.put_str(CTRL_ATTR_FAMILY_NAME, name);
    Family fam;
    auto err = request(msg, [&](const nlmsghdr* nlh) {
        auto tb = parse(nlh, sizeof(genlmsghdr), CTRL_ATTR_MAX);
        if (tb[CTRL_ATTR_FAMILY_ID] != nullptr) fam.id = get_u16(tb[CTRL_ATTR_FAMILY_ID]);
        if (tb[CTRL_ATTR_MCAST_GROUPS] == nullptr) return;
        for (const nlattr* g : children(tb[CTRL_ATTR_MCAST_GROUPS])) {
            auto gt = parse_nested(g, CTRL_ATTR_MCAST_GRP_MAX);
            if (gt[CTRL_ATTR_MCAST_GRP_NAME] != nullptr && gt[CTRL_ATTR_MCAST_GRP_ID] != nullptr)
                fam.groups.emplace_back(get_str(gt[CTRL_ATTR_MCAST_GRP_NAME]),
                                        get_u32(gt[CTRL_ATTR_MCAST_GRP_ID]));
        }
    });
    if (err) {
        if (err->err == ENOENT) return std::nullopt;
        errno = err->err;
        sys_error("netlink family lookup");
    }
    if (fam.id == 0) throw Error(Exit::system, "netlink family lookup: no id in the reply");
    return fam;
}

void Socket::join(uint32_t group) {
    if (mnl_socket_setsockopt(sock_.get(), NETLINK_ADD_MEMBERSHIP, &group, sizeof(group)) < 0) {
        if (errno == EPERM || errno == EACCES)
            throw Error(Exit::permission,
                        "permission denied: watching rxecc events needs CAP_NET_ADMIN in this "
                        "network namespace");
        sys_error("netlink group membership");
    }
}

bool Socket::receive(int timeout_ms, const Handler& on_msg) {
    pollfd p{fd(), POLLIN, 0};
    const int r = poll(&p, 1, timeout_ms);
    if (r < 0 && errno != EINTR) sys_error("poll");
    if (r <= 0) return false;
    const ssize_t n = mnl_socket_recvfrom(sock_.get(), rx_.data(), rx_.size());
    if (n < 0) {
        // A burst of notifications overran the socket: those are lost, go on.
        if (errno == ENOBUFS) return true;
        sys_error("netlink receive");
    }
    const auto* nlh = reinterpret_cast<const nlmsghdr*>(rx_.data());
    int len = static_cast<int>(n);
    for (; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) on_msg(nlh);
    return true;
}

Table parse(const nlmsghdr* nlh, size_t hdrlen, uint16_t max) {
    Table tb(max + 1U, nullptr);
    if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + MNL_ALIGN(hdrlen)) return tb;
    const auto* p = static_cast<const uint8_t*>(mnl_nlmsg_get_payload(nlh)) + MNL_ALIGN(hdrlen);
    const auto* end = reinterpret_cast<const uint8_t*>(nlh) + nlh->nlmsg_len;
    const auto* a = reinterpret_cast<const nlattr*>(p);
    int len = static_cast<int>(end - p);
    for (; mnl_attr_ok(a, len); a = mnl_attr_next(a)) {
        len = static_cast<int>(end - reinterpret_cast<const uint8_t*>(mnl_attr_next(a)));
        if (mnl_attr_get_type(a) <= max) tb[mnl_attr_get_type(a)] = a;
    }
    return tb;
}

std::vector<const nlattr*> children(const nlattr* nest) {
    std::vector<const nlattr*> out;
    const auto* p = static_cast<const uint8_t*>(mnl_attr_get_payload(nest));
    const auto* end = reinterpret_cast<const uint8_t*>(nest) + nest->nla_len;
    const auto* a = reinterpret_cast<const nlattr*>(p);
    int len = static_cast<int>(end - p);
    for (; mnl_attr_ok(a, len); a = mnl_attr_next(a)) {
        len = static_cast<int>(end - reinterpret_cast<const uint8_t*>(mnl_attr_next(a)));
        out.push_back(a);
    }
    return out;
}

Table parse_nested(const nlattr* nest, uint16_t max) {
    Table tb(max + 1U, nullptr);
    for (const nlattr* a : children(nest))
        if (mnl_attr_get_type(a) <= max) tb[mnl_attr_get_type(a)] = a;
    return tb;
}

namespace {
void need(const nlattr* a, size_t size) {
    if (mnl_attr_get_payload_len(a) < size)
        throw Error(Exit::system, "netlink: malformed attribute in a reply");
}
}  // namespace

uint8_t get_u8(const nlattr* a) {
    need(a, sizeof(uint8_t));
    return mnl_attr_get_u8(a);
}

uint16_t get_u16(const nlattr* a) {
    need(a, sizeof(uint16_t));
    return mnl_attr_get_u16(a);
}

uint32_t get_u32(const nlattr* a) {
    need(a, sizeof(uint32_t));
    return mnl_attr_get_u32(a);
}

uint64_t get_u64(const nlattr* a) {
    need(a, sizeof(uint64_t));
    return mnl_attr_get_u64(a);
}

std::string get_str(const nlattr* a) {
    const auto* s = static_cast<const char*>(mnl_attr_get_payload(a));
    return {s, strnlen(s, mnl_attr_get_payload_len(a))};
}

}  // namespace rxecc::tool::nl

// NOLINTEND(*-reinterpret-cast)
