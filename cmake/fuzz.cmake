# Fuzz targets: tests/fuzz/fuzz_*.c, each a libFuzzer target
# (LLVMFuzzerTestOneInput) with a committed seed corpus in
# tests/fuzz/corpus/<name>/. See docs/FUZZING.md.
#
#   -DJOBD_FUZZ=ON (clang only): real libFuzzer binaries with ASan+UBSan and
#     coverage on every jobd source (`make fuzz` builds them in build-fuzz/
#     and runs each for FUZZ_SECONDS). CTest runs each briefly (label "fuzz").
#   otherwise: each target is built with a small replay main()
#     (JOBD_FUZZ_STANDALONE, tests/fuzz/fuzz_main.h) and CTest replays its
#     corpus, so the seeds are a regression test in every build, with any
#     compiler. With -DJOBD_FUZZ_BRIEF=ON (what `make test` passes) and clang
#     installed, the libFuzzer binaries are also built, by clang, in
#     <build>/fuzz-clang (a nested JOBD_FUZZ=ON build) and CTest runs each
#     for JOBD_FUZZ_BRIEF_SECONDS of real fuzzing.
option(JOBD_FUZZ "Build libFuzzer targets (needs clang)" OFF)
option(JOBD_FUZZ_BRIEF "Also build the libFuzzer targets with clang and fuzz each briefly in CTest" OFF)
set(JOBD_FUZZ_BRIEF_SECONDS 4 CACHE STRING "Seconds of fuzzing per target in the brief CTest runs")

file(GLOB JOBD_FUZZ_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_*.c)

if(JOBD_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "JOBD_FUZZ=ON needs clang: configure with CC=clang")
  endif()
  # Coverage instrumentation for everything built from here on (the library too).
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer
                      -Wno-unknown-warning-option) # the shared flags hold gcc-only ones
  add_link_options(-fsanitize=address,undefined)
endif()

enable_testing()
set(JOBD_FUZZ_NAMES)
foreach(src ${JOBD_FUZZ_SOURCES})
  get_filename_component(name ${src} NAME_WE)
  list(APPEND JOBD_FUZZ_NAMES ${name})
  add_executable(${name} ${JOBD_EXTRA} ${src})
  target_compile_options(${name} PRIVATE ${JOBD_WARNINGS})
  # ICU directly too: a fuzz target may use it as an oracle (jobd itself dlopens it).
  target_link_libraries(${name} PRIVATE jobd_internal PkgConfig::ICU)
  set(corpus ${CMAKE_SOURCE_DIR}/tests/fuzz/corpus/${name})
  if(JOBD_FUZZ)
    target_link_options(${name} PRIVATE -fsanitize=fuzzer)
    # New inputs go to a scratch folder in the build tree, never into the committed seeds.
    set(test_name fuzz_${name})
    set(scratch ${CMAKE_BINARY_DIR}/fuzz-corpus/${name})
    file(MAKE_DIRECTORY ${scratch})
    add_test(NAME ${test_name} COMMAND ${name} -runs=20000 -max_len=65536
             -artifact_prefix=${scratch}/ ${scratch} ${corpus})
  else()
    target_compile_definitions(${name} PRIVATE JOBD_FUZZ_STANDALONE)
    file(GLOB seeds CONFIGURE_DEPENDS ${corpus}/*)
    set(test_name fuzz_${name}_corpus)
    add_test(NAME ${test_name} COMMAND ${name} ${seeds})
  endif()
  set_tests_properties(${test_name} PROPERTIES LABELS fuzz TIMEOUT 300)
endforeach()
add_custom_target(fuzz_all DEPENDS ${JOBD_FUZZ_NAMES})

if(JOBD_FUZZ_BRIEF AND NOT JOBD_FUZZ)
  find_program(JOBD_CLANG NAMES clang clang-14)
  if(NOT JOBD_CLANG)
    message(WARNING "clang not found: the fuzz targets only replay their corpus (scripts/deps.sh installs clang)")
  else()
    include(ExternalProject)
    set(fz ${CMAKE_BINARY_DIR}/fuzz-clang)
    # Always run the nested build: its own make decides what is out of date.
    # Under make, $(MAKE) lets it share the parent's -j job slots.
    if(CMAKE_GENERATOR MATCHES "Make")
      set(fz_build $(MAKE) --no-print-directory fuzz_all)
    else()
      set(fz_build ${CMAKE_COMMAND} --build ${fz} --target fuzz_all)
    endif()
    ExternalProject_Add(jobd_fuzz_clang
      SOURCE_DIR ${CMAKE_SOURCE_DIR}
      BINARY_DIR ${fz}
      CMAKE_ARGS -DCMAKE_C_COMPILER=${JOBD_CLANG} -DJOBD_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
                 -DJOBD_WERROR=${JOBD_WERROR}
      BUILD_COMMAND ${fz_build}
      INSTALL_COMMAND ""
      BUILD_ALWAYS ON
      EXCLUDE_FROM_ALL OFF)
    foreach(name ${JOBD_FUZZ_NAMES})
      set(scratch ${CMAKE_BINARY_DIR}/fuzz-brief/${name})
      file(MAKE_DIRECTORY ${scratch})
      set(dict)
      if(EXISTS ${CMAKE_SOURCE_DIR}/tests/fuzz/${name}.dict)
        set(dict -dict=${CMAKE_SOURCE_DIR}/tests/fuzz/${name}.dict)
      endif()
      add_test(NAME fuzz_${name}_brief
               COMMAND ${fz}/${name} -max_total_time=${JOBD_FUZZ_BRIEF_SECONDS} -max_len=65536
                       -print_final_stats=1 -artifact_prefix=${scratch}/ ${dict}
                       ${scratch} ${CMAKE_SOURCE_DIR}/tests/fuzz/corpus/${name})
      set_tests_properties(fuzz_${name}_brief PROPERTIES LABELS fuzz
                           TIMEOUT 120)
    endforeach()
  endif()
endif()
