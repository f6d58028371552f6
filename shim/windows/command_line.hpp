// Rebuilds a Windows command line from arguments, quoting as CommandLineToArgvW and the C
// runtimes parse it (backslashes are literal unless they precede a quote).
#pragma once

#include <string>

namespace jitcache::windows {

std::wstring quote_argument(const std::wstring& argument);

}  // namespace jitcache::windows
