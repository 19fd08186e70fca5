// Remote model names (http://, https://, s3://, hf://) and what they resolve to: the HTTP(S)
// URL that range requests go to and the credentials they carry.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace ggufs {

/// How requests to a remote file are authenticated. Secrets live only here and in libcurl's
/// options; no message, log line or cache key shows them.
struct RemoteAuth {
  /// "Authorization: Bearer TOKEN" (http(s) with -o token_file, hf:// with HF_TOKEN). libcurl
  /// sends it to the URL's own host and port only, never to a redirect's other host.
  std::string bearer_token;
  /// AWS Signature Version 4, signed by libcurl (CURLOPT_AWS_SIGV4 "aws:amz:REGION:s3"):
  /// empty region means no signing (plain or anonymous requests).
  std::string aws_region;
  std::string aws_access_key_id;
  std::string aws_secret_access_key;
  std::string aws_session_token;  ///< sent as x-amz-security-token (temporary credentials)
};

/// A remote file resolved: where its bytes are fetched and how.
struct RemoteLocation {
  std::string name;  ///< as the user gave it (s3://b/k, hf://o/r/p, https://…): for messages
  std::string url;   ///< the http(s) URL of the range requests
  RemoteAuth auth;
  bool s3 = false;  ///< S3 answers: error bodies carry an S3 error code (<Code>NoSuchKey</Code>)
  /// Send the URL's path unnormalized (libcurl's CURLOPT_PATH_AS_IS): an S3 key with a "." or
  /// ".." segment ("a/../b") names its own object, which removing dot segments (RFC 3986
  /// section 5.2.4) would change. Only then: recent libcurl (8.14, Debian 13's) refuses SigV4
  /// signing with it (lib/http_aws_sigv4.c: "Cannot use sigv4 authentication with path-as-is
  /// flag"), where libcurl 7.88 (Debian 12's) signs it.
  bool path_as_is = false;
};

/// How s3:// names become URLs (-o s3_path_style, -o s3_virtual_host, -o s3_anonymous).
struct S3Settings {
  bool path_style = false;    ///< ENDPOINT/BUCKET/KEY even on AWS
  bool virtual_host = false;  ///< BUCKET.ENDPOINT-HOST/KEY even on a custom endpoint
  bool anonymous = false;     ///< unsigned requests (public buckets): no credentials looked up
};

/// Reads an environment variable; nullopt when unset. Tests pass their own.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

/// The process environment (std::getenv).
EnvLookup process_env();

/// Whether `name` is a remote model name: http://, https://, s3:// or hf://.
bool is_remote(const std::string& name);

/// `url` as it may be shown: without its query string (which may hold a presigned signature)
/// nor user:password@. "https://h/p?X-Amz-Signature=…" → "https://h/p?…".
std::string display_url(const std::string& url);

/// Resolves a remote model name.
/// - http(s)://…: the URL itself, with `bearer_token` (from -o token_file / GGUFS_HTTP_TOKEN).
/// - s3://BUCKET/KEY: AWS credentials, region and endpoint as the AWS CLI finds them
///   (aws_config.h); virtual-host style on AWS, path style on custom endpoints (see S3Settings).
/// - hf://OWNER/REPO[@REVISION]/PATH: ${HF_ENDPOINT:-https://huggingface.co}/OWNER/REPO/resolve/
///   REVISION/PATH (revision main by default, URL-encoded), token from HF_TOKEN, else
///   $HF_HOME/token (default ~/.cache/huggingface/token).
/// Throws IoError (exit code 2) naming `name` when it is malformed or the credentials cannot be
/// read; the message never holds a secret.
RemoteLocation resolve_remote(const std::string& name, const S3Settings& s3,
                              const std::string& bearer_token, const EnvLookup& env);

}  // namespace ggufs
