// AWS credentials, region and endpoint for s3:// models, found where and in the order the AWS CLI
// finds them (AWS CLI documentation: "Configuration and credential file settings" and
// "Environment variables to configure the AWS CLI").
#pragma once

#include <string>

#include "ggufs/remote_location.h"

namespace ggufs {

/// The AWS settings of one profile, as the AWS CLI would use them for S3. Secrets live only in
/// access_key_id, secret_access_key and session_token; no message shows them.
struct AwsConfig {
  std::string profile;  ///< the profile read: $AWS_PROFILE, else "default"
  /// Empty when no credentials were found anywhere (the caller decides whether that is an error).
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  ///< temporary credentials only; else empty
  std::string region;         ///< never empty: "us-east-1" when nothing sets it
  /// Custom endpoint (MinIO, R2, Ceph, moto), e.g. "http://127.0.0.1:9000"; empty: AWS itself.
  std::string endpoint_url;
  /// The profile's nested `s3 =` / `  addressing_style = …`: "auto" (the default), "path" or
  /// "virtual".
  std::string addressing_style = "auto";
};

/// Resolves the settings as the AWS CLI does:
/// - credentials: $AWS_ACCESS_KEY_ID, $AWS_SECRET_ACCESS_KEY (and $AWS_SESSION_TOKEN) when both
///   key and secret are set; else the profile's aws_access_key_id, aws_secret_access_key (and
///   aws_session_token) in the credentials file ($AWS_SHARED_CREDENTIALS_FILE, default
///   $HOME/.aws/credentials, section [NAME]); else in the config file ($AWS_CONFIG_FILE, default
///   $HOME/.aws/config, section [profile NAME], or [default] for the default profile).
/// - region: $AWS_REGION, $AWS_DEFAULT_REGION, the profile's `region`, else "us-east-1".
/// - endpoint: $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, the `s3 = / endpoint_url` of the
///   profile's `services` section, the profile's nested `s3 = / endpoint_url`, the profile's
///   `endpoint_url`; none at all when $AWS_IGNORE_CONFIGURED_ENDPOINT_URLS is "true" or the
///   profile says ignore_configured_endpoint_urls = true.
/// A profile's settings are those of its config-file section overlaid with its credentials-file
/// section, as botocore merges them; names are case-insensitive, values are not. Files are read
/// as Python's configparser reads them (no inline comments; indented lines continue a value),
/// through libinih. Missing files count as empty.
/// Throws IoError (one line, never a secret) when $AWS_PROFILE names a profile in neither file,
/// when a file exists but cannot be read or parsed (naming the file and the line), or when a
/// profile holds a key id without its secret.
AwsConfig load_aws_config(const EnvLookup& env);

}  // namespace ggufs
