// libcurl, loaded when the first remote model is opened instead of linked: linking it makes
// every start of ggufs load it with its ~30 libraries (OpenLDAP, GnuTLS, Kerberos, RTMP, SSH,
// ...), whose start-up costs about 20 ms of every mount, while only remote models use it.
#pragma once

#include <curl/curl.h>

namespace ggufs {

/// The libcurl functions ggufs calls, by their names without "curl_": one list serves the
/// pointers below and their loading (curl_library.cpp).
// clang-format off
#define GGUFS_CURL_FUNCTIONS(X) \
  X(easy_init) \
  X(easy_setopt) \
  X(easy_cleanup) \
  X(easy_strerror) \
  X(slist_append) \
  X(slist_free_all) \
  X(multi_init) \
  X(multi_add_handle) \
  X(multi_remove_handle) \
  X(multi_perform) \
  X(multi_poll) \
  X(multi_info_read) \
  X(multi_cleanup)
// clang-format on

/// Pointers to those functions, with their curl.h types (the API of libcurl.so.4). easy_setopt
/// is variadic as in curl.h: pass the value as the type the option's documentation names
/// (long, a pointer, curl_off_t, a callback); curl.h's compile-time check of that (the
/// curl_easy_setopt macro) does not apply through a pointer.
struct CurlLibrary {
#define GGUFS_CURL_POINTER(name) decltype(&::curl_##name) name;
  GGUFS_CURL_FUNCTIONS(GGUFS_CURL_POINTER)
#undef GGUFS_CURL_POINTER
};

/// libcurl.so.4, loaded with dlopen and initialised (curl_global_init) on the first call, from
/// any thread. Throws IoError when it cannot be loaded or lacks one of the functions (the
/// message names the library and says why).
const CurlLibrary& curl_library();

}  // namespace ggufs
