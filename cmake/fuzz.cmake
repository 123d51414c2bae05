# Fuzz targets: tests/fuzz/fuzz_*.c, each a libFuzzer target
# (LLVMFuzzerTestOneInput) with a committed seed corpus in
# tests/fuzz/corpus/<name>/.
#
#   -DJOBD_FUZZ=ON (clang only): real libFuzzer binaries with ASan+UBSan and
#     coverage on every jobd source; `make fuzz`-style runs are
#     `build-fuzz/fuzz_request tests/fuzz/corpus/fuzz_request -max_total_time=60`.
#     CTest runs each briefly (label "fuzz").
#   otherwise: each target is built with a small replay main()
#     (JOBD_FUZZ_STANDALONE) and CTest replays its corpus, so the seeds are
#     a regression test in every build, with any compiler.
option(JOBD_FUZZ "Build libFuzzer targets (needs clang)" OFF)

file(GLOB JOBD_FUZZ_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_*.c)

if(JOBD_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "JOBD_FUZZ=ON needs clang: configure with CC=clang")
  endif()
  # Coverage instrumentation for everything built from here on (the library too).
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                      -Wno-unknown-warning-option) # the shared flags hold gcc-only ones
  add_link_options(-fsanitize=address,undefined)
endif()

enable_testing()
foreach(src ${JOBD_FUZZ_SOURCES})
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src})
  target_compile_options(${name} PRIVATE ${JOBD_WARNINGS})
  target_link_libraries(${name} PRIVATE jobd_internal)
  set(corpus ${CMAKE_SOURCE_DIR}/tests/fuzz/corpus/${name})
  if(JOBD_FUZZ)
    target_link_options(${name} PRIVATE -fsanitize=fuzzer)
    # New inputs go to a scratch folder in the build tree, never into the committed seeds.
    set(test_name fuzz_${name})
    set(scratch ${CMAKE_BINARY_DIR}/fuzz-corpus/${name})
    file(MAKE_DIRECTORY ${scratch})
    add_test(NAME ${test_name} COMMAND ${name} -runs=20000 -max_len=65536 ${scratch} ${corpus})
  else()
    target_compile_definitions(${name} PRIVATE JOBD_FUZZ_STANDALONE)
    file(GLOB seeds CONFIGURE_DEPENDS ${corpus}/*)
    set(test_name fuzz_${name}_corpus)
    add_test(NAME ${test_name} COMMAND ${name} ${seeds})
  endif()
  set_tests_properties(${test_name} PROPERTIES LABELS fuzz TIMEOUT 300)
endforeach()
