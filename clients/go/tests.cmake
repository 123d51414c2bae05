# The Go client's suite (clients/go/README.md): go vet and go test against
# a real `jobd server`, once on SQLite and once on PostgreSQL (skipped, 77,
# without JOBD_TEST_PG_URL). Included by cmake/clients.cmake.
foreach(store sqlite pg)
  add_test(NAME clients_go_${store}
           COMMAND bash ${CMAKE_SOURCE_DIR}/clients/go/test.sh ${store})
  set_tests_properties(clients_go_${store} PROPERTIES LABELS clients TIMEOUT 600
                       SKIP_RETURN_CODE 77 ENVIRONMENT "${JOBD_TEST_ENV}")
endforeach()
