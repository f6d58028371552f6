#include "store/remote/redis_connection.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace jitcache {
namespace {

using Clock = std::chrono::steady_clock;

std::mutex g_resolver_mutex;
RedisConnection::Resolver g_resolver;  // empty: getaddrinfo

RedisError timeout(std::string what) { return {RedisFailure::timeout, std::move(what)}; }
RedisError failed(std::string what) { return {RedisFailure::error, std::move(what)}; }
RedisError failed_errno(const std::string& what, int error) { return failed(what + ": " + std::strerror(error)); }

// Milliseconds left until `deadline` for poll(), rounded up; 0 when it has passed.
int poll_ms(Deadline deadline) {
  auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 60'000));
}

// Waits until `fd` is ready for `events` or the deadline passes (false).
bool wait_ready(int fd, short events, Deadline deadline) {
  for (;;) {
    int wait = poll_ms(deadline);
    if (wait == 0 && Clock::now() >= deadline) return false;
    pollfd entry{fd, events, 0};
    int ready = ::poll(&entry, 1, wait);
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return true;  // let the following call report the error
  }
}

struct AddressList {
  addrinfo* list = nullptr;
  ~AddressList() {
    if (list) ::freeaddrinfo(list);
  }
};

// A name lookup on its own thread: getaddrinfo cannot be interrupted, so the caller stops waiting
// at its deadline and the thread frees the answer whenever it comes.
struct PendingLookup {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  bool abandoned = false;
  int status = 0;
  addrinfo* list = nullptr;
};

int call_resolver(const RedisConnection::Resolver& resolver, const char* host, const char* service,
                  const addrinfo* hints, addrinfo** result) {
  return resolver ? resolver(host, service, hints, result) : ::getaddrinfo(host, service, hints, result);
}

std::optional<RedisError> resolve(const std::string& host, int port, Deadline deadline, AddressList* out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  std::string service = std::to_string(port);
  // A numeric address needs no lookup and no thread.
  addrinfo numeric = hints;
  numeric.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  if (::getaddrinfo(host.c_str(), service.c_str(), &numeric, &out->list) == 0) return std::nullopt;

  RedisConnection::Resolver resolver;
  {
    std::lock_guard guard(g_resolver_mutex);
    resolver = g_resolver;
  }
  auto pending = std::make_shared<PendingLookup>();
  try {
    std::thread([pending, host, service, hints, resolver] {
      addrinfo* list = nullptr;
      int status = call_resolver(resolver, host.c_str(), service.c_str(), &hints, &list);
      std::lock_guard guard(pending->mutex);
      if (pending->abandoned) {
        if (list) ::freeaddrinfo(list);
        return;
      }
      pending->status = status;
      pending->list = list;
      pending->done = true;
      pending->done_cv.notify_all();
    }).detach();
  } catch (const std::exception& e) {
    return failed(std::string("cannot start the name lookup: ") + e.what());
  }
  std::unique_lock lock(pending->mutex);
  if (!pending->done_cv.wait_until(lock, deadline, [&] { return pending->done; })) {
    pending->abandoned = true;
    return timeout("resolving " + host + " took longer than the connect timeout");
  }
  if (pending->status != 0) return failed("cannot resolve " + host + ": " + ::gai_strerror(pending->status));
  out->list = pending->list;
  return std::nullopt;
}

// A non-blocking socket connected to `address` by `deadline`, or -1 and `error`.
int connect_to(const sockaddr* address, socklen_t length, int family, Deadline deadline, RedisError* error) {
  int fd = ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = failed_errno("socket", errno);
    return -1;
  }
  int result = ::connect(fd, address, length);
  if (result != 0 && errno == EINPROGRESS) {  // (a full unix socket backlog is EAGAIN: a failure)
    if (!wait_ready(fd, POLLOUT, deadline)) {
      *error = timeout("connecting took longer than the connect timeout");
      ::close(fd);
      return -1;
    }
    int status = 0;
    socklen_t size = sizeof status;
    result = ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &status, &size) == 0 && status == 0 ? 0 : -1;
    if (status) errno = status;
  }
  if (result != 0) {
    *error = failed_errno("connect", errno);
    ::close(fd);
    return -1;
  }
  if (family != AF_UNIX) {
    int on = 1;
    (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  }
  return fd;
}

int connect_endpoint(const RedisEndpoint& endpoint, Deadline deadline, RedisError* error) {
  if (endpoint.unix_socket) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (endpoint.socket_path.size() >= sizeof address.sun_path) {
      *error = {RedisFailure::rejected, "socket path too long"};
      return -1;
    }
    std::memcpy(address.sun_path, endpoint.socket_path.c_str(), endpoint.socket_path.size() + 1);
    return connect_to(reinterpret_cast<const sockaddr*>(&address), sizeof address, AF_UNIX, deadline, error);
  }
  AddressList addresses;
  if (std::optional<RedisError> problem = resolve(endpoint.address.host, endpoint.address.port, deadline, &addresses)) {
    *error = *problem;
    return -1;
  }
  *error = failed("no address for " + endpoint.address.host);
  for (addrinfo* address = addresses.list; address; address = address->ai_next) {
    int fd = connect_to(address->ai_addr, address->ai_addrlen, address->ai_family, deadline, error);
    if (fd >= 0) return fd;
    if (error->kind == RedisFailure::timeout) break;
  }
  return -1;
}

// The cap for a reply that starts with `type`: a record is a bulk string; arrays are small.
std::size_t reply_cap(char type, std::size_t max_reply_bytes) {
  return type == '*' ? std::min(max_reply_bytes, kMaxArrayReplyBytes) : max_reply_bytes;
}

// The length a bulk reply announces ("$<n>\r\n"), once its header is complete.
std::optional<long long> announced_bulk_length(const std::string& head) {
  if (head.empty() || head[0] != '$') return std::nullopt;
  std::size_t end = head.find("\r\n");
  if (end == std::string::npos) return std::nullopt;
  long long length = 0;
  for (std::size_t i = 1; i < end; ++i) {
    if (head[i] < '0' || head[i] > '9') return std::nullopt;  // "$-1": nil; hiredis judges the rest
    if (length > (1ll << 50)) return length;
    length = length * 10 + (head[i] - '0');
  }
  return length;
}

struct ReaderFree {
  void operator()(redisReader* reader) const { redisReaderFree(reader); }
};

}  // namespace

RedisReply::RedisReply(redisReply* reply) : reply_(reply) {}
void RedisReply::Free::operator()(redisReply* reply) const { freeReplyObject(reply); }
bool RedisReply::is_nil() const { return reply_->type == REDIS_REPLY_NIL; }
bool RedisReply::is_error() const { return reply_->type == REDIS_REPLY_ERROR; }
bool RedisReply::is_string() const { return reply_->type == REDIS_REPLY_STRING || reply_->type == REDIS_REPLY_STATUS; }
long long RedisReply::integer() const { return reply_->type == REDIS_REPLY_INTEGER ? reply_->integer : 0; }
std::string_view RedisReply::text() const {
  return reply_->str ? std::string_view(reply_->str, reply_->len) : std::string_view();
}

namespace {

std::vector<std::string> array_strings(const redisReply& reply) {
  std::vector<std::string> values;
  if (reply.type != REDIS_REPLY_ARRAY) return values;
  for (std::size_t i = 0; i < reply.elements; ++i) {
    const redisReply* element = reply.element[i];
    if (element->str) values.emplace_back(element->str, element->len);
  }
  return values;
}

}  // namespace

std::vector<std::string> RedisReply::strings() const { return array_strings(*reply_); }

std::vector<std::string> RedisReply::element_strings(std::size_t index) const {
  if (reply_->type != REDIS_REPLY_ARRAY || index >= reply_->elements) return {};
  return array_strings(*reply_->element[index]);
}

void RedisConnection::set_resolver_for_testing(Resolver resolver) {
  std::lock_guard guard(g_resolver_mutex);
  g_resolver = std::move(resolver);
}

RedisConnection::RedisConnection(int fd, std::size_t max_reply_bytes) : fd_(fd), max_reply_bytes_(max_reply_bytes) {}

RedisConnection::~RedisConnection() { ::close(fd_); }

std::unique_ptr<RedisConnection> RedisConnection::open(const RedisEndpoint& endpoint,
                                                       std::chrono::milliseconds connect_timeout,
                                                       std::chrono::milliseconds command_timeout, RedisError* error,
                                                       std::size_t max_reply_bytes) {
  const auto now = Clock::now();
  auto connection = open(endpoint, now + connect_timeout, now + connect_timeout + 2 * command_timeout,
                         max_reply_bytes, error);
  if (connection) connection->command_timeout_ = command_timeout;
  return connection;
}

std::unique_ptr<RedisConnection> RedisConnection::open(const RedisEndpoint& endpoint, Deadline connect_deadline,
                                                       Deadline deadline, std::size_t max_reply_bytes,
                                                       RedisError* error) {
  const auto started = Clock::now();
  int fd = connect_endpoint(endpoint, std::min(connect_deadline, deadline), error);
  if (fd < 0) return nullptr;
  std::unique_ptr<RedisConnection> connection(new RedisConnection(fd, max_reply_bytes));
  connection->command_timeout_ = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - started);
  auto setup = [&](std::initializer_list<std::string_view> arguments, const char* what) {
    std::unique_ptr<RedisReply> reply = connection->command(arguments, deadline, error);
    if (reply && reply->is_error()) *error = {RedisFailure::rejected, std::string(what) + ": " + std::string(reply->text())};
    return reply && !reply->is_error();
  };
  const UrlCredentials& credentials = endpoint.credentials;
  if (!credentials.password.empty()) {
    bool ok = credentials.user.empty() ? setup({"AUTH", credentials.password}, "AUTH")
                                       : setup({"AUTH", credentials.user, credentials.password}, "AUTH");
    if (!ok) return nullptr;
  }
  if (endpoint.db != 0 && !setup({"SELECT", std::to_string(endpoint.db)}, "SELECT")) return nullptr;
  return connection;
}

std::unique_ptr<RedisReply> RedisConnection::command(std::initializer_list<std::string_view> arguments,
                                                     RedisError* error) {
  return command(arguments, Clock::now() + command_timeout_, error);
}

std::unique_ptr<RedisReply> RedisConnection::command(std::initializer_list<std::string_view> arguments,
                                                     Deadline deadline, RedisError* error) {
  std::vector<const char*> pointers;
  std::vector<size_t> lengths;
  for (std::string_view argument : arguments) {
    pointers.push_back(argument.data());
    lengths.push_back(argument.size());
  }
  char* formatted = nullptr;
  int size = redisFormatCommandArgv(&formatted, static_cast<int>(pointers.size()), pointers.data(), lengths.data());
  if (size < 0 || !formatted) {
    *error = failed("out of memory");
    return nullptr;
  }
  std::string request(formatted, static_cast<std::size_t>(size));
  redisFreeCommand(formatted);

  for (std::size_t sent = 0; sent < request.size();) {
    if (!wait_ready(fd_, POLLOUT, deadline)) {
      *error = timeout("sending the command took longer than the timeout");
      return nullptr;
    }
    ssize_t written = ::send(fd_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (written < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (written <= 0) {
      *error = failed_errno("send", errno);
      return nullptr;
    }
    sent += static_cast<std::size_t>(written);
  }

  std::unique_ptr<redisReader, ReaderFree> reader(redisReaderCreate());
  if (!reader) {
    *error = failed("out of memory");
    return nullptr;
  }
  std::string head;  // the reply's first bytes, to judge its type and announced size early
  std::size_t received = 0;
  char buffer[16384];
  for (;;) {
    if (!wait_ready(fd_, POLLIN, deadline)) {
      *error = timeout("the reply took longer than the timeout");
      return nullptr;
    }
    ssize_t got = ::recv(fd_, buffer, sizeof buffer, 0);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (got < 0) {
      *error = failed_errno("recv", errno);
      return nullptr;
    }
    if (got == 0) {
      *error = failed("the server closed the connection");
      return nullptr;
    }
    received += static_cast<std::size_t>(got);
    if (head.size() < 32) head.append(buffer, std::min<std::size_t>(static_cast<std::size_t>(got), 32 - head.size()));
    const std::size_t cap = reply_cap(head[0], max_reply_bytes_);
    std::optional<long long> announced = announced_bulk_length(head);
    if (received > cap + 64 || (announced && static_cast<unsigned long long>(*announced) > cap)) {
      *error = failed("reply larger than " + std::to_string(cap) + " bytes refused");
      return nullptr;
    }
    void* reply = nullptr;
    if (redisReaderFeed(reader.get(), buffer, static_cast<std::size_t>(got)) != REDIS_OK ||
        redisReaderGetReply(reader.get(), &reply) != REDIS_OK) {
      *error = failed(std::string("protocol error: ") + reader->errstr);
      return nullptr;
    }
    if (reply) return std::make_unique<RedisReply>(static_cast<redisReply*>(reply));
  }
}

}  // namespace jitcache
