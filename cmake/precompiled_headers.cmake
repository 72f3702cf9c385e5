# Precompiled headers: the standard library, fmt, nlohmann/json and yaml-cpp in every
# target, SystemC/TLM where SystemC is linked, GoogleTest in the tests. Four headers are
# compiled (one per tier) and every other target reuses its tier's (REUSE_FROM), which
# needs the same compile flags: the tiers follow what changes them (GoogleTest's
# -DGTEST_HAS_PTHREAD) and what a tier's headers need at link time (SystemC's version
# check object). A build with a compiler launcher (ccache), the fuzz build (clang) and the
# sanitizer build keep them off by default: ccache would miss on every reused header, and
# at -O0 GCC 12 rejects Eigen's inlined _mm_prefetch through a precompiled <xmmintrin.h>.
if(CMAKE_CXX_COMPILER_LAUNCHER OR DEFINED ENV{CMAKE_CXX_COMPILER_LAUNCHER} OR AGGNET_FUZZ
   OR AGGNET_SANITIZE)
  set(_aggnet_pch_default OFF)
else()
  set(_aggnet_pch_default ON)
endif()
option(AGGNET_PCH "Precompiled headers (default: on without a compiler launcher)"
       ${_aggnet_pch_default})

set(AGGNET_PCH_BASE
    <algorithm> <cmath> <cstdint> <cstdlib> <filesystem> <fstream> <functional> <limits>
    <map> <memory> <optional> <set> <sstream> <stdexcept> <string> <tuple> <utility>
    <vector> <fmt/format.h> <nlohmann/json.hpp> <yaml-cpp/yaml.h>)
# modules/core/event_calendar.cpp needs SC_INCLUDE_DYNAMIC_PROCESSES before <systemc>:
# it skips the precompiled header.
set(AGGNET_PCH_SYSTEMC <systemc> <tlm> <tlm_utils/simple_initiator_socket.h>
    <tlm_utils/simple_target_socket.h> <tlm_utils/peq_with_cb_and_phase.h>)

# aggnet_pch(target tier): tier `base` (libraries without SystemC), `systemc`, `test`
# or `systemc_test`; the first target of a tier compiles it, the others reuse it.
function(aggnet_pch target tier)
  if(NOT AGGNET_PCH)
    return()
  endif()
  # The headers' own flags (fmt's -DFMT_SHARED) on every target, or the header is refused.
  target_link_libraries(${target} PRIVATE fmt::fmt)
  get_property(donor GLOBAL PROPERTY AGGNET_PCH_DONOR_${tier})
  if(donor)
    target_precompile_headers(${target} REUSE_FROM ${donor})
    return()
  endif()
  set(headers ${AGGNET_PCH_BASE})
  if(tier MATCHES "systemc")
    list(APPEND headers ${AGGNET_PCH_SYSTEMC})
  endif()
  if(tier MATCHES "test")
    list(APPEND headers <gtest/gtest.h>)
  endif()
  target_precompile_headers(${target} PRIVATE ${headers})
  set_property(GLOBAL PROPERTY AGGNET_PCH_DONOR_${tier} ${target})
endfunction()
