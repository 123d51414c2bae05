# The Python client's checks (clients/python/README.md), included by
# cmake/clients.cmake: its suite against a real `jobd server` on SQLite and
# on PostgreSQL (skipped, 77, without $JOBD_TEST_PG_URL unless
# $JOBD_TEST_REQUIRE_PG=1), mypy --strict, the wheel, and the route coverage
# of the clients that exist (clients/coverage.py). Debian's python3 is the one
# used (/usr/bin first): the package targets what Debian ships.
find_program(JOBD_CLIENTS_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT JOBD_CLIENTS_PYTHON3)
  find_program(JOBD_CLIENTS_PYTHON3 python3)
endif()
if(JOBD_CLIENTS_PYTHON3)
  set(_py_dir ${CMAKE_SOURCE_DIR}/clients/python)
  foreach(store sqlite pg)
    add_test(NAME clients_python_${store}
             COMMAND ${JOBD_CLIENTS_PYTHON3} ${_py_dir}/tests/run.py --store ${store})
    set_tests_properties(clients_python_${store} PROPERTIES LABELS clients TIMEOUT 300
                         SKIP_RETURN_CODE 77 ENVIRONMENT "${JOBD_TEST_ENV}")
  endforeach()
  add_test(NAME clients_python_typecheck COMMAND ${JOBD_CLIENTS_PYTHON3} ${_py_dir}/tests/run.py --mypy)
  set_tests_properties(clients_python_typecheck PROPERTIES LABELS clients TIMEOUT 300
                       ENVIRONMENT "${JOBD_TEST_ENV}")
  add_test(NAME clients_python_package COMMAND ${JOBD_CLIENTS_PYTHON3} ${_py_dir}/tests/package.py)
  set_tests_properties(clients_python_package PROPERTIES LABELS clients TIMEOUT 300)
  add_test(NAME clients_coverage
           COMMAND ${JOBD_CLIENTS_PYTHON3} ${CMAKE_SOURCE_DIR}/clients/coverage.py)
  set_tests_properties(clients_coverage PROPERTIES LABELS clients TIMEOUT 60)
  add_test(NAME clients_coverage_selftest
           COMMAND ${JOBD_CLIENTS_PYTHON3} ${CMAKE_SOURCE_DIR}/clients/coverage.py --self-test)
  set_tests_properties(clients_coverage_selftest PROPERTIES LABELS clients TIMEOUT 60)
endif()
