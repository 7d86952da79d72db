// Netlink over libmnl (generic netlink and rtnetlink): RAII socket, message
// builder, requests with extended ACK errors. Knows nothing about rxecc's
// attributes.
#pragma once

#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rxecc::tool::nl {

// A failed request: errno and what the kernel said (extended ACK).
struct KernelError {
    int err = 0;                     // positive errno
    std::string msg;                 // NLMSGERR_ATTR_MSG, may be empty
    std::optional<uint32_t> offset;  // NLMSGERR_ATTR_OFFS: bad attribute in the request
};

// One netlink request under construction.
class Message {
  public:
    // Generic netlink: a genlmsghdr with `cmd` and `version`.
    Message(uint16_t family, uint8_t cmd, uint8_t version, uint16_t flags);
    // Any other: message type `type` with the fixed header `hdr` of `hdrlen` bytes.
    Message(uint16_t type, uint16_t flags, const void* hdr, size_t hdrlen);
    void put_u8(uint16_t type, uint8_t v);
    void put_u16(uint16_t type, uint16_t v);
    void put_u32(uint16_t type, uint32_t v);
    void put_u64(uint16_t type, uint64_t v);
    void put_str(uint16_t type, std::string_view s);
    // Raw bytes as an attribute payload (tests and fuzzing).
    void put_raw(uint16_t type, const void* data, size_t len);
    nlattr* nest_start(uint16_t type);
    void nest_end(nlattr* nest);
    [[nodiscard]] nlmsghdr* header();
    [[nodiscard]] const nlmsghdr* header() const;
    [[nodiscard]] const uint8_t* data() const { return buf_.data(); }
    [[nodiscard]] size_t size() const;
    // Length of the fixed header after the netlink header.
    [[nodiscard]] size_t hdrlen() const { return hdrlen_; }

  private:
    std::vector<uint8_t> buf_;
    size_t hdrlen_;
};

// The attribute at `offset` bytes into `msg` and its nesting path, as
// attribute types from the outermost (empty if the offset hits none).
[[nodiscard]] std::vector<uint16_t> attr_path_at(const Message& msg, uint32_t offset);

using Handler = std::function<void(const nlmsghdr*)>;

class Socket {
  public:
    // A socket of netlink bus `bus` (NETLINK_GENERIC, NETLINK_ROUTE).
    explicit Socket(int bus = NETLINK_GENERIC);
    // A request; `on_reply` sees every reply message. Returns the error the
    // kernel reported, if any (errors of the socket itself throw).
    [[nodiscard]] std::optional<KernelError> request(Message& msg, const Handler& on_reply);
    // The id of a generic netlink family and of its multicast groups;
    // nullopt if the family is not registered.
    struct Family {
        uint16_t id = 0;
        std::vector<std::pair<std::string, uint32_t>> groups;
    };
    [[nodiscard]] std::optional<Family> resolve(const std::string& name);
    void join(uint32_t group);
    // Read what is pending (blocking for at most `timeout_ms`; -1 forever)
    // and pass each message to `on_msg`. False on timeout.
    bool receive(int timeout_ms, const Handler& on_msg);
    [[nodiscard]] int fd() const;

  private:
    // One received batch: replies to `on_reply`; the end of the request
    // (ACK, error, DONE) sets `end`.
    bool dispatch(const uint8_t* data, size_t len, const Handler& on_reply,
                  std::optional<KernelError>& end) const;
    struct Closer {
        void operator()(mnl_socket* s) const { mnl_socket_close(s); }
    };
    std::unique_ptr<mnl_socket, Closer> sock_;
    uint32_t portid_ = 0;
    uint32_t seq_;
    std::vector<uint8_t> rx_;
};

// Attribute table of a message's payload after a header of `hdrlen` bytes,
// or of a nested attribute: index = attribute type, nullptr if absent.
using Table = std::vector<const nlattr*>;
[[nodiscard]] Table parse(const nlmsghdr* nlh, size_t hdrlen, uint16_t max);
[[nodiscard]] Table parse_nested(const nlattr* nest, uint16_t max);
// All attributes of a nest in order (repeated types).
[[nodiscard]] std::vector<const nlattr*> children(const nlattr* nest);

[[nodiscard]] uint8_t get_u8(const nlattr* a);
[[nodiscard]] uint16_t get_u16(const nlattr* a);
[[nodiscard]] uint32_t get_u32(const nlattr* a);
[[nodiscard]] uint64_t get_u64(const nlattr* a);
[[nodiscard]] std::string get_str(const nlattr* a);

}  // namespace rxecc::tool::nl
