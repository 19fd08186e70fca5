// s3://BUCKET/KEY names: the HTTP(S) URL their range requests go to and the AWS credentials
// that sign them.
#pragma once

#include <string>
#include <string_view>

#include "ggufs/remote_location.h"

namespace ggufs {

/// Resolves `name` = "s3://BUCKET/KEY" with the AWS CLI's settings (load_aws_config):
/// - no endpoint configured (AWS): https://BUCKET.s3.REGION.amazonaws.com/KEY (virtual-host
///   style), or https://s3.REGION.amazonaws.com/BUCKET/KEY (path style) when s.path_style, the
///   profile's s3 addressing_style = path, or a bucket name that is not DNS-compatible or has dots
///   (which the *.s3 certificate cannot cover) asks for it; amazonaws.com.cn for cn-* regions.
/// - a custom endpoint (MinIO, R2, Ceph, moto): ENDPOINT/BUCKET/KEY, or
///   SCHEME://BUCKET.HOST[:PORT]/KEY when s.virtual_host or addressing_style = virtual asks for
///   it (and the bucket name is DNS-compatible).
/// s.path_style wins over s.virtual_host, and both over the profile. KEY is percent-encoded per
/// segment as S3 signs it: A-Z a-z 0-9 - . _ ~ and '/' kept, every other byte %XX.
/// auth carries the region and credentials (SigV4), or nothing when s.anonymous.
/// Throws IoError naming `name` when the bucket or key is empty, the endpoint is not http(s)://,
/// or no credentials are found and s.anonymous is not set; load_aws_config's errors come prefixed
/// with `name`.
RemoteLocation resolve_s3(const std::string& name, const S3Settings& s, const EnvLookup& env);

/// Whether `bucket` can be a host name label sequence for virtual-host style (S3 bucket naming
/// rules: 3 to 63 of a-z 0-9 . -, starting and ending with a letter or digit, no "..", not an
/// IPv4 address).
bool s3_dns_compatible(const std::string& bucket);

/// Whether `key` has a segment (between slashes) that is "." or "..": a dot segment, which a URL
/// path loses when normalized (RFC 3986 section 5.2.4), though S3 keeps it in the key.
bool has_dot_segment(std::string_view key);

/// `key` percent-encoded as S3 expects in a URL path (see resolve_s3).
std::string s3_encode_key(const std::string& key);

}  // namespace ggufs
