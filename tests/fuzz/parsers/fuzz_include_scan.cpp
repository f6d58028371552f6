// The #include scanner (with its macro expander for computed includes) over arbitrary source text, resolving against a folder with a few real
// headers (one includes another, one includes itself), and the -I parser over the same bytes.
// Absolute names in the input can still reach any regular file; libFuzzer's -rss_limit bounds that.
#include "fuzz_support.hpp"
#include "hashing/include_scan.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitcache;
  static const bool headers_ready = [] {
    const auto& dir = fuzz::scratch_dir();
    std::filesystem::create_directories(dir / "inc" / "sub");
    fuzz::write_file(dir / "a.h", "#include \"b.h\"\n#define A 1\n");
    fuzz::write_file(dir / "b.h", "#include <sub/c.h>\n");
    fuzz::write_file(dir / "inc" / "sub" / "c.h", "#include \"c.h\"\n#include \"../../a.h\"\n");
    return true;
  }();
  (void)headers_ready;
  std::string_view text = fuzz::as_text(data, size);
  // Parsed -I dirs are not searched: they could name any big file on this machine.
  volatile std::size_t seen = include_dirs_from_options(text).size();
  seen = seen + scan_includes(text, {fuzz::scratch_dir() / "inc"}, fuzz::scratch_dir()).size();
  // Computed includes: the same bytes as -D/-U options, after macros that name the headers above.
  const std::vector<std::string> macro_options = {"-D S(x)=#x -D XS(x)=S(x) -D HDR=sub/c.h", std::string(text)};
  seen = seen + scan_program_includes(text, {fuzz::scratch_dir() / "inc"}, {}, fuzz::scratch_dir(), macro_options)
                    .headers.size();
  (void)seen;
  return 0;
}
