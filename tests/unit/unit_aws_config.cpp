// AWS settings and s3:// URLs. The expected values are the AWS CLI's documented rules
// ("Configuration and credential file settings", "Environment variables to configure the AWS
// CLI", S3 "Virtual hosting of buckets" and bucket naming rules), written out literally.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "ggufs/aws_config.h"
#include "ggufs/error.h"
#include "ggufs/s3_location.h"
#include "test_util.h"

namespace ggufs::test {
namespace {

// A fake environment with HOME in a fresh folder, and ~/.aws files written on demand.
class AwsEnv {
 public:
  AwsEnv() { vars_["HOME"] = home_.path().string(); }
  AwsEnv& set(const std::string& name, const std::string& value) {
    vars_[name] = value;
    return *this;
  }
  void credentials(const std::string& text) { write(".aws/credentials", text); }
  void config(const std::string& text) { write(".aws/config", text); }
  std::filesystem::path write(const std::string& rel, const std::string& text) {
    const auto p = home_.path() / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p;
  }
  EnvLookup lookup() const {
    return [vars = vars_](const std::string& name) -> std::optional<std::string> {
      const auto it = vars.find(name);
      if (it == vars.end()) return std::nullopt;
      return it->second;
    };
  }
  AwsConfig load() const { return load_aws_config(lookup()); }
  std::string home() const { return home_.path().string(); }

 private:
  TempDir home_;
  std::map<std::string, std::string> vars_;
};

// The IoError message of `f`, or "" when it does not throw.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const IoError& e) {
    return e.what();
  }
  return "";
}

TEST(AwsConfig, NothingConfigured) {
  AwsEnv env;
  const AwsConfig c = env.load();
  EXPECT_EQ(c.profile, "default");
  EXPECT_EQ(c.access_key_id, "");
  EXPECT_EQ(c.secret_access_key, "");
  EXPECT_EQ(c.region, "us-east-1");
  EXPECT_EQ(c.endpoint_url, "");
  EXPECT_EQ(c.addressing_style, "auto");
}

TEST(AwsConfig, EnvironmentCredentialsWinOverTheProfile) {
  AwsEnv env;
  env.credentials("[default]\naws_access_key_id = FILEKEY\naws_secret_access_key = FILESECRET\n");
  env.set("AWS_ACCESS_KEY_ID", "ENVKEY").set("AWS_SECRET_ACCESS_KEY", "ENVSECRET");
  env.set("AWS_SESSION_TOKEN", "ENVTOKEN");
  const AwsConfig c = env.load();
  EXPECT_EQ(c.access_key_id, "ENVKEY");
  EXPECT_EQ(c.secret_access_key, "ENVSECRET");
  EXPECT_EQ(c.session_token, "ENVTOKEN");
}

TEST(AwsConfig, AKeyWithoutSecretInTheEnvironmentFallsBackToTheProfile) {
  AwsEnv env;
  env.credentials("[default]\naws_access_key_id = FILEKEY\naws_secret_access_key = FILESECRET\n");
  env.set("AWS_ACCESS_KEY_ID", "ENVKEY");
  const AwsConfig c = env.load();
  EXPECT_EQ(c.access_key_id, "FILEKEY");
  EXPECT_EQ(c.secret_access_key, "FILESECRET");
  EXPECT_EQ(c.session_token, "");
}

TEST(AwsConfig, CredentialsFileWinsOverConfigFile) {
  AwsEnv env;
  env.credentials("[dev]\naws_access_key_id = CREDKEY\naws_secret_access_key = CREDSECRET\n");
  env.config(
      "[profile dev]\naws_access_key_id = CONFKEY\naws_secret_access_key = CONFSECRET\n"
      "region = eu-west-3\n");
  env.set("AWS_PROFILE", "dev");
  const AwsConfig c = env.load();
  EXPECT_EQ(c.profile, "dev");
  EXPECT_EQ(c.access_key_id, "CREDKEY");
  EXPECT_EQ(c.secret_access_key, "CREDSECRET");
  EXPECT_EQ(c.region, "eu-west-3");
}

TEST(AwsConfig, CredentialsFromTheConfigFileAlone) {
  AwsEnv env;
  env.config(
      "[default]\nregion = ap-south-1\n\n"
      "[profile dev]\naws_access_key_id = CONFKEY\naws_secret_access_key = CONFSECRET\n"
      "aws_session_token = CONFTOKEN\n");
  env.set("AWS_PROFILE", "dev");
  const AwsConfig c = env.load();
  EXPECT_EQ(c.access_key_id, "CONFKEY");
  EXPECT_EQ(c.secret_access_key, "CONFSECRET");
  EXPECT_EQ(c.session_token, "CONFTOKEN");
  EXPECT_EQ(c.region, "us-east-1");  // [default]'s region is not dev's
}

TEST(AwsConfig, DefaultProfileSections) {
  AwsEnv env;
  // The credentials file names profiles bare; the config file as [default] and [profile NAME].
  env.credentials("[default]\naws_access_key_id = K\naws_secret_access_key = S\n");
  env.config("[default]\nregion = sa-east-1\n[profile other]\nregion = eu-north-1\n");
  const AwsConfig c = env.load();
  EXPECT_EQ(c.access_key_id, "K");
  EXPECT_EQ(c.region, "sa-east-1");
  // "[dev]" in the config file is not the profile dev.
  AwsEnv env2;
  env2.config("[dev]\nregion = eu-north-1\n");
  env2.set("AWS_PROFILE", "dev");
  EXPECT_NE(error_of([&] { env2.load(); }), "");
}

TEST(AwsConfig, FileLocationsFromTheEnvironment) {
  AwsEnv env;
  const auto cred = env.write("elsewhere/creds",
                              "[p]\naws_access_key_id = K2\n"
                              "aws_secret_access_key = S2\n");
  const auto conf = env.write("elsewhere/conf", "[profile p]\nregion = ca-central-1\n");
  env.credentials("[p]\naws_access_key_id = HOMEKEY\naws_secret_access_key = HOMESECRET\n");
  env.set("AWS_SHARED_CREDENTIALS_FILE", cred.string()).set("AWS_CONFIG_FILE", conf.string());
  env.set("AWS_PROFILE", "p");
  const AwsConfig c = env.load();
  EXPECT_EQ(c.access_key_id, "K2");
  EXPECT_EQ(c.region, "ca-central-1");
}

TEST(AwsConfig, RegionPrecedence) {
  AwsEnv env;
  env.config("[default]\nregion = eu-west-1\n");
  EXPECT_EQ(env.load().region, "eu-west-1");
  env.set("AWS_DEFAULT_REGION", "eu-west-2");
  EXPECT_EQ(env.load().region, "eu-west-2");
  env.set("AWS_REGION", "eu-central-1");
  EXPECT_EQ(env.load().region, "eu-central-1");
}

TEST(AwsConfig, EndpointPrecedence) {
  AwsEnv env;
  env.config(
      "[default]\nendpoint_url = http://global:1\nservices = local\n"
      "[services local]\ns3 =\n  endpoint_url = http://service:2\n");
  EXPECT_EQ(env.load().endpoint_url, "http://service:2");
  env.set("AWS_ENDPOINT_URL", "http://env-global:3");
  EXPECT_EQ(env.load().endpoint_url, "http://env-global:3");
  env.set("AWS_ENDPOINT_URL_S3", "http://env-s3:4");
  EXPECT_EQ(env.load().endpoint_url, "http://env-s3:4");
  env.set("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true");
  EXPECT_EQ(env.load().endpoint_url, "");

  AwsEnv plain;
  plain.config("[default]\nendpoint_url = http://global:1\n");
  EXPECT_EQ(plain.load().endpoint_url, "http://global:1");
}

TEST(AwsConfig, NestedS3Settings) {
  AwsEnv env;
  env.config(
      "[profile minio]\nregion = us-west-2\ns3 =\n  addressing_style = path\n"
      "  endpoint_url = http://127.0.0.1:9000\nendpoint_url = http://other:1\n");
  env.set("AWS_PROFILE", "minio");
  const AwsConfig c = env.load();
  EXPECT_EQ(c.addressing_style, "path");
  EXPECT_EQ(c.endpoint_url, "http://127.0.0.1:9000");
  EXPECT_EQ(c.region, "us-west-2");

  AwsEnv bad;
  bad.config("[default]\ns3 =\n  addressing_style = sideways\n");
  const std::string msg = error_of([&] { bad.load(); });
  EXPECT_NE(msg.find("sideways"), std::string::npos) << msg;
}

TEST(AwsConfig, ValuesAreReadAsConfigparserReadsThem) {
  AwsEnv env;
  // Names are case-insensitive, ';' and '#' inside a value belong to it, comments start a
  // line, and a long session token is kept whole.
  const std::string token(1500, 'T');
  env.credentials(
      "# comment\n; comment\n[default]\nAWS_Access_Key_ID = K;1\n"
      "aws_secret_access_key : S#2\naws_session_token = " +
      token + "\n");
  const AwsConfig c = env.load();
  EXPECT_EQ(c.access_key_id, "K;1");
  EXPECT_EQ(c.secret_access_key, "S#2");
  EXPECT_EQ(c.session_token, token);
}

TEST(AwsConfig, MissingProfileIsAnError) {
  AwsEnv env;
  env.credentials("[default]\naws_access_key_id = K\naws_secret_access_key = S\n");
  env.set("AWS_PROFILE", "nosuch");
  const std::string msg = error_of([&] { env.load(); });
  EXPECT_NE(msg.find("'nosuch'"), std::string::npos) << msg;
  EXPECT_NE(msg.find(env.home() + "/.aws/credentials"), std::string::npos) << msg;
  EXPECT_NE(msg.find(env.home() + "/.aws/config"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  // Asked for by name, even "default" must exist.
  AwsEnv none;
  none.set("AWS_PROFILE", "default");
  EXPECT_NE(error_of([&] { none.load(); }), "");
}

TEST(AwsConfig, ParseErrorsNameTheFileAndLine) {
  AwsEnv env;
  env.credentials("[default]\naws_access_key_id = K\naws_secret_access_key = S3CR3T\nno equals\n");
  std::string msg = error_of([&] { env.load(); });
  EXPECT_NE(msg.find(env.home() + "/.aws/credentials: line 4"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("S3CR3T"), std::string::npos) << msg;

  AwsEnv before;  // a setting before any [section]
  before.config("region = eu-west-1\n");
  msg = error_of([&] { before.load(); });
  EXPECT_NE(msg.find("/.aws/config: line 1"), std::string::npos) << msg;

  AwsEnv nested;  // a nested line without '='
  nested.config("[default]\ns3 =\n  addressing_style = path\n  oops\n");
  msg = error_of([&] { nested.load(); });
  EXPECT_NE(msg.find("/.aws/config: line 4"), std::string::npos) << msg;

  AwsEnv duplicate;
  duplicate.config("[default]\nregion = a\nx = 1\nregion = b\n");
  msg = error_of([&] { duplicate.load(); });
  EXPECT_NE(msg.find("/.aws/config: line 4"), std::string::npos) << msg;
}

TEST(AwsConfig, HalfAKeyPairInAFileIsAnErrorWithoutTheSecret) {
  AwsEnv env;
  env.credentials("[default]\naws_secret_access_key = S3CR3T\n");
  const std::string msg = error_of([&] { env.load(); });
  EXPECT_NE(msg.find("without aws_access_key_id"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("S3CR3T"), std::string::npos) << msg;
}

TEST(AwsConfig, AnUnreadableFileIsAnError) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads any file";
  AwsEnv env;
  env.credentials("[default]\n");
  std::filesystem::permissions(env.home() + "/.aws/credentials", std::filesystem::perms::none);
  EXPECT_NE(error_of([&] { env.load(); }).find("cannot open"), std::string::npos);
}

// --- s3:// names ---

RemoteLocation resolve(const AwsEnv& env, const std::string& name, S3Settings s = {}) {
  return resolve_s3(name, s, env.lookup());
}

AwsEnv& with_keys(AwsEnv& env) {
  return env.set("AWS_ACCESS_KEY_ID", "AKID").set("AWS_SECRET_ACCESS_KEY", "S3CR3T");
}

TEST(S3Location, AwsVirtualHostStyle) {
  AwsEnv env;
  with_keys(env).set("AWS_REGION", "eu-west-1");
  const RemoteLocation loc = resolve(env, "s3://my-bucket/models/m.gguf");
  EXPECT_EQ(loc.name, "s3://my-bucket/models/m.gguf");
  EXPECT_EQ(loc.url, "https://my-bucket.s3.eu-west-1.amazonaws.com/models/m.gguf");
  EXPECT_TRUE(loc.s3);
  EXPECT_EQ(loc.auth.aws_region, "eu-west-1");
  EXPECT_EQ(loc.auth.aws_access_key_id, "AKID");
  EXPECT_EQ(loc.auth.aws_secret_access_key, "S3CR3T");
  EXPECT_EQ(loc.auth.aws_session_token, "");
  EXPECT_EQ(loc.auth.bearer_token, "");
}

TEST(S3Location, AwsPathStyle) {
  AwsEnv env;
  with_keys(env);
  S3Settings path;
  path.path_style = true;
  EXPECT_EQ(resolve(env, "s3://my-bucket/m.gguf", path).url,
            "https://s3.us-east-1.amazonaws.com/my-bucket/m.gguf");
  // From the profile too.
  env.config("[default]\ns3 =\n  addressing_style = path\n");
  EXPECT_EQ(resolve(env, "s3://my-bucket/m.gguf").url,
            "https://s3.us-east-1.amazonaws.com/my-bucket/m.gguf");
  // -o s3_virtual_host wins over the profile.
  S3Settings vhost;
  vhost.virtual_host = true;
  EXPECT_EQ(resolve(env, "s3://my-bucket/m.gguf", vhost).url,
            "https://my-bucket.s3.us-east-1.amazonaws.com/m.gguf");
}

TEST(S3Location, BucketsThatCannotBeHostNamesUsePathStyle) {
  AwsEnv env;
  with_keys(env).set("AWS_REGION", "us-west-2");
  EXPECT_EQ(resolve(env, "s3://my.dotted.bucket/m.gguf").url,
            "https://s3.us-west-2.amazonaws.com/my.dotted.bucket/m.gguf");
  EXPECT_EQ(resolve(env, "s3://Legacy_Bucket/m.gguf").url,
            "https://s3.us-west-2.amazonaws.com/Legacy_Bucket/m.gguf");
  EXPECT_EQ(resolve(env, "s3://192.168.1.1/m.gguf").url,
            "https://s3.us-west-2.amazonaws.com/192.168.1.1/m.gguf");
  EXPECT_EQ(resolve(env, "s3://ab/m.gguf").url, "https://s3.us-west-2.amazonaws.com/ab/m.gguf");
  EXPECT_TRUE(s3_dns_compatible("abc"));
  EXPECT_TRUE(s3_dns_compatible("a.b-c.d1"));
  EXPECT_FALSE(s3_dns_compatible("a..b"));
  EXPECT_FALSE(s3_dns_compatible("a-.b"));
  EXPECT_FALSE(s3_dns_compatible("a.-b"));
  EXPECT_FALSE(s3_dns_compatible("-abc"));
  EXPECT_FALSE(s3_dns_compatible("abc-"));
  EXPECT_FALSE(s3_dns_compatible(std::string(64, 'a')));
  EXPECT_TRUE(s3_dns_compatible(std::string(63, 'a')));
}

TEST(S3Location, ChinaRegions) {
  AwsEnv env;
  with_keys(env).set("AWS_REGION", "cn-north-1");
  EXPECT_EQ(resolve(env, "s3://b-1/k").url, "https://b-1.s3.cn-north-1.amazonaws.com.cn/k");
}

TEST(S3Location, CustomEndpoint) {
  AwsEnv env;
  with_keys(env).set("AWS_ENDPOINT_URL", "http://127.0.0.1:9000/");
  EXPECT_EQ(resolve(env, "s3://models/m.gguf").url, "http://127.0.0.1:9000/models/m.gguf");
  env.set("AWS_ENDPOINT_URL", "http://localhost:9000");
  S3Settings vhost;
  vhost.virtual_host = true;
  EXPECT_EQ(resolve(env, "s3://models/m.gguf", vhost).url, "http://models.localhost:9000/m.gguf");
  // A base path on the endpoint stays after the host.
  env.set("AWS_ENDPOINT_URL_S3", "https://gw.example.com/s3");
  EXPECT_EQ(resolve(env, "s3://models/m.gguf").url, "https://gw.example.com/s3/models/m.gguf");
  EXPECT_EQ(resolve(env, "s3://models/m.gguf", vhost).url,
            "https://models.gw.example.com/s3/m.gguf");
  // addressing_style = virtual in the profile.
  AwsEnv prof;
  with_keys(prof);
  prof.config(
      "[default]\nendpoint_url = http://localhost:9000\ns3 =\n  addressing_style = virtual\n");
  EXPECT_EQ(resolve(prof, "s3://models/m.gguf").url, "http://models.localhost:9000/m.gguf");
  S3Settings path;
  path.path_style = true;
  EXPECT_EQ(resolve(prof, "s3://models/m.gguf", path).url, "http://localhost:9000/models/m.gguf");

  env.set("AWS_ENDPOINT_URL_S3", "ftp://x");
  const std::string msg = error_of([&] { resolve(env, "s3://models/m.gguf"); });
  EXPECT_NE(msg.find("ftp://x"), std::string::npos) << msg;
}

TEST(S3Location, KeysArePercentEncodedPerSegment) {
  AwsEnv env;
  with_keys(env).set("AWS_ENDPOINT_URL", "http://h:1");
  EXPECT_EQ(resolve(env, "s3://b/dir one/a+b=c&d?e#f%g.gguf").url,
            "http://h:1/b/dir%20one/a%2Bb%3Dc%26d%3Fe%23f%25g.gguf");
  EXPECT_EQ(resolve(env, "s3://b/Az09-._~/x").url, "http://h:1/b/Az09-._~/x");
  EXPECT_EQ(resolve(env, "s3://b/caf\xc3\xa9:*").url, "http://h:1/b/caf%C3%A9%3A%2A");
  EXPECT_EQ(s3_encode_key("a//b/"), "a//b/");
}

// RFC 3986 section 5.2.4 removes "." and ".." segments from a URL path; S3 keeps them in the
// key. Only those keys are sent unnormalized: libcurl 8 will not sign a path-as-is request.
TEST(S3Location, OnlyKeysWithDotSegmentsAreSentAsTheyAre) {
  AwsEnv env;
  with_keys(env).set("AWS_ENDPOINT_URL", "http://h:1");
  for (const char* key : {"a/../m.gguf", "./m.gguf", "a/./m.gguf", "a/..", "..", "a//./m"}) {
    const RemoteLocation loc = resolve(env, std::string("s3://b/") + key);
    EXPECT_TRUE(loc.path_as_is) << key;
    EXPECT_EQ(loc.url, std::string("http://h:1/b/") + key);
  }
  for (const char* key : {"m.gguf", "a/m.gguf", "a..b/m.gguf", ".hidden/m", "a/.../m", "a//m"}) {
    EXPECT_FALSE(resolve(env, std::string("s3://b/") + key).path_as_is) << key;
  }
}

TEST(S3Location, Anonymous) {
  AwsEnv env;
  S3Settings anon;
  anon.anonymous = true;
  const RemoteLocation loc = resolve(env, "s3://public-bucket/m.gguf", anon);
  EXPECT_EQ(loc.url, "https://public-bucket.s3.us-east-1.amazonaws.com/m.gguf");
  EXPECT_EQ(loc.auth.aws_region, "");
  EXPECT_EQ(loc.auth.aws_access_key_id, "");
  EXPECT_EQ(loc.auth.aws_secret_access_key, "");
  with_keys(env);
  EXPECT_EQ(resolve(env, "s3://public-bucket/m.gguf", anon).auth.aws_access_key_id, "");
}

TEST(S3Location, Refusals) {
  AwsEnv env;
  std::string msg = error_of([&] { resolve(env, "s3://bucket/m.gguf"); });
  EXPECT_EQ(msg,
            "s3://bucket/m.gguf: no AWS credentials (set AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY, or a profile in ~/.aws/credentials; -o s3_anonymous for "
            "public buckets)");
  with_keys(env);
  msg = error_of([&] { resolve(env, "s3:///m.gguf"); });
  EXPECT_NE(msg.find("s3:///m.gguf: no bucket"), std::string::npos) << msg;
  env.set("AWS_PROFILE", "nosuch");
  msg = error_of([&] { resolve(env, "s3://bucket/m.gguf"); });
  EXPECT_EQ(msg.rfind("s3://bucket/m.gguf: AWS profile 'nosuch'", 0), 0u) << msg;
  env.set("AWS_PROFILE", "");
  msg = error_of([&] { resolve(env, "s3://bucket"); });
  EXPECT_NE(msg.find("s3://bucket: no object key"), std::string::npos) << msg;
  msg = error_of([&] { resolve(env, "s3://bucket/"); });
  EXPECT_NE(msg.find("s3://bucket/: no object key"), std::string::npos) << msg;
  // No message shows a secret.
  for (const char* name : {"s3://bucket", "s3:///k"}) {
    EXPECT_EQ(error_of([&] { resolve(env, name); }).find("S3CR3T"), std::string::npos);
  }
}

}  // namespace
}  // namespace ggufs::test
