# The client libraries' suites (clients/*/, the shared cases in clients/cases.json):
# registers its own ctest entries in clients/LANG/tests.cmake, so adding a
# client touches no shared file but this list.
foreach(lang python node go)
  include(${CMAKE_SOURCE_DIR}/clients/${lang}/tests.cmake OPTIONAL)
endforeach()
