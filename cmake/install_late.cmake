# install_late.cmake — run by `cmake --install` (see install.cmake): places
# what depends on the install-time prefix. /usr gets /etc and Debian's zsh
# vendor folder; any other prefix keeps everything under it. file(INSTALL)
# honours DESTDIR and the install manifest like the generated rules do.
set(_p "${CMAKE_INSTALL_PREFIX}")
if(_p STREQUAL "/usr")
  set(_etc "/etc")
  set(_zsh "${_p}/share/zsh/vendor-completions")
else()
  set(_etc "${_p}/etc")
  set(_zsh "${_p}/share/zsh/site-functions")
endif()
set(_pkg "${JOBD_SRC_DIR}/packaging")

file(INSTALL DESTINATION "${_p}/share/bash-completion/completions" TYPE FILE
     RENAME jobd FILES "${_pkg}/completion/jobd.bash")
file(INSTALL DESTINATION "${_zsh}" TYPE FILE FILES "${_pkg}/completion/_jobd")

# Example configs: never overwrite what an operator already has.
# The tokens file is secret: not readable by others.
foreach(f server.ini worker.ini tokens)
  set(_mode OWNER_READ OWNER_WRITE GROUP_READ)
  if(NOT f STREQUAL "tokens")
    list(APPEND _mode WORLD_READ)
  endif()
  if(NOT EXISTS "$ENV{DESTDIR}${_etc}/jobd/${f}")
    file(INSTALL DESTINATION "${_etc}/jobd" TYPE FILE PERMISSIONS ${_mode}
         FILES "${_pkg}/etc/${f}")
  endif()
endforeach()

# systemd units: ExecStart names the installed binary, --config the etc above.
set(JOBD_BINARY "${_p}/bin/jobd")
set(JOBD_ETC "${_etc}/jobd")
# Written straight to the destination (not staged in the build tree, where
# two installs under different prefixes at once would race).
foreach(u jobd-server.service jobd-worker@.service)
  file(READ "${_pkg}/systemd/${u}.in" _unit)
  string(CONFIGURE "${_unit}" _unit @ONLY)
  set(_dest "$ENV{DESTDIR}${_p}/lib/systemd/system/${u}")
  message(STATUS "Installing: ${_dest}")
  file(WRITE "${_dest}" "${_unit}")
  list(APPEND CMAKE_INSTALL_MANIFEST_FILES "${_p}/lib/systemd/system/${u}")
endforeach()

# Man pages, built by the `man` target (scdoc) into the build tree.
foreach(m jobd.1 jobd-server.ini.5 jobd-worker.ini.5)
  string(REGEX REPLACE ".*\\.([0-9])$" "\\1" _sec "${m}")
  file(INSTALL DESTINATION "${_p}/share/man/man${_sec}" TYPE FILE
       FILES "${JOBD_BIN_DIR}/man/${m}")
endforeach()
