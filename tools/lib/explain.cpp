#include "tools/lib/explain.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>

#include "tools/lib/format.hpp"

namespace jitcache::tool {
namespace {

using nlohmann::json;

std::string quoted(const std::string& text) { return "'" + text + "'"; }

std::string text_of(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "";
  return value.dump();
}

const json& null_json() {
  static const json null_value;
  return null_value;
}

// object[name] that is safe on a const json that is not an object or lacks the name.
const json& member(const json& object, const char* name) {
  if (!object.is_object()) return null_json();
  auto it = object.find(name);
  return it == object.end() ? null_json() : *it;
}

const json& value_of(const json& component) { return member(component, "value"); }

std::string digest_of(const json& component) {
  return component.is_object() ? component.value("digest", std::string()) : std::string();
}

Difference make(std::string component, std::string subject, std::string change, std::string now, std::string cached,
                std::string description) {
  return {std::move(component), std::move(subject), std::move(change), std::move(now), std::move(cached),
          std::move(description)};
}

// ---- name/value maps: device fields, environment, compiler versions -----------------------------

std::map<std::string, std::string> as_map(const json& value) {
  std::map<std::string, std::string> map;
  if (!value.is_object()) return map;
  for (const auto& [name, item] : value.items()) map[name] = text_of(item);
  return map;
}

std::string label_of_field(const std::string& name) {
  static const std::map<std::string, std::string> labels = {
      {"vendor_id", "vendor id"},           {"vendor", "vendor"},
      {"name", "name"},                     {"device_version", "device version"},
      {"opencl_c_version", "OpenCL C version"}, {"address_bits", "address bits"},
      {"platform_name", "platform name"},   {"platform_version", "platform version"},
      {"driver_version", "driver version"}};
  auto it = labels.find(name);
  if (it != labels.end()) return it->second;
  std::string label = name;
  std::replace(label.begin(), label.end(), '_', ' ');
  return label;
}

// prefix: "device", "compiler"; fields compared by name.
void compare_fields(const char* component, const std::string& prefix, const json& now, const json& cached,
                    std::vector<Difference>* out) {
  const auto a = as_map(now), b = as_map(cached);
  std::set<std::string> names;
  for (const auto& [name, _] : a) names.insert(name);
  for (const auto& [name, _] : b) names.insert(name);
  for (const std::string& name : names) {
    auto in_a = a.find(name), in_b = b.find(name);
    const std::string label = prefix + " " + label_of_field(name);
    if (in_a != a.end() && in_b != b.end()) {
      if (in_a->second == in_b->second) continue;
      out->push_back(make(component, name, "changed", in_a->second, in_b->second,
                          label + " " + quoted(in_a->second) + " vs " + quoted(in_b->second)));
    } else if (in_a != a.end()) {
      out->push_back(make(component, name, "added", in_a->second, "",
                          label + " " + quoted(in_a->second) + " (the cached entry has none)"));
    } else {
      out->push_back(make(component, name, "removed", "", in_b->second,
                          label + " not reported now (cached entry: " + quoted(in_b->second) + ")"));
    }
  }
}

void compare_environment(const json& now, const json& cached, std::vector<Difference>* out) {
  const auto a = as_map(now), b = as_map(cached);
  std::set<std::string> names;
  for (const auto& [name, _] : a) names.insert(name);
  for (const auto& [name, _] : b) names.insert(name);
  for (const std::string& name : names) {
    auto in_a = a.find(name), in_b = b.find(name);
    const std::string now_text = in_a == a.end() ? "unset" : name + "=" + in_a->second;
    const std::string cached_text = in_b == b.end() ? "unset" : (in_a == a.end() ? name + "=" : "") + in_b->second;
    if (in_a != a.end() && in_b != b.end() && in_a->second == in_b->second) continue;
    const std::string change = in_a == a.end() ? "removed" : in_b == b.end() ? "added" : "changed";
    // "env POCL_WORK_GROUP_METHOD=cbs vs unset", "env POCL_X=a vs b", "env POCL_X unset vs =a"
    std::string description = "env " + now_text + " vs " + cached_text;
    if (in_a == a.end()) description = "env " + name + " unset vs " + cached_text;
    out->push_back(make("environment", name, change, in_a == a.end() ? "" : in_a->second,
                        in_b == b.end() ? "" : in_b->second, description));
  }
}

// ---- build options ---------------------------------------------------------------------------

std::vector<std::string> option_tokens(const std::string& options) {
  std::vector<std::string> tokens;
  std::istringstream in(options);
  std::string token;
  while (in >> token) {
    // "-D NAME=1" and "-I dir" are one option written as two tokens.
    if ((token == "-D" || token == "-I" || token == "-U") && !in.eof()) {
      std::string argument;
      if (in >> argument) token += argument;
    }
    tokens.push_back(token);
  }
  return tokens;
}

// "-DOFFSET=5" -> "-DOFFSET": options that set the same thing.
std::string option_name(const std::string& token) {
  if (token.rfind("-D", 0) == 0) return token.substr(0, token.find('='));
  return token;
}

void compare_options(const json& now, const json& cached, std::vector<Difference>* out) {
  const std::string a = text_of(now), b = text_of(cached);
  if (a == b) return;
  const auto tokens_a = option_tokens(a), tokens_b = option_tokens(b);
  std::multiset<std::string> set_a(tokens_a.begin(), tokens_a.end()), set_b(tokens_b.begin(), tokens_b.end());
  std::vector<std::string> only_a, only_b;
  for (const auto& token : tokens_a) if (!set_b.count(token)) only_a.push_back(token);
  for (const auto& token : tokens_b) if (!set_a.count(token)) only_b.push_back(token);
  std::vector<std::string> details;
  for (const auto& token : only_a) {
    auto same = std::find_if(only_b.begin(), only_b.end(),
                             [&](const std::string& other) { return option_name(other) == option_name(token); });
    if (same != only_b.end()) {
      details.push_back(token + " instead of " + *same);
      only_b.erase(same);
    } else {
      details.push_back("added " + token);
    }
  }
  for (const auto& token : only_b) details.push_back("removed " + token);
  if (details.empty()) details.push_back("same options in another order (order can matter)");
  auto shown = [](const std::string& options) { return options.empty() ? std::string("none") : quoted(options); };
  std::string description = "build options " + shown(a) + " vs " + shown(b);
  // Long option strings hide the change: say it.
  if (tokens_a.size() > 2 || tokens_b.size() > 2 || details.size() > 1 || details[0].rfind("same", 0) == 0) {
    std::string joined;
    for (const auto& detail : details) joined += (joined.empty() ? "" : ", ") + detail;
    description += " (" + joined + ")";
  }
  out->push_back(make("options", "", "changed", a, b, description));
}

// ---- headers ---------------------------------------------------------------------------------

struct Header {
  std::string path, digest;
  bool found = false;
};

std::map<std::string, Header> headers_by_name(const json& value) {
  std::map<std::string, Header> headers;
  if (!value.is_array()) return headers;
  for (const json& item : value) {
    if (!item.is_object()) continue;
    headers[item.value("name", std::string())] = {item.value("path", std::string()),
                                                  item.value("digest", std::string()), item.value("found", false)};
  }
  return headers;
}

void compare_headers(const json& now, const json& cached, std::vector<Difference>* out) {
  const auto a = headers_by_name(now), b = headers_by_name(cached);
  std::set<std::string> names;
  for (const auto& [name, _] : a) names.insert(name);
  for (const auto& [name, _] : b) names.insert(name);
  for (const std::string& name : names) {
    auto in_a = a.find(name), in_b = b.find(name);
    const std::string label = "header " + name;
    if (in_b == b.end()) {
      const Header& h = in_a->second;
      out->push_back(make("headers", name, "added", h.found ? h.path : "not found", "",
                          label + " is included now but was not by the cached entry" +
                              (h.found ? " (" + h.path + ")" : " (not found)")));
      continue;
    }
    if (in_a == a.end()) {
      out->push_back(make("headers", name, "removed", "", in_b->second.path,
                          label + " is no longer included (the cached entry included " + in_b->second.path + ")"));
      continue;
    }
    const Header &h = in_a->second, &c = in_b->second;
    if (h.found != c.found) {
      out->push_back(make("headers", name, "changed", h.found ? h.path : "not found", c.found ? c.path : "not found",
                          h.found ? label + " is found now at " + h.path + " but was missing for the cached entry"
                                  : label + " is missing now (the cached entry found it at " + c.path + ")"));
      continue;
    }
    if (h.digest != c.digest) {
      out->push_back(make("headers", name, "changed", h.digest, c.digest,
                          label + " changed (digest " + short_hex(h.digest) + " vs " + short_hex(c.digest) + ")" +
                              (h.path == c.path ? ", " + h.path : ", now " + h.path + ", was " + c.path)));
    } else if (h.path != c.path) {
      out->push_back(make("headers", name, "changed", h.path, c.path,
                          label + " resolves to " + h.path + " now, " + c.path + " for the cached entry (same contents)"));
    }
  }
}

// ---- specialization constants ----------------------------------------------------------------

std::map<std::uint64_t, std::string> constants_by_id(const json& value) {
  std::map<std::uint64_t, std::string> constants;
  if (!value.is_array()) return constants;
  for (const json& item : value) {
    if (item.is_object() && item.contains("id")) {
      constants[item["id"].get<std::uint64_t>()] = item.value("value_hex", std::string());
    }
  }
  return constants;
}

// "0x04000000 (4)" for the widths integers come in (little-endian), else the hex bytes.
std::string constant_text(const std::string& hex) {
  std::string text = "0x" + hex;
  const std::size_t bytes = hex.size() / 2;
  if (bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8) {
    std::uint64_t value = 0;
    for (std::size_t i = bytes; i-- > 0;) value = value << 8 | std::stoull(hex.substr(i * 2, 2), nullptr, 16);
    text += " (" + std::to_string(value) + ")";
  }
  return text;
}

void compare_spec_constants(const json& now, const json& cached, std::vector<Difference>* out) {
  const auto a = constants_by_id(now), b = constants_by_id(cached);
  std::set<std::uint64_t> ids;
  for (const auto& [id, _] : a) ids.insert(id);
  for (const auto& [id, _] : b) ids.insert(id);
  for (std::uint64_t id : ids) {
    auto in_a = a.find(id), in_b = b.find(id);
    const std::string label = "spec constant " + std::to_string(id);
    const std::string subject = std::to_string(id);
    if (in_a != a.end() && in_b != b.end()) {
      if (in_a->second == in_b->second) continue;
      out->push_back(make("spec_constants", subject, "changed", in_a->second, in_b->second,
                          label + " = " + constant_text(in_a->second) + " vs " + constant_text(in_b->second)));
    } else if (in_a != a.end()) {
      out->push_back(make("spec_constants", subject, "added", in_a->second, "",
                          label + " = " + constant_text(in_a->second) + " vs not set (module default)"));
    } else {
      out->push_back(make("spec_constants", subject, "removed", "", in_b->second,
                          label + " not set (module default) vs " + constant_text(in_b->second)));
    }
  }
}

// ---- compiler identity -----------------------------------------------------------------------

struct Library {
  std::string path, build_id;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
};

std::string file_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "libpocl.so.2.10.0" -> "libpocl": a version bump is the same library, changed.
std::string library_stem(const std::string& path) {
  const std::string name = file_name(path);
  return name.substr(0, name.find(".so"));
}

std::map<std::string, Library> libraries_by_stem(const json& value) {
  std::map<std::string, Library> libraries;
  if (!value.is_array()) return libraries;
  for (const json& item : value) {
    if (!item.is_object()) continue;
    Library library{item.value("path", std::string()), item.value("build_id", std::string()),
                    item.value("size", std::uint64_t{0}), item.value("mtime_ns", std::int64_t{0})};
    libraries[library_stem(library.path)] = library;
  }
  return libraries;
}

void compare_compiler(const json& now, const json& cached, std::vector<Difference>* out) {
  const json empty = json::object();
  const auto a = libraries_by_stem(now.is_object() ? now.value("libraries", json::array()) : json::array());
  const auto b = libraries_by_stem(cached.is_object() ? cached.value("libraries", json::array()) : json::array());
  std::set<std::string> stems;
  for (const auto& [stem, _] : a) stems.insert(stem);
  for (const auto& [stem, _] : b) stems.insert(stem);
  for (const std::string& stem : stems) {
    auto in_a = a.find(stem), in_b = b.find(stem);
    if (in_b == b.end()) {
      out->push_back(make("compiler", file_name(in_a->second.path), "added", in_a->second.path, "",
                          "compiler library " + file_name(in_a->second.path) +
                              " is loaded now but was not for the cached entry (" + in_a->second.path + ")"));
      continue;
    }
    if (in_a == a.end()) {
      out->push_back(make("compiler", file_name(in_b->second.path), "removed", "", in_b->second.path,
                          "compiler library " + file_name(in_b->second.path) +
                              " is not loaded now (the cached entry was built with " + in_b->second.path + ")"));
      continue;
    }
    const Library &l = in_a->second, &c = in_b->second;
    const std::string label = "compiler library " + file_name(l.path);
    std::vector<std::string> changes;
    if (l.path != c.path) changes.push_back("path " + l.path + " vs " + c.path);
    if (l.build_id != c.build_id) {
      changes.push_back("build-id " + (l.build_id.empty() ? std::string("none") : short_hex(l.build_id)) + " vs " +
                        (c.build_id.empty() ? std::string("none") : short_hex(c.build_id)));
    } else if (l.build_id.empty()) {  // without a build-id, size and mtime identify the file
      if (l.size != c.size) changes.push_back("size " + std::to_string(l.size) + " vs " + std::to_string(c.size) + " bytes");
      if (l.mtime_ns != c.mtime_ns) {
        changes.push_back("modified " + format_time_ns(l.mtime_ns) + " vs " + format_time_ns(c.mtime_ns));
      }
    }
    if (changes.empty()) continue;
    std::string joined;
    for (const auto& change : changes) joined += (joined.empty() ? "" : ", ") + change;
    const bool id_changed = l.build_id != c.build_id;
    out->push_back(make("compiler", file_name(l.path), "changed", id_changed ? l.build_id : l.path,
                        id_changed ? c.build_id : c.path,
                        label + (id_changed ? " build-id changed (" : " changed (") + joined + ")"));
  }
  compare_fields("compiler", "compiler", now.is_object() ? now.value("versions", empty) : empty,
                 cached.is_object() ? cached.value("versions", empty) : empty, out);
}

// ---- program input ---------------------------------------------------------------------------

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

std::string trimmed(const std::string& text, std::size_t max = 60) {
  std::size_t begin = 0;
  while (begin < text.size() && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  std::string out = text.substr(begin);
  return out.size() > max ? out.substr(0, max) + ".." : out;
}

void compare_input(const json& now, const json& cached, std::vector<Difference>* out) {
  const std::string digest_a = now.is_object() ? now.value("digest", std::string()) : "";
  const std::string digest_b = cached.is_object() ? cached.value("digest", std::string()) : "";
  const std::uint64_t size_a = now.is_object() ? now.value("size", std::uint64_t{0}) : 0;
  const std::uint64_t size_b = cached.is_object() ? cached.value("size", std::uint64_t{0}) : 0;
  std::string description = "program input changed (" + std::to_string(size_a) + " vs " + std::to_string(size_b) +
                            " bytes, digest " + short_hex(digest_a) + " vs " + short_hex(digest_b) + ")";
  if (now.is_object() && cached.is_object() && now.contains("text") && cached.contains("text")) {
    const auto a = lines_of(now["text"].get<std::string>()), b = lines_of(cached["text"].get<std::string>());
    std::size_t line = 0;
    while (line < a.size() && line < b.size() && a[line] == b[line]) ++line;
    description = "program source changed (" + std::to_string(size_a) + " vs " + std::to_string(size_b) +
                  " bytes); first difference at line " + std::to_string(line + 1) + ": " +
                  quoted(line < a.size() ? trimmed(a[line]) : "<end>") + " vs " +
                  quoted(line < b.size() ? trimmed(b[line]) : "<end>");
  }
  out->push_back(make("input", "", "changed", digest_a, digest_b, description));
}

void compare_one(const std::string& name, const json& now, const json& cached, std::vector<Difference>* out) {
  const json& a = value_of(now);
  const json& b = value_of(cached);
  const std::size_t before = out->size();
  if (name == "options") compare_options(a, b, out);
  else if (name == "headers") compare_headers(a, b, out);
  else if (name == "spec_constants") compare_spec_constants(a, b, out);
  else if (name == "compiler") compare_compiler(a, b, out);
  else if (name == "device") compare_fields("device", "device", a, b, out);
  else if (name == "environment") compare_environment(a, b, out);
  else if (name == "input") compare_input(a, b, out);
  else if (name == "schema") {
    out->push_back(make("schema", "", "changed", text_of(a), text_of(b),
                        "key schema " + text_of(a) + " vs " + text_of(b) +
                            ": jitcache changed how keys are made, so every entry is rebuilt once"));
  } else if (name == "api") {
    out->push_back(make("api", "", "changed", text_of(a), text_of(b), "API " + text_of(a) + " vs " + text_of(b)));
  } else if (name == "kind") {
    out->push_back(make("kind", "", "changed", text_of(a), text_of(b),
                        "program kind " + text_of(a) + " vs " + text_of(b)));
  }
  if (out->size() == before) {  // a component this tool does not know, or one that differs only in digest
    const std::string da = digest_of(now), db = digest_of(cached);
    std::string description = name + " differs (digest " + short_hex(da) + " vs " + short_hex(db) + ")";
    if (a.dump().size() <= 80 && b.dump().size() <= 80 && a != b) description += ": " + a.dump() + " vs " + b.dump();
    out->push_back(make(name, "", "changed", da, db, description));
  }
}

// Components in the order of the key (schema first) so reports read the same every time.
std::vector<std::string> component_order(const json& a, const json& b) {
  std::vector<std::string> order = {"schema",         "api",      "kind",   "input",      "options",
                                    "headers",        "spec_constants", "compiler", "device", "environment"};
  for (const json* side : {&a, &b}) {
    if (!side->is_object()) continue;
    for (const auto& [name, _] : side->items()) {
      if (std::find(order.begin(), order.end(), name) == order.end()) order.push_back(name);
    }
  }
  return order;
}

std::set<std::string> kernel_names_of(const CachedEntry& entry) {
  std::set<std::string> names;
  const json& listed = member(entry.sidecar, "kernel_names");
  if (listed.is_array()) {
    for (const json& name : listed) if (name.is_string()) names.insert(name.get<std::string>());
  }
  const json& input = value_of(member(member(entry.sidecar, "components"), "input"));
  if (names.empty() && input.is_object() && input.contains("text")) {
    for (auto& name : kernel_names_in(input["text"].get<std::string>())) names.insert(name);
  }
  return names;
}

}  // namespace

std::vector<Difference> compare_components(const json& now, const json& cached) {
  std::vector<Difference> differences;
  const json empty = json::object();
  for (const std::string& name : component_order(now, cached)) {
    const bool in_now = now.is_object() && now.contains(name);
    const bool in_cached = cached.is_object() && cached.contains(name);
    if (!in_now && !in_cached) continue;
    if (in_now != in_cached) {
      differences.push_back(make(name, "", in_now ? "added" : "removed", "", "",
                                 "key component " + name + (in_now ? " exists only in this lookup"
                                                                    : " exists only in the cached entry")));
      continue;
    }
    if (digest_of(now[name]) == digest_of(cached[name]) && !digest_of(now[name]).empty()) continue;
    compare_one(name, now[name], cached[name], &differences);
  }
  return differences;
}

std::vector<std::string> kernel_names_in(const std::string& source) {
  std::vector<std::string> names;
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::size_t at = 0;
  while ((at = source.find("kernel", at)) != std::string::npos) {
    const bool starts_word = at == 0 || !is_word(source[at - 1]) || (at >= 2 && source.compare(at - 2, 2, "__") == 0 &&
                                                                       (at == 2 || !is_word(source[at - 3])));
    std::size_t position = at + 6;
    at = position;
    if (!starts_word || (position < source.size() && is_word(source[position]))) continue;
    // skip whitespace and attributes, expect "void"
    auto skip_space = [&] {
      while (position < source.size() && std::isspace(static_cast<unsigned char>(source[position]))) ++position;
    };
    skip_space();
    if (source.compare(position, 13, "__attribute__") == 0) {
      int depth = 0;
      position += 13;
      for (; position < source.size(); ++position) {
        if (source[position] == '(') ++depth;
        else if (source[position] == ')' && --depth == 0) { ++position; break; }
      }
      skip_space();
    }
    if (source.compare(position, 4, "void") != 0) continue;
    position += 4;
    skip_space();
    std::size_t end = position;
    while (end < source.size() && is_word(source[end])) ++end;
    if (end > position) names.push_back(source.substr(position, end - position));
  }
  return names;
}

double line_similarity(const std::string& a, const std::string& b) {
  const auto lines_a = lines_of(a);
  if (lines_a.empty()) return b.empty() ? 1.0 : 0.0;
  std::multiset<std::string> pool;
  for (const auto& line : lines_of(b)) pool.insert(line);
  std::size_t shared = 0;
  for (const auto& line : lines_a) {
    auto it = pool.find(line);
    if (it != pool.end()) {
      ++shared;
      pool.erase(it);
    }
  }
  return static_cast<double>(shared) / static_cast<double>(std::max(lines_a.size(), lines_of(b).size()));
}

std::vector<EntryMatch> closest_entries(const json& components, const std::vector<std::string>& kernels,
                                        const std::vector<CachedEntry>& entries, const std::string& exclude_key,
                                        std::size_t limit) {
  const json& input = member(components, "input");
  const std::string input_digest = digest_of(input);
  const json& input_value = value_of(input);
  const std::string text = input_value.is_object() ? input_value.value("text", std::string()) : "";
  std::set<std::string> lookup_kernels(kernels.begin(), kernels.end());
  if (lookup_kernels.empty() && !text.empty()) {
    for (auto& name : kernel_names_in(text)) lookup_kernels.insert(name);
  }

  std::vector<EntryMatch> matches;
  for (const CachedEntry& entry : entries) {
    if (entry.key == exclude_key || !entry.sidecar.is_object()) continue;
    const json& cached = member(entry.sidecar, "components");
    if (!cached.is_object()) continue;
    EntryMatch match;
    match.entry = &entry;
    match.same_input = !input_digest.empty() && digest_of(member(cached, "input")) == input_digest;
    const json& cached_input = value_of(member(cached, "input"));
    if (!match.same_input && !text.empty() && cached_input.is_object() && cached_input.contains("text")) {
      match.source_similarity = line_similarity(text, cached_input["text"].get<std::string>());
    }
    for (const std::string& name : kernel_names_of(entry)) match.shares_kernels |= lookup_kernels.count(name) > 0;
    if (!match.same_input && !match.shares_kernels && match.source_similarity < 0.5) continue;  // another program
    match.differences = compare_components(components, cached);
    match.total_components = component_order(components, cached).size();
    matches.push_back(std::move(match));
  }
  auto distinct_components = [](const EntryMatch& match) {
    std::set<std::string> names;
    for (const auto& difference : match.differences) names.insert(difference.component);
    return names.size();
  };
  std::sort(matches.begin(), matches.end(), [&](const EntryMatch& a, const EntryMatch& b) {
    const auto da = distinct_components(a), db = distinct_components(b);
    if (da != db) return da < db;
    if (a.same_input != b.same_input) return a.same_input;
    if (a.differences.size() != b.differences.size()) return a.differences.size() < b.differences.size();
    if (a.source_similarity != b.source_similarity) return a.source_similarity > b.source_similarity;
    return a.entry->last_access_ns > b.entry->last_access_ns;
  });
  if (matches.size() > limit) matches.resize(limit);
  return matches;
}

std::string summarize(const std::vector<Difference>& differences) {
  if (differences.empty()) return "nothing in the key differs";
  auto short_name = [](const Difference& d) {
    if (d.component == "options") return std::string("build options");
    if (d.component == "headers") return "header " + d.subject;
    if (d.component == "environment") return "env " + d.subject;
    if (d.component == "spec_constants") return "spec constant " + d.subject;
    if (d.component == "compiler") return "compiler " + label_of_field(d.subject);
    if (d.component == "device") return "device " + label_of_field(d.subject);
    if (d.component == "input") return std::string("program source");
    return d.component;
  };
  if (differences.size() == 1) return differences[0].description;
  std::string joined;
  for (const auto& difference : differences) joined += (joined.empty() ? "" : ", ") + short_name(difference);
  return std::to_string(differences.size()) + " things changed: " + joined;
}

std::string suggestion(const EntryMatch& match) {
  if (match.differences.empty()) return {};
  for (const Difference& difference : match.differences) {
    if (difference.component != "compiler") return {};
  }
  const bool recorded = match.entry && match.entry->sidecar.is_object() && match.entry->sidecar.contains("inputs");
  if (!recorded) {
    return "only the compiler changed (a driver upgrade?); this entry has no recorded inputs (store_inputs), so "
           "the app's next run rebuilds it";
  }
  return "only the compiler changed (a driver upgrade?): `jitcache warm` rebuilds the recorded programs for it now";
}

}  // namespace jitcache::tool
