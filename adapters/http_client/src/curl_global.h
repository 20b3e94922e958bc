// Private to adapters/http_client: what its two libcurl users (the HTTP client and the SMTP
// sender) share. curl_global_init is not thread-safe and must run once before any handle: every
// call that makes a handle goes through CurlGlobalInit first (one function-local static for the
// whole library, so the two users never race on it).
#pragma once

#include <curl/curl.h>

namespace pulse::http_client {

inline bool CurlGlobalInit() {
  static const bool ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
  return ok;
}

struct CurlListDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

}  // namespace pulse::http_client
