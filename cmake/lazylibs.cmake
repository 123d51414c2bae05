# libpq, libcurl, libmicrohttpd and SQLite are not linked into jobd or libjobd:
# small stubs (src/util/lazy_*.c) dlopen them on first use, so a process that
# needs none of the first three (a SQLite worker with exec handlers) does not
# pay the ~6 MB of resident memory their start-up touches, and one on
# PostgreSQL does not map SQLite (src/util/lazylib.h). The build still
# requires them (pkg_check_modules REQUIRED above): their headers compile the
# stubs, and the soname found here is the one dlopen asks for.
# jobd_lazydeps links the four for real; it is never installed:
# scripts/mkdeb.sh hands it to dpkg-shlibdeps so the package still depends on
# libpq5, libcurl4, libmicrohttpd12 and libsqlite3-0
# (tests/integration/test_deb.sh checks).

# The SONAME (e.g. libpq.so.5) of the library called lib${name} among a
# pkg-config module's link libraries.
function(jobd_soname out prefix name)
  set(lib "")
  foreach(l ${${prefix}_LINK_LIBRARIES})
    if(l MATCHES "/lib${name}\\.so")
      set(lib ${l})
    endif()
  endforeach()
  if(NOT lib)
    message(FATAL_ERROR "lib${name}.so is not among ${prefix}_LINK_LIBRARIES (${${prefix}_LINK_LIBRARIES})")
  endif()
  execute_process(COMMAND ${CMAKE_OBJDUMP} -p ${lib} OUTPUT_VARIABLE dump RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT dump MATCHES "SONAME +([^ \t\r\n]+)")
    message(FATAL_ERROR "cannot read the SONAME of ${lib} with ${CMAKE_OBJDUMP}")
  endif()
  set(${out} ${CMAKE_MATCH_1} PARENT_SCOPE)
endfunction()

jobd_soname(JOBD_SONAME_PQ PQ pq)
jobd_soname(JOBD_SONAME_CURL CURL curl)
jobd_soname(JOBD_SONAME_MHD MHD microhttpd)
jobd_soname(JOBD_SONAME_SQLITE SQLITE sqlite3)
message(STATUS "Loaded on first use: ${JOBD_SONAME_PQ} ${JOBD_SONAME_CURL} ${JOBD_SONAME_MHD} ${JOBD_SONAME_SQLITE}")
set_source_files_properties(
  ${CMAKE_SOURCE_DIR}/src/util/lazy_pq.c ${CMAKE_SOURCE_DIR}/src/util/lazy_curl.c
  ${CMAKE_SOURCE_DIR}/src/util/lazy_mhd.c ${CMAKE_SOURCE_DIR}/src/util/lazy_sqlite.c
  PROPERTIES COMPILE_DEFINITIONS
  "JOBD_SONAME_PQ=\"${JOBD_SONAME_PQ}\";JOBD_SONAME_CURL=\"${JOBD_SONAME_CURL}\";JOBD_SONAME_MHD=\"${JOBD_SONAME_MHD}\";JOBD_SONAME_SQLITE=\"${JOBD_SONAME_SQLITE}\"")

# Headers (and any other compile flags) of the four, without their libraries.
set(JOBD_LAZY_INCLUDES ${PQ_INCLUDE_DIRS} ${CURL_INCLUDE_DIRS} ${MHD_INCLUDE_DIRS}
    ${SQLITE_INCLUDE_DIRS})
set(JOBD_LAZY_CFLAGS ${PQ_CFLAGS_OTHER} ${CURL_CFLAGS_OTHER} ${MHD_CFLAGS_OTHER}
    ${SQLITE_CFLAGS_OTHER})
