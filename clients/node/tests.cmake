# clients/node/tests.cmake — the TypeScript/JavaScript client's suites
# (clients/node/scripts/test.sh) against a real `jobd server`, once on
# SQLite and once on PostgreSQL (skipped, 77, without JOBD_TEST_PG_URL).
# Included by cmake/clients.cmake. Both runs compile into the one dist/
# (scripts/build.sh), so they take turns: run side by side, one's type check
# read declarations the other was rewriting.
foreach(store sqlite pg)
  add_test(NAME clients_node_${store}
           COMMAND bash ${CMAKE_SOURCE_DIR}/clients/node/scripts/test.sh ${store})
  set_tests_properties(clients_node_${store} PROPERTIES LABELS clients TIMEOUT 600
                       SKIP_RETURN_CODE 77 ENVIRONMENT "${JOBD_TEST_ENV}"
                       RESOURCE_LOCK clients_node_dist)
endforeach()
