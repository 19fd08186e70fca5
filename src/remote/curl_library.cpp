#include "curl_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <mutex>
#include <string>

#include "ggufs/error.h"

namespace ggufs {
namespace {

// libcurl's soname: the ABI curl.h describes since libcurl 7.16 (Debian's libcurl4).
constexpr const char* kLibcurl = "libcurl.so.4";

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
  resolve(lib, "curl_easy_init", c.easy_init);
  resolve(lib, "curl_easy_setopt", c.easy_setopt);
  resolve(lib, "curl_easy_cleanup", c.easy_cleanup);
  resolve(lib, "curl_easy_strerror", c.easy_strerror);
  resolve(lib, "curl_slist_append", c.slist_append);
  resolve(lib, "curl_slist_free_all", c.slist_free_all);
  resolve(lib, "curl_multi_init", c.multi_init);
  resolve(lib, "curl_multi_add_handle", c.multi_add_handle);
  resolve(lib, "curl_multi_remove_handle", c.multi_remove_handle);
  resolve(lib, "curl_multi_perform", c.multi_perform);
  resolve(lib, "curl_multi_poll", c.multi_poll);
  resolve(lib, "curl_multi_info_read", c.multi_info_read);
  resolve(lib, "curl_multi_cleanup", c.multi_cleanup);
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
