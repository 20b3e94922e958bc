# Finds every third-party library and gives each one a namespaced target.
# Every library comes from the Debian 12 package cmake/install-deps.sh installs; the pitfalls
# of each are noted where it is found below.
find_package(Threads REQUIRED)
find_package(absl 20220623 REQUIRED CONFIG)
find_package(fmt 9 REQUIRED CONFIG)
find_package(RapidJSON REQUIRED CONFIG)
find_package(PkgConfig REQUIRED)
pkg_check_modules(SODIUM REQUIRED IMPORTED_TARGET libsodium)

# RapidJSON ships no target; this one is installed with the core so consumers get it too.
add_library(pulse_rapidjson INTERFACE)
target_include_directories(pulse_rapidjson SYSTEM INTERFACE ${RAPIDJSON_INCLUDE_DIRS})
target_compile_definitions(pulse_rapidjson INTERFACE RAPIDJSON_HAS_STDSTRING=1)
set_target_properties(pulse_rapidjson PROPERTIES EXPORT_NAME rapidjson)
add_library(pulse::rapidjson ALIAS pulse_rapidjson)

# libsodium ships only a pkg-config file; PulseCoreConfig.cmake recreates PkgConfig::SODIUM.
add_library(pulse_sodium INTERFACE)
target_link_libraries(pulse_sodium INTERFACE PkgConfig::SODIUM)
set_target_properties(pulse_sodium PROPERTIES EXPORT_NAME sodium)
add_library(pulse::sodium ALIAS pulse_sodium)

# Adapter and app libraries: not needed by an embedder of the core.
find_package(SQLiteCpp 3 REQUIRED CONFIG)  # target `SQLiteCpp` (no namespace)
find_package(CLI11 2 REQUIRED CONFIG)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
add_library(pulse_httplib INTERFACE)
target_link_libraries(pulse_httplib INTERFACE PkgConfig::HTTPLIB Threads::Threads)
add_library(pulse::httplib ALIAS pulse_httplib)

if(PULSE_BUILD_TESTS)
  find_package(Catch2 2 REQUIRED CONFIG)
  include(Catch)
endif()

# libcurl (OpenSSL flavour, Debian's libcurl4-openssl-dev) and OpenSSL for the HTTP client
# adapter (adapters/http_client; docs/architecture.md "The HTTP client adapter").
pkg_check_modules(CURL REQUIRED IMPORTED_TARGET libcurl)
find_package(OpenSSL REQUIRED)
add_library(pulse_curl INTERFACE)
target_link_libraries(pulse_curl INTERFACE PkgConfig::CURL OpenSSL::SSL OpenSSL::Crypto)
add_library(pulse::curl ALIAS pulse_curl)

# Boost.Beast on Asio for the HTTP server transport (Debian's libboost-dev 1.74; header-only:
# no components, Boost.System is header-only since 1.69). adapters/http/src/beast_transport.cc
# includes it (its compile alone takes ~30 s and ~630 MB), and adapters/http_client/src/
# kept_http.cc its response parser alone (a few seconds). Boost 1.74's asio/awaitable.hpp uses
# std::exchange without including <utility>: with GCC 12 in C++20, include <utility> first.
find_package(Boost 1.74 REQUIRED)
add_library(pulse_boost INTERFACE)
target_include_directories(pulse_boost SYSTEM INTERFACE ${Boost_INCLUDE_DIRS})
target_compile_definitions(pulse_boost INTERFACE BOOST_ASIO_NO_DEPRECATED BOOST_BEAST_USE_STD_STRING_VIEW)
target_link_libraries(pulse_boost INTERFACE Threads::Threads)
add_library(pulse::boost ALIAS pulse_boost)
