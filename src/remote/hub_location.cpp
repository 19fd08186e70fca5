// hf:// names resolved to the Hub's resolve/ URLs. See hub_location.h.
#include "hub_location.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

#include "ggufs/byte_source.h"
#include "ggufs/error.h"
#include "ggufs/names.h"

namespace ggufs {
namespace {

// A token as huggingface_hub's _clean_token leaves it (huggingface_hub/utils/_auth.py): every CR
// and LF removed, then leading and trailing whitespace (Python's str.strip, ASCII part). Empty
// means none. Removing CR and LF also keeps a token from splitting the request's header.
std::string clean_token(std::string token) {
  std::erase_if(token, [](char c) { return c == '\r' || c == '\n'; });
  const char* space = " \t\v\f\x1c\x1d\x1e\x1f";
  const auto first = token.find_first_not_of(space);
  if (first == std::string::npos) return "";
  return token.substr(first, token.find_last_not_of(space) - first + 1);
}

// The whole file, as huggingface_hub reads a token file (a missing file gives no token). A
// regular file of at most 64 KiB: a FIFO, /dev/zero or a huge file in its place is an error, not
// a mount that waits or reads for ever.
std::string token_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) return "";
  return clean_token(read_regular_file(path, 64 * 1024));
}

// "%2F" → "/" (other bytes as they are).
std::string percent_decode(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

std::string percent_encode(const std::string& s, bool keep_slash) {
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~' || (keep_slash && c == '/')) {
      out += ch;
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

RemoteLocation resolve_hf(const std::string& name, const EnvLookup& env) {
  std::string rest = name.substr(5);  // after "hf://"
  std::string kind;                   // the repository type's URL prefix: models have none
  for (const char* k : {"datasets/", "spaces/"}) {
    if (rest.starts_with(k)) {
      kind = k;
      rest = rest.substr(kind.size());
    }
  }
  const auto slash1 = rest.find('/');
  auto slash2 = slash1 == std::string::npos ? slash1 : rest.find('/', slash1 + 1);
  // A pull request's or conversion's revision spans two more segments (refs/pr/1), as
  // huggingface_hub's file system reads it.
  const auto at = slash2 == std::string::npos ? slash2 : rest.rfind('@', slash2);
  if (at != std::string::npos && at > slash1) {
    for (const char* refs : {"refs/pr/", "refs/convert/"}) {
      if (rest.compare(at + 1, std::strlen(refs), refs) == 0) {
        slash2 = rest.find('/', at + 1 + std::strlen(refs));
      }
    }
  }
  if (slash1 == 0 || slash2 == std::string::npos || slash2 == slash1 + 1 ||
      slash2 + 1 >= rest.size()) {
    throw IoError(
        fmt::format("{}: not a Hub file name (hf://OWNER/REPO[@REVISION]/PATH)", printable(name)));
  }
  const std::string owner = rest.substr(0, slash1);
  std::string repo = rest.substr(slash1 + 1, slash2 - slash1 - 1);
  const std::string path = rest.substr(slash2 + 1);
  std::string revision = "main";
  if (const auto rev = repo.find('@'); rev != std::string::npos) {
    revision = percent_decode(repo.substr(rev + 1));  // "refs%2Fpr%2F1" is refs/pr/1 too
    repo = repo.substr(0, rev);
    if (revision.empty() || repo.empty()) {
      throw IoError(fmt::format("{}: empty repository or revision", printable(name)));
    }
  }
  std::string endpoint = env("HF_ENDPOINT").value_or("https://huggingface.co");
  while (endpoint.ends_with('/')) endpoint.pop_back();
  RemoteLocation loc;
  loc.name = name;
  loc.url = fmt::format("{}/{}{}/{}/resolve/{}/{}", endpoint, kind, percent_encode(owner, false),
                        percent_encode(repo, false), percent_encode(revision, false),
                        percent_encode(path, true));
  // huggingface_hub's get_token(): HF_TOKEN (or HUGGING_FACE_HUB_TOKEN), else the file
  // HF_TOKEN_PATH, else
  // $HF_HOME/token with HF_HOME defaulting to ${XDG_CACHE_HOME:-~/.cache}/huggingface
  // (huggingface_hub/constants.py); each cleaned, an empty one counting as none.
  const auto non_empty = [&](const char* var) {
    auto v = env(var);
    return v && !v->empty() ? v : std::nullopt;
  };
  // HUGGING_FACE_HUB_TOKEN: the variable's older name, still read (utils/_auth.py,
  // _get_token_from_environment).
  auto variable = non_empty("HF_TOKEN");
  if (!variable) variable = non_empty("HUGGING_FACE_HUB_TOKEN");
  loc.auth.bearer_token = clean_token(variable.value_or(""));
  if (loc.auth.bearer_token.empty()) {
    std::string path;
    if (const auto token_path = non_empty("HF_TOKEN_PATH")) {
      path = *token_path;
    } else if (const auto hf_home = non_empty("HF_HOME")) {
      path = *hf_home + "/token";
    } else if (const auto cache = non_empty("XDG_CACHE_HOME")) {
      path = *cache + "/huggingface/token";
    } else if (const auto home = env("HOME")) {
      path = *home + "/.cache/huggingface/token";
    }
    if (!path.empty()) loc.auth.bearer_token = token_file(path);
  }
  return loc;
}

}  // namespace ggufs
