// s3:// names to URLs, after the AWS CLI's rules for addressing styles (see s3_location.h).
#include "ggufs/s3_location.h"

#include <algorithm>

#include "ggufs/aws_config.h"
#include "ggufs/error.h"

namespace ggufs {
namespace {

bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

bool looks_like_ipv4(const std::string& s) {
  int dots = 0;
  for (char c : s) {
    if (c == '.') {
      ++dots;
    } else if (c < '0' || c > '9') {
      return false;
    }
  }
  return dots == 3;
}

}  // namespace

bool s3_dns_compatible(const std::string& bucket) {
  if (bucket.size() < 3 || bucket.size() > 63) return false;
  if (!is_lower_alnum(bucket.front()) || !is_lower_alnum(bucket.back())) return false;
  for (std::size_t i = 0; i < bucket.size(); ++i) {
    const char c = bucket[i];
    if (!is_lower_alnum(c) && c != '-' && c != '.') return false;
    // Every dot-separated label must start and end with a letter or digit.
    if (c == '.' && (bucket[i - 1] == '.' || bucket[i - 1] == '-' || bucket[i + 1] == '-')) {
      return false;
    }
  }
  return !looks_like_ipv4(bucket);
}

bool has_dot_segment(std::string_view key) {
  for (std::size_t start = 0; start <= key.size();) {
    const std::size_t end = std::min(key.find('/', start), key.size());
    const std::string_view segment = key.substr(start, end - start);
    if (segment == "." || segment == "..") return true;
    start = end + 1;
  }
  return false;
}

std::string s3_encode_key(const std::string& key) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : key) {
    const bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_' || c == '~' || c == '/';
    if (keep) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

RemoteLocation resolve_s3(const std::string& name, const S3Settings& s, const EnvLookup& env) {
  static constexpr std::string_view kScheme = "s3://";
  if (name.rfind(kScheme, 0) != 0) throw IoError(name + ": not an s3:// name");
  const std::string rest = name.substr(kScheme.size());
  const auto slash = rest.find('/');
  const std::string bucket = rest.substr(0, slash);
  const std::string key = slash == std::string::npos ? "" : rest.substr(slash + 1);
  if (bucket.empty()) throw IoError(name + ": no bucket name (expected s3://BUCKET/KEY)");
  if (key.empty()) throw IoError(name + ": no object key (expected s3://BUCKET/KEY)");

  // The config's errors name a file or profile; the model's name says what it was read for.
  const AwsConfig aws = [&] {
    try {
      return load_aws_config(env);
    } catch (const IoError& e) {
      throw IoError(name + ": " + e.what());
    }
  }();
  const bool dns = s3_dns_compatible(bucket);
  const bool want_path = s.path_style || (!s.virtual_host && aws.addressing_style == "path");
  const bool want_virtual = !s.path_style && (s.virtual_host || aws.addressing_style == "virtual");
  // Bucket names outside the DNS rules (legacy upper case, underscores) are only reachable by
  // path; they are encoded like a key segment.
  const std::string path_bucket = s3_encode_key(bucket);
  const std::string path_key = s3_encode_key(key);

  RemoteLocation loc;
  loc.name = name;
  loc.s3 = true;
  loc.path_as_is = has_dot_segment(key);
  if (aws.endpoint_url.empty()) {
    const std::string domain =
        aws.region.rfind("cn-", 0) == 0 ? "amazonaws.com.cn" : "amazonaws.com";
    const std::string host = "s3." + aws.region + "." + domain;
    // Dots in a bucket name break the *.s3.REGION.amazonaws.com certificate: path style, unless
    // virtual-host style is asked for explicitly.
    const bool virtual_host =
        dns && !want_path && (want_virtual || bucket.find('.') == std::string::npos);
    loc.url = virtual_host ? "https://" + bucket + "." + host + "/" + path_key
                           : "https://" + host + "/" + path_bucket + "/" + path_key;
  } else {
    std::string endpoint = aws.endpoint_url;
    const auto scheme_end = endpoint.find("://");
    const std::string scheme =
        scheme_end == std::string::npos ? "" : endpoint.substr(0, scheme_end);
    if (scheme != "http" && scheme != "https") {
      throw IoError(name + ": the S3 endpoint '" + endpoint +
                    "' is not an http:// or https:// URL");
    }
    while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
    if (want_virtual && dns) {
      // scheme://BUCKET.HOST[:PORT][/base path]/KEY
      const std::size_t host_at = scheme_end + 3;
      loc.url =
          endpoint.substr(0, host_at) + bucket + "." + endpoint.substr(host_at) + "/" + path_key;
    } else {
      loc.url = endpoint + "/" + path_bucket + "/" + path_key;
    }
  }

  if (!s.anonymous) {
    if (aws.access_key_id.empty()) {
      throw IoError(name +
                    ": no AWS credentials (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a "
                    "profile in ~/.aws/credentials; -o s3_anonymous for public buckets)");
    }
    loc.auth.aws_region = aws.region;
    loc.auth.aws_access_key_id = aws.access_key_id;
    loc.auth.aws_secret_access_key = aws.secret_access_key;
    loc.auth.aws_session_token = aws.session_token;
  }
  return loc;
}

}  // namespace ggufs
