# pulse_add_library(NAME pulse_x ALIAS pulse::x SOURCES ... [PUBLIC_DEPS ...] [PRIVATE_DEPS ...]
#                   [INCLUDE_DIR dir])
# The one way a library target is declared (explicit source lists, no GLOB).
function(pulse_add_library)
  cmake_parse_arguments(ARG "" "NAME;ALIAS;INCLUDE_DIR" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(${ARG_NAME} ${ARG_SOURCES})
  if(ARG_ALIAS)
    add_library(${ARG_ALIAS} ALIAS ${ARG_NAME})
  endif()
  if(ARG_INCLUDE_DIR)
    target_include_directories(${ARG_NAME} PUBLIC
      $<BUILD_INTERFACE:${ARG_INCLUDE_DIR}>
      $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  endif()
  target_link_libraries(${ARG_NAME} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  set_target_properties(${ARG_NAME} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  pulse_apply_warnings(${ARG_NAME})
  pulse_precompile_headers(${ARG_NAME})
endfunction()

# pulse_add_executable(NAME x SOURCES ... [DEPS ...])
function(pulse_add_executable)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS})
  pulse_apply_warnings(${ARG_NAME})
  pulse_precompile_headers(${ARG_NAME})
endfunction()

# Unity builds of the test code (PULSE_UNITY_TESTS, on; tests/CMakeLists.txt turns it on for
# every target under tests/): a target's sources are compiled a batch of PULSE_UNITY_BATCH at a time as one unit, so Catch2, Abseil, RapidJSON and
# the project's headers are parsed and their inline code generated once per batch instead of
# once per file. CI builds from scratch twice (g++ and clang++ ASan), and test sources were 61 %
# of that compile time; docs/architecture.md ("Tooling") has the measurement. Product code
# (libpulse-core, adapters, apps) is never unity-built: clang-tidy and the layering check read
# its units one by one. Turn it off (-DPULSE_UNITY_TESTS=OFF) for quick edit-compile cycles on
# one test file, or to find which file of a batch a diagnostic comes from. A test file that
# defines something another file of its target also defines (in an anonymous namespace or as a
# macro) does not compile in a batch: name the helper after its file, or keep it out with the
# source property SKIP_UNITY_BUILD_INCLUSION.
option(PULSE_UNITY_TESTS "Compile each test executable's sources in unity batches" ON)
set(PULSE_UNITY_BATCH 8 CACHE STRING "Test sources per unity unit")

# pulse_add_test(NAME x SOURCES ... [DEPS ...] [LABELS ...])
# A Catch2 v2 executable whose TEST_CASEs become ctest tests. --warn NoTests makes a filter
# that matches nothing fail instead of passing silently.
function(pulse_add_test)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} Catch2::Catch2WithMain)
  pulse_apply_warnings(${ARG_NAME})
  pulse_precompile_headers(${ARG_NAME} <catch2/catch.hpp>)
  catch_discover_tests(${ARG_NAME} EXTRA_ARGS --warn NoTests
    PROPERTIES LABELS "${ARG_LABELS}")
endfunction()

# Precompiled headers (PULSE_PRECOMPILE_HEADERS, off; nothing turns it on): the standard, Abseil
# and RapidJSON headers nearly every unit includes, and Catch2 for tests, parsed once per target
# instead of once per unit. docs/architecture.md ("Tooling") has the measurement that kept it
# off (a small saving, and GCC 12 false positives in tests that only it raises).
option(PULSE_PRECOMPILE_HEADERS "Precompile the common headers per target" OFF)
set(PULSE_PCH_HEADERS <algorithm> <cstdint> <functional> <map> <memory> <optional> <string>
  <string_view> <utility> <vector> <absl/status/status.h> <absl/status/statusor.h>
  <absl/strings/str_cat.h> <absl/time/time.h> <rapidjson/document.h>)
function(pulse_precompile_headers target)
  if(PULSE_PRECOMPILE_HEADERS)
    target_precompile_headers(${target} PRIVATE ${PULSE_PCH_HEADERS} ${ARGN})
  endif()
endfunction()

function(pulse_apply_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
    -Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual -Wimplicit-fallthrough
    -Werror=unused-result -Werror=return-type)
  # Clang checks the Abseil lock annotations (ABSL_GUARDED_BY and friends on absl::Mutex);
  # GCC ignores them. See docs/architecture.md, "Tooling: format, lint, thread-safety analysis".
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    target_compile_options(${target} PRIVATE -Wthread-safety)
  endif()
  if(PULSE_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

set(PULSE_SANITIZE_FLAGS "")
if(PULSE_SANITIZE)
  string(REPLACE "," ";" _pulse_sanitizers "${PULSE_SANITIZE}")
  list(JOIN _pulse_sanitizers "," _pulse_san_flag)
  set(PULSE_SANITIZE_FLAGS -fsanitize=${_pulse_san_flag} -fno-omit-frame-pointer
    -fno-sanitize-recover=all)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    list(APPEND PULSE_SANITIZE_FLAGS
      -fsanitize-ignorelist=${PROJECT_SOURCE_DIR}/cmake/sanitizer-ignorelist.txt)
  endif()
  add_compile_options(${PULSE_SANITIZE_FLAGS})
  add_link_options(-fsanitize=${_pulse_san_flag})
endif()
