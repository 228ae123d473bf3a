# tests/fuzz/fuzz_options.cmake — MMP_FUZZ: build the libFuzzer harnesses (clang only); every
# module is then instrumented for coverage (fuzzer-no-link) and AddressSanitizer + UBSan.
option(MMP_FUZZ "Build the libFuzzer harnesses (clang only)" OFF)
if(MMP_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "MMP_FUZZ=ON needs clang (CC=clang), not ${CMAKE_C_COMPILER_ID}")
  endif()
  set(mmp_fuzz_flags -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                     -fno-omit-frame-pointer -g)
endif()
