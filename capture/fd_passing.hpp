// Messages with open files attached (SCM_RIGHTS) over a SOCK_SEQPACKET socket: how an app hands
// its capture jobs, with their capture markers and build locks, to its running capture helper
// (capture/hand_over.hpp). A file in flight stays open, and its flock held, until the receiver
// takes it or the socket closes. POSIX only.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace jitcache {

// The largest message and the most files one message carries.
inline constexpr std::size_t kMaxMessage = 4096;
inline constexpr std::size_t kMaxPassedFiles = 4;

// Sends `text` (at most kMaxMessage bytes) with copies of `fds` (at most kMaxPassedFiles). Never
// raises SIGPIPE. False when the peer is gone or the message cannot be sent.
bool send_with_files(int socket, std::string_view text, const std::vector<int>& fds);

// Receives one message; its files arrive close-on-exec and are the caller's to close.
// 1: a message; 0: the peer closed the socket; -1: an error (errno) or a malformed message (its
// files are closed).
int receive_with_files(int socket, std::string* text, std::vector<int>* fds);

}  // namespace jitcache
