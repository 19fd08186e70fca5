// Remote model names: which are remote, how they are shown, and where they resolve to. See
// remote_location.h; s3:// and hf:// have their own files.
#include "ggufs/remote_location.h"

#include <cstdlib>

#include "ggufs/s3_location.h"
#include "hub_location.h"

namespace ggufs {

EnvLookup process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
}

bool is_remote(const std::string& name) {
  return name.starts_with("http://") || name.starts_with("https://") || name.starts_with("s3://") ||
         name.starts_with("hf://");
}

std::string display_url(const std::string& url) {
  std::string out = url;
  if (const auto q = out.find_first_of("?#"); q != std::string::npos) {
    out = out.substr(0, q) + (out[q] == '?' ? "?…" : "");
  }
  // user:password@host: the user info goes.
  if (const auto scheme = out.find("://"); scheme != std::string::npos) {
    const auto host_end = out.find('/', scheme + 3);
    const auto at = out.rfind('@', host_end == std::string::npos ? out.size() : host_end);
    if (at != std::string::npos && at > scheme) out.erase(scheme + 3, at - scheme - 2);
  }
  return out;
}

RemoteLocation resolve_remote(const std::string& name, const S3Settings& s3,
                              const std::string& bearer_token, const EnvLookup& env) {
  if (name.starts_with("s3://")) return resolve_s3(name, s3, env);
  if (name.starts_with("hf://")) return resolve_hf(name, env);
  RemoteLocation loc;
  loc.name = name;
  loc.url = name;
  loc.auth.bearer_token = bearer_token;
  return loc;
}

}  // namespace ggufs
