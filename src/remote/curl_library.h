// libcurl, loaded when the first remote model is opened instead of linked: linking it makes
// every start of ggufs load it with its ~30 libraries (OpenLDAP, GnuTLS, Kerberos, RTMP, SSH,
// ...), whose start-up costs about 20 ms of every mount, while only remote models use it.
#pragma once

#include <curl/curl.h>

namespace ggufs {

/// The libcurl functions ggufs calls, with their curl.h types (the API of libcurl.so.4).
struct CurlLibrary {
  decltype(&::curl_easy_init) easy_init;
  /// Variadic as in curl.h: pass the value as the type the option's documentation names
  /// (long, a pointer, curl_off_t, a callback); curl.h's compile-time check of that
  /// (the curl_easy_setopt macro) does not apply through a pointer.
  decltype(&::curl_easy_setopt) easy_setopt;
  decltype(&::curl_easy_cleanup) easy_cleanup;
  decltype(&::curl_easy_strerror) easy_strerror;
  decltype(&::curl_slist_append) slist_append;
  decltype(&::curl_slist_free_all) slist_free_all;
  decltype(&::curl_multi_init) multi_init;
  decltype(&::curl_multi_add_handle) multi_add_handle;
  decltype(&::curl_multi_remove_handle) multi_remove_handle;
  decltype(&::curl_multi_perform) multi_perform;
  decltype(&::curl_multi_poll) multi_poll;
  decltype(&::curl_multi_info_read) multi_info_read;
  decltype(&::curl_multi_cleanup) multi_cleanup;
};

/// libcurl.so.4, loaded with dlopen and initialised (curl_global_init) on the first call, from
/// any thread. Throws IoError when it cannot be loaded or lacks one of the functions (the
/// message names the library and says why).
const CurlLibrary& curl_library();

}  // namespace ggufs
