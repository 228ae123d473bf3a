# reports/fuzz.cmake — libFuzzer harnesses (suites/fuzz_*.c), built only with -DMMP_FUZZ=ON and clang:
#   CC=clang CXX=clang++ cmake -S . -B build-fuzz -DMMP_FUZZ=ON -DMMP_ENABLE_CUDA=OFF
#   cmake --build build-fuzz --target fuzz_json
#   build-fuzz/fuzz_json -jobs=1 -max_total_time=600 fuzz-work/ reports/fuzz-corpus/
# libmmp is instrumented for coverage (fuzzer-no-link) and AddressSanitizer + UBSan.
option(MMP_FUZZ "Build the libFuzzer harnesses (clang only)" OFF)
if(MMP_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "MMP_FUZZ=ON needs clang (CC=clang), not ${CMAKE_C_COMPILER_ID}")
  endif()
  set(mmp_fuzz_flags -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                     -fno-omit-frame-pointer -g)
  target_compile_options(mmp PRIVATE $<$<COMPILE_LANGUAGE:C,CXX>:${mmp_fuzz_flags}>)
  file(GLOB fuzz_sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/suites/fuzz_*.c)
  foreach(src ${fuzz_sources})
    get_filename_component(name ${src} NAME_WE)
    add_executable(${name} ${src})
    target_compile_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer -g)
    target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(${name} PRIVATE mmp_whole)
  endforeach()
endif()
