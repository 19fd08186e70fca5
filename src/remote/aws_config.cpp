// The AWS CLI's lookup of credentials, region and endpoint (see aws_config.h). The files are
// parsed by libinih; what botocore adds on top of Python's configparser (profile sections,
// nested `s3 =` settings, the merge of the two files) is done here.
#include "ggufs/aws_config.h"

#include <ini.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "ggufs/byte_source.h"
#include "ggufs/error.h"

namespace ggufs {
namespace {

using Settings = std::map<std::string, std::string>;  // name (lowercase) → raw value
using Sections = std::map<std::string, Settings>;     // section name → its settings

std::string lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return s;
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// configparser's dialect, so that a file reads as the AWS CLI reads it: ';' inside a value is
// part of it (no inline comments), and lines may be long (session tokens run to kilobytes;
// libinih's default 200-byte line would cut them silently). Debian's libinih makes these
// options run-time variables; they are process-wide, hence set once.
void configure_inih() {
  static std::once_flag once;
  std::call_once(once, [] {
    ini_allow_inline_comments = false;
    ini_use_stack = false;
    ini_allow_realloc = true;
    ini_max_line = 1 << 16;
  });
}

struct ParseState {
  Sections* sections;
  std::string last_section, last_name;
  std::set<std::pair<std::string, std::string>> seen;
};

// libinih reports an indented line that follows a setting as another value of the same name;
// configparser joins such lines with '\n', and botocore reads a value that starts with '\n'
// (`s3 =` followed by indented lines) as nested `name = value` settings. Returning 0 makes
// libinih report the line as a parse error.
int on_setting(void* user, const char* section, const char* name, const char* value) {
  auto& st = *static_cast<ParseState*>(user);
  if (*section == '\0') return 0;  // configparser: a setting before any [section]
  const std::string key = lowercase(name);
  std::string& slot = (*st.sections)[section][key];
  if (section == st.last_section && key == st.last_name) {
    const bool nested_value = slot.empty() || slot.front() == '\n';
    if (nested_value && std::strchr(value, '=') == nullptr) return 0;  // botocore refuses it
    slot += '\n';
    slot += value;
    return 1;
  }
  if (!st.seen.emplace(section, key).second) return 0;  // configparser: a duplicate setting
  slot = value;
  st.last_section = section;
  st.last_name = key;
  return 1;
}

// The sections of an INI file; none when it does not exist (or is not a regular file, which
// botocore skips too).
Sections read_ini(const std::string& path) {
  Sections sections;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return sections;
  configure_inih();
  ParseState st{&sections, "", "", {}};
  // Read as a regular file of at most 1 MiB (a FIFO swapped in after the check above must not
  // hang the mount), then parsed from memory.
  const std::string text = read_regular_file(path, 1 << 20);
  const int r = ini_parse_string(text.c_str(), on_setting, &st);
  if (r == -2) throw IoError(path + ": out of memory while reading it");
  if (r > 0) {
    throw IoError(path + ": line " + std::to_string(r) +
                  " cannot be parsed (expected [section] or name = value)");
  }
  return sections;
}

// botocore's nested settings: "\nname = value\n…" → {name: value}.
Settings nested(const std::string& raw) {
  Settings out;
  if (raw.empty() || raw.front() != '\n') return out;
  std::size_t pos = 1;
  while (pos <= raw.size()) {
    const std::size_t end = std::min(raw.find('\n', pos), raw.size());
    const std::string line = raw.substr(pos, end - pos);
    const auto eq = line.find('=');
    if (eq != std::string::npos) out[trim(line.substr(0, eq))] = trim(line.substr(eq + 1));
    pos = end + 1;
  }
  return out;
}

std::string get(const Settings& s, const std::string& name) {
  const auto it = s.find(name);
  return it == s.end() ? "" : it->second;
}

std::string home_dir(const EnvLookup& env) {
  if (auto home = env("HOME"); home && !home->empty()) return *home;
  // getpwuid_r is the thread-safe form; a small buffer is enough for one entry.
  passwd pw{};
  passwd* found = nullptr;
  char buf[4096];
  if (::getpwuid_r(::getuid(), &pw, buf, sizeof buf, &found) == 0 && found) return pw.pw_dir;
  return "";
}

// $VAR, else `fallback`, with a leading "~/" expanded as botocore's os.path.expanduser does.
std::string file_path(const EnvLookup& env, const std::string& var, const std::string& fallback) {
  auto v = env(var);
  std::string p = v && !v->empty() ? *v : fallback;
  if (p == "~" || p.rfind("~/", 0) == 0) p = home_dir(env) + p.substr(1);
  return p;
}

// The config file's profiles: [profile NAME] (any blank between), and [default].
Sections config_profiles(const Sections& config) {
  Sections profiles;
  for (const auto& [section, settings] : config) {
    if (section == "default") {
      profiles.emplace("default", settings);
    } else if (section.rfind("profile", 0) == 0 && section.size() > 7 &&
               (section[7] == ' ' || section[7] == '\t')) {
      const std::string name = trim(section.substr(7));
      if (!name.empty()) profiles[name] = settings;  // [profile default] wins over [default]
    }
  }
  return profiles;
}

std::optional<std::string> nonempty(const EnvLookup& env, const std::string& name) {
  auto v = env(name);
  if (v && v->empty()) v.reset();
  return v;
}

// Key and secret from one file's section: both or neither.
bool take_keys(const Settings& s, const std::string& profile, const std::string& file,
               AwsConfig& out) {
  const std::string key = get(s, "aws_access_key_id");
  const std::string secret = get(s, "aws_secret_access_key");
  if (key.empty() && secret.empty()) return false;
  if (key.empty() || secret.empty()) {
    throw IoError(file + ": profile '" + profile + "' has " +
                  (key.empty() ? "aws_secret_access_key without aws_access_key_id"
                               : "aws_access_key_id without aws_secret_access_key"));
  }
  out.access_key_id = key;
  out.secret_access_key = secret;
  out.session_token = get(s, "aws_session_token");
  if (out.session_token.empty()) out.session_token = get(s, "aws_security_token");  // older name
  return true;
}

}  // namespace

AwsConfig load_aws_config(const EnvLookup& env) {
  AwsConfig out;
  const auto profile_env = nonempty(env, "AWS_PROFILE");
  out.profile = profile_env.value_or("default");

  const std::string cred_file =
      file_path(env, "AWS_SHARED_CREDENTIALS_FILE", home_dir(env) + "/.aws/credentials");
  const std::string config_file = file_path(env, "AWS_CONFIG_FILE", home_dir(env) + "/.aws/config");
  const Sections credentials = read_ini(cred_file);
  const Sections config = read_ini(config_file);
  const Sections profiles = config_profiles(config);

  const auto in_cred = credentials.find(out.profile);
  const auto in_config = profiles.find(out.profile);
  // Like botocore, a profile asked for by name must exist, even "default"; an unset
  // AWS_PROFILE with no [default] anywhere just means nothing is configured.
  if (profile_env && in_cred == credentials.end() && in_config == profiles.end()) {
    throw IoError("AWS profile '" + out.profile + "' (AWS_PROFILE) is in neither " + cred_file +
                  " nor " + config_file);
  }
  const Settings empty;
  const Settings& cred_settings = in_cred == credentials.end() ? empty : in_cred->second;
  const Settings& config_settings = in_config == profiles.end() ? empty : in_config->second;
  // botocore merges the credentials file's section over the config file's profile.
  Settings merged = config_settings;
  for (const auto& [k, v] : cred_settings) merged[k] = v;

  const auto env_key = nonempty(env, "AWS_ACCESS_KEY_ID");
  const auto env_secret = nonempty(env, "AWS_SECRET_ACCESS_KEY");
  if (env_key && env_secret) {
    out.access_key_id = *env_key;
    out.secret_access_key = *env_secret;
    out.session_token = nonempty(env, "AWS_SESSION_TOKEN").value_or("");
  } else if (!take_keys(cred_settings, out.profile, cred_file, out)) {
    take_keys(config_settings, out.profile, config_file, out);
  }

  if (auto r = nonempty(env, "AWS_REGION")) {
    out.region = *r;
  } else if (auto d = nonempty(env, "AWS_DEFAULT_REGION")) {
    out.region = *d;
  } else {
    out.region = get(merged, "region");
  }
  if (out.region.empty()) out.region = "us-east-1";

  const Settings s3 = nested(get(merged, "s3"));
  const std::string style = get(s3, "addressing_style");
  if (!style.empty()) {
    if (style != "auto" && style != "path" && style != "virtual") {
      throw IoError("AWS profile '" + out.profile + "': s3 addressing_style '" + style +
                    "' is not auto, path or virtual");
    }
    out.addressing_style = style;
  }

  const auto ignore_env = nonempty(env, "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS");
  const bool ignore =
      lowercase(ignore_env.value_or(get(merged, "ignore_configured_endpoint_urls"))) == "true";
  if (!ignore) {
    if (auto e = nonempty(env, "AWS_ENDPOINT_URL_S3")) {
      out.endpoint_url = *e;
    } else if (auto g = nonempty(env, "AWS_ENDPOINT_URL")) {
      out.endpoint_url = *g;
    } else {
      const std::string services = get(merged, "services");
      if (!services.empty()) {
        const auto it = config.find("services " + services);
        if (it != config.end())
          out.endpoint_url = get(nested(get(it->second, "s3")), "endpoint_url");
      }
      if (out.endpoint_url.empty()) out.endpoint_url = get(s3, "endpoint_url");
      if (out.endpoint_url.empty()) out.endpoint_url = get(merged, "endpoint_url");
    }
  }
  return out;
}

}  // namespace ggufs
