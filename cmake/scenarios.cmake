# Fault-injection scenarios (tests/scenarios/, docs/SCENARIOS.md): one ctest
# test per tests/scenarios/scenario_*.sh, label "scenario", plus the history
# checker's self-test. They drive the real jobd binary; exit 77 means the
# machine cannot run one (it prints "SKIPPED: why"). `make test` runs the
# short versions; `make soak` runs them again with SOAK=1 (long versions).
file(GLOB JOBD_SCENARIOS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/scenarios/scenario_*.sh)
foreach(src ${JOBD_SCENARIOS})
  get_filename_component(name ${src} NAME_WE)
  add_test(NAME ${name} COMMAND bash ${src})
  set_tests_properties(${name} PROPERTIES LABELS scenario TIMEOUT 3600 SKIP_RETURN_CODE 77
                       ENVIRONMENT "${JOBD_TEST_ENV}")
endforeach()

# The partition's fallback (a userspace TCP forwarder instead of a network
# namespace), run on purpose so that it keeps working where root is missing.
add_test(NAME scenario_partition_forwarder
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/scenarios/scenario_partition.sh)
set_tests_properties(scenario_partition_forwarder PROPERTIES LABELS scenario TIMEOUT 3600
                     SKIP_RETURN_CODE 77 ENVIRONMENT "${JOBD_TEST_ENV};SCEN_PARTITION=forwarder")

find_program(JOBD_PYTHON3 python3)
if(JOBD_PYTHON3)
  add_test(NAME scenario_check_history_selftest
           COMMAND ${JOBD_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/scenarios/check_history_selftest.py)
  set_tests_properties(scenario_check_history_selftest PROPERTIES LABELS scenario TIMEOUT 120)
endif()
