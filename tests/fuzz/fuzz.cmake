# tests/fuzz/fuzz.cmake — the libFuzzer harnesses (tests/fuzz/fuzz_<name>.c) and their replay tests.
#   CC=clang CXX=clang++ cmake -S . -B build-fuzz -DMMP_FUZZ=ON -DMMP_ENABLE_CUDA=OFF
#   cmake --build build-fuzz --target fuzz_json fuzz_suitefile fuzz_cli
#   build-fuzz/tests/fuzz_json -jobs=1 -max_total_time=600 fuzz-work/json tests/fuzz/corpus/json
#   build-fuzz/tests/fuzz_suitefile -jobs=1 -max_total_time=600 -max_len=2048 fuzz-work/suitefile tests/fuzz/corpus/suitefile
#   build-fuzz/tests/fuzz_cli -jobs=1 -max_total_time=600 -max_len=512 fuzz-work/cli tests/fuzz/corpus/cli
#   build-fuzz/tests/fuzz_channel -jobs=1 -max_total_time=600 -max_len=4096 fuzz-work/channel tests/fuzz/corpus/channel
#   build-fuzz/tests/fuzz_jsonl -jobs=1 -max_total_time=600 -max_len=32768 -close_fd_mask=2 fuzz-work/jsonl tests/fuzz/corpus/jsonl
#   build-fuzz/tests/fuzz_tool_args -jobs=1 -max_total_time=600 -max_len=512 fuzz-work/tool_args tests/fuzz/corpus/tool_args
# (-jobs writes fuzz-N.log into the current directory: run from a scratch directory, as the
# commands and the last campaign's figures in suites/RELIABILITY.md "Fuzzing" do.)
# In every other build, fuzz_replay_<name> (ctest, label cpu) runs the harness once over each
# file in tests/fuzz/corpus/<name>/: the seeds and every crasher found (crash-*), so fixed bugs
# stay fixed.
set(mmp_fuzzers json suitefile cli channel jsonl tool_args)
foreach(name ${mmp_fuzzers})
  set(src ${CMAKE_CURRENT_LIST_DIR}/fuzz_${name}.c)
  if(MMP_FUZZ)
    add_executable(fuzz_${name} ${src})
    target_compile_options(fuzz_${name} PRIVATE -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer -g)
    target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(fuzz_${name} PRIVATE mmp_testlib)
  else()
    add_executable(replay_${name} ${src} ${CMAKE_CURRENT_LIST_DIR}/replay_main.c)
    target_link_libraries(replay_${name} PRIVATE mmp_testlib ${MATH_LIB})
    add_test(NAME fuzz_replay_${name} COMMAND replay_${name} ${CMAKE_CURRENT_LIST_DIR}/corpus/${name})
    set_tests_properties(fuzz_replay_${name} PROPERTIES LABELS cpu TIMEOUT 300)
  endif()
endforeach()
