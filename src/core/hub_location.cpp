// hf:// names resolved to the Hub's resolve/ URLs. See hub_location.h.
#include "hub_location.h"

#include <fmt/format.h>

#include <fstream>

#include "ggufs/error.h"
#include "ggufs/names.h"

namespace ggufs {
namespace {

std::string first_line_of(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
    line.pop_back();
  }
  return line;
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
  const auto slash2 = slash1 == std::string::npos ? slash1 : rest.find('/', slash1 + 1);
  if (slash1 == 0 || slash2 == std::string::npos || slash2 == slash1 + 1 ||
      slash2 + 1 >= rest.size()) {
    throw IoError(
        fmt::format("{}: not a Hub file name (hf://OWNER/REPO[@REVISION]/PATH)", printable(name)));
  }
  const std::string owner = rest.substr(0, slash1);
  std::string repo = rest.substr(slash1 + 1, slash2 - slash1 - 1);
  const std::string path = rest.substr(slash2 + 1);
  std::string revision = "main";
  if (const auto at = repo.find('@'); at != std::string::npos) {
    revision = repo.substr(at + 1);
    repo = repo.substr(0, at);
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
  if (const auto token = env("HF_TOKEN"); token && !token->empty()) {
    loc.auth.bearer_token = *token;
  } else if (const auto token_path = env("HF_TOKEN_PATH"); token_path && !token_path->empty()) {
    loc.auth.bearer_token = first_line_of(*token_path);
  } else {
    const auto home = env("HF_HOME");
    const auto user_home = env("HOME");
    const std::string hf_home = home && !home->empty() ? *home
                                : user_home            ? *user_home + "/.cache/huggingface"
                                                       : "";
    if (!hf_home.empty()) loc.auth.bearer_token = first_line_of(hf_home + "/token");
  }
  return loc;
}

}  // namespace ggufs
