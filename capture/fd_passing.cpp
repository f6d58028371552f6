#include "capture/fd_passing.hpp"

#include <cerrno>
#include <cstring>

#include <sys/socket.h>
#include <unistd.h>

namespace jitcache {

bool send_with_files(int socket, std::string_view text, const std::vector<int>& fds) {
  if (text.empty() || text.size() > kMaxMessage || fds.size() > kMaxPassedFiles) return false;
  iovec data{const_cast<char*>(text.data()), text.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxPassedFiles)] = {};
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  if (!fds.empty()) {
    message.msg_control = control;
    message.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(header), fds.data(), sizeof(int) * fds.size());
  }
  for (;;) {
    const ssize_t sent = ::sendmsg(socket, &message, MSG_NOSIGNAL);
    if (sent == static_cast<ssize_t>(text.size())) return true;
    if (sent < 0 && errno == EINTR) continue;
    return false;
  }
}

int receive_with_files(int socket, std::string* text, std::vector<int>* fds) {
  char buffer[kMaxMessage];
  iovec data{buffer, sizeof buffer};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxPassedFiles)] = {};
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  ssize_t received;
  do {
    received = ::recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
  } while (received < 0 && errno == EINTR);
  if (received < 0) return -1;
  fds->clear();
  for (cmsghdr* header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(header) + i * sizeof(int), sizeof fd);
      fds->push_back(fd);
    }
  }
  if (received == 0 && fds->empty()) return 0;
  if (message.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {  // never sent by a jitcache app: refuse it whole
    for (int fd : *fds) ::close(fd);
    fds->clear();
    errno = EMSGSIZE;
    return -1;
  }
  text->assign(buffer, static_cast<std::size_t>(received));
  return 1;
}

}  // namespace jitcache
