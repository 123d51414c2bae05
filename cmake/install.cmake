# install.cmake — `make install` / `cmake --install`: what goes where
# (GNUInstallDirs). The binary, libjobd with its soname, the header and
# jobd.pc go to paths fixed at configure time. Files whose place depends on
# the prefix chosen at install time (units, example configs, completion:
# /etc for /usr, PREFIX/etc otherwise) are placed by install_late.cmake at
# install time, so one build tree can be installed under /usr/local by
# `make install` and under /usr by scripts/mkdeb.sh.
include(GNUInstallDirs)

# jobd.pc finds its prefix from its own folder: count the levels up.
set(_pcdir "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
string(REGEX REPLACE "[^/]+" ".." JOBD_PC_UP "${_pcdir}")
configure_file(${CMAKE_SOURCE_DIR}/packaging/jobd.pc.in ${CMAKE_BINARY_DIR}/jobd.pc @ONLY)

install(TARGETS jobd RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS jobd_shared LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        NAMELINK_COMPONENT Unspecified)
install(FILES include/jobd.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${CMAKE_BINARY_DIR}/jobd.pc DESTINATION ${_pcdir})
install(FILES examples/hello.c examples/c_worker.c examples/worker.ini
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
# The Prometheus alert rules and the Grafana dashboard (docs/OPERATIONS.md,
# Monitoring): /usr/share/jobd/monitoring/ in the package.
install(FILES packaging/monitoring/jobd-alerts.yml packaging/monitoring/jobd-grafana.json
        DESTINATION ${CMAKE_INSTALL_DATADIR}/jobd/monitoring)
# examples/worker.ini runs these (exec = handlers/NAME.sh, beside it).
install(PROGRAMS examples/handlers/hello.sh examples/handlers/fail-sometimes.sh
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples/handlers)
# The documentation, read where it is installed (docs/OPERATIONS.md, Install).
file(GLOB _docs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/docs/*.md)
install(FILES README.md ${_docs} docs/openapi.yaml DESTINATION ${CMAKE_INSTALL_DOCDIR})

# Man pages: written once in scdoc (docs/man/*.scd), built by every build.
find_program(JOBD_SCDOC scdoc REQUIRED)
set(JOBD_MAN_PAGES)
foreach(m jobd.1 jobd-server.ini.5 jobd-worker.ini.5)
  add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/man/${m}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
    COMMAND sh -c "'${JOBD_SCDOC}' < '${CMAKE_SOURCE_DIR}/docs/man/${m}.scd' > '${CMAKE_BINARY_DIR}/man/${m}'"
    DEPENDS ${CMAKE_SOURCE_DIR}/docs/man/${m}.scd VERBATIM)
  list(APPEND JOBD_MAN_PAGES ${CMAKE_BINARY_DIR}/man/${m})
endforeach()
add_custom_target(man ALL DEPENDS ${JOBD_MAN_PAGES})
install(CODE "set(JOBD_SRC_DIR \"${CMAKE_SOURCE_DIR}\")\nset(JOBD_BIN_DIR \"${CMAKE_BINARY_DIR}\")")
install(SCRIPT ${CMAKE_SOURCE_DIR}/cmake/install_late.cmake)
