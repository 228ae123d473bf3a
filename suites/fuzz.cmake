# suites/fuzz.cmake — the suites' libFuzzer harnesses (fuzz_suitefile, fuzz_cli) and their replay tests.
#   CC=clang CXX=clang++ cmake -S . -B build-fuzz -DMMP_FUZZ=ON -DMMP_ENABLE_CUDA=OFF
#   cmake --build build-fuzz --target fuzz_suitefile fuzz_cli
#   build-fuzz/reports/fuzz_suitefile -jobs=1 -max_total_time=600 -max_len=2048 fuzz-work/suitefile suites/fuzz-corpus/suitefile
#   build-fuzz/reports/fuzz_cli -jobs=1 -max_total_time=600 -max_len=512 fuzz-work/cli suites/fuzz-corpus/cli
# (-jobs writes fuzz-N.log into the current directory: run from a scratch directory, as the commands
# and the last campaign's figures in suites/RELIABILITY.md "Fuzzing" do.)
# (MMP_FUZZ and the instrumentation of libmmp come from reports/fuzz.cmake, which also builds
# every suites/fuzz_*.c; the targets are made here only if it did not.)
# In every build, fuzz_replay_<name> (ctest, label cpu) runs the harness once over each file in
# suites/fuzz-corpus/<name>/: the seeds and every crasher found (crash-*), so fixed bugs stay fixed.
set(mmp_suite_fuzzers suitefile cli)
foreach(name ${mmp_suite_fuzzers})
  set(src ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_${name}.c)
  if(MMP_FUZZ AND NOT TARGET fuzz_${name})
    add_executable(fuzz_${name} ${src})
    target_compile_options(fuzz_${name} PRIVATE -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer -g)
    target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(fuzz_${name} PRIVATE mmp_whole)
  endif()
  if(NOT MMP_FUZZ)
    add_executable(replay_${name} ${src} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/replay_main.c)
    target_link_libraries(replay_${name} PRIVATE mmp_whole ${MATH_LIB})
    add_test(NAME fuzz_replay_${name} COMMAND replay_${name} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz-corpus/${name})
    set_tests_properties(fuzz_replay_${name} PROPERTIES LABELS cpu TIMEOUT 300)
  endif()
endforeach()
