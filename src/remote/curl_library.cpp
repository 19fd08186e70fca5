#include "curl_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <mutex>
#include <string>

#include "ggufs/error.h"
#include "ggufs/platform.h"

namespace ggufs {
namespace {

// libcurl's soname: the ABI curl.h describes since libcurl 7.16 (Debian's libcurl4; platform.h).
constexpr const char* kLibcurl = kLibcurlSoname;

template <typename Fn>
void resolve(void* lib, const char* name, Fn& out) {
  void* sym = ::dlsym(lib, name);
  if (!sym) throw IoError(fmt::format("{}: has no function {} (libcurl too old?)", kLibcurl, name));
  out = reinterpret_cast<Fn>(sym);
}

CurlLibrary load() {
  // RTLD_LOCAL: its symbols serve only these pointers. Never closed: it is needed until exit.
  void* lib = ::dlopen(kLibcurl, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = ::dlerror();
    throw IoError(fmt::format("cannot load {}, which remote models need (apt install libcurl4): {}",
                              kLibcurl, why ? why : "unknown error"));
  }
  CurlLibrary c{};
#define GGUFS_CURL_RESOLVE(name) resolve(lib, "curl_" #name, c.name);
  GGUFS_CURL_FUNCTIONS(GGUFS_CURL_RESOLVE)
#undef GGUFS_CURL_RESOLVE
  decltype(&::curl_global_init) global_init = nullptr;
  resolve(lib, "curl_global_init", global_init);
  if (const CURLcode rc = global_init(CURL_GLOBAL_DEFAULT); rc != CURLE_OK) {
    throw IoError(
        fmt::format("{}: curl_global_init failed (code {})", kLibcurl, static_cast<int>(rc)));
  }
  return c;
}

}  // namespace

const CurlLibrary& curl_library() {
  // Loaded once; a failure is not kept, so it is reported again (and retried) on the next call.
  static std::mutex mu;
  static CurlLibrary loaded{};
  static bool ok = false;
  const std::lock_guard lock(mu);
  if (!ok) {
    loaded = load();
    ok = true;
  }
  return loaded;
}

}  // namespace ggufs
