// Name rules: key and tensor names as file names, and file-derived text made safe to print.
#include "ggufs/names.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <unordered_map>
#include <unordered_set>

namespace ggufs {

bool is_sha256_hex(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::string file_name_for(std::string_view name) {
  // The three names a directory entry cannot have. None of them can come out of the loop below
  // for another name: every other result holding '%' has it followed by two hex digits.
  if (name.empty()) return "%";
  if (name == ".") return "%2E";
  if (name == "..") return "%2E%2E";
  std::string out;
  out.reserve(name.size());
  for (const char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    // '%' is the escape character, so it is always escaped: decoding every "%XX" gives the name
    // back, which makes the mapping injective. DEL counts as a control byte.
    if (c == '%' || c == '/' || c < 0x20 || c == 0x7f) {
      fmt::format_to(std::back_inserter(out), "%{:02X}", c);
    } else {
      out += ch;
    }
  }
  return out;
}

std::string key_file_name(std::string_view key, std::size_t index, std::size_t max_bytes) {
  std::string name = file_name_for(key);
  if (name.size() <= max_bytes) return name;
  constexpr std::size_t kPrefixBytes = 200;
  std::size_t cut = kPrefixBytes;
  // Back off from the middle of a %XX escape, then from the middle of a UTF-8 sequence.
  if (name[cut - 1] == '%') {
    cut -= 1;
  } else if (name[cut - 2] == '%') {
    cut -= 2;
  }
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xc0) == 0x80) --cut;
  name.resize(cut);
  fmt::format_to(std::back_inserter(name), "%~{}", index);
  return name;
}

std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\\') {
      out += "\\\\";
    } else if (c < 0x20 || c == 0x7f) {
      fmt::format_to(std::back_inserter(out), "\\x{:02x}", c);
    } else {
      out += ch;  // bytes >= 0x80 (UTF-8) are kept
    }
  }
  return out;
}

std::size_t utf8_sequence_length(std::string_view s) {
  if (s.empty()) return 0;
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned c = b(0);
  std::size_t n;
  unsigned lo = 0x80, hi = 0xbf;  // allowed range of the second byte
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;  // no overlong forms
    if (c == 0xed) hi = 0x9f;  // no surrogates
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;  // no overlong forms
    if (c == 0xf4) hi = 0x8f;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (s.size() < n || b(1) < lo || b(1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if (b(k) < 0x80 || b(k) > 0xbf) return 0;
  }
  return n;
}

bool is_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
    } else if (const std::size_t n = utf8_sequence_length(s.substr(i)); n > 0) {
      i += n;
    } else {
      return false;
    }
  }
  return true;
}

std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      out += s[i++];
    } else if (const std::size_t n = utf8_sequence_length(s.substr(i)); n > 0) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    }
  }
  return out;
}

std::vector<std::string> unique_names(std::vector<std::string> names) {
  const std::unordered_set<std::string> taken(names.begin(), names.end());
  std::unordered_set<std::string> used;
  // The next suffix to try for each repeated name: the suffixes below it are taken or given out
  // for good, so each candidate is tried once over the whole list (linear in the names' bytes,
  // not quadratic in the repeats of one name).
  std::unordered_map<std::string, std::uint64_t> next;
  for (std::string& name : names) {
    if (used.insert(name).second) continue;
    std::uint64_t& n = next.try_emplace(name, 2).first->second;
    for (;; ++n) {
      std::string candidate = fmt::format("{}~{}", name, n);
      if (!taken.count(candidate) && used.insert(candidate).second) {
        name = std::move(candidate);
        ++n;
        break;
      }
    }
  }
  return names;
}

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      std::size_t j = i;
      while (j < s.size() && static_cast<unsigned char>(s[j]) < 0x80) ++j;
      append_json_escaped(out, s.substr(i, j - i));
      i = j;
      continue;
    }
    const std::size_t n = utf8_sequence_length(s.substr(i));
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  out += '"';
}

void append_json_escaped(std::string& out, std::string_view s) {
  // Runs of bytes that need no escape are appended whole: vocabularies are mostly such runs.
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '\\' && c != '"') continue;
    out.append(s.substr(start, i - start));
    start = i + 1;
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        // Lower-case hex, as nlohmann::json writes it, so gguf.json and the text files agree.
        fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
    }
  }
  out.append(s.substr(start));
}

}  // namespace ggufs
