# A .deb of the apps, libpulse-core's package and the systemd unit of pulse-server, built by
# CPack: `cpack --config <build>/CPackConfig.cmake` (docs/server.md, "As a service"). The package
# installs under the configured prefix (CMAKE_INSTALL_PREFIX; -DCMAKE_INSTALL_PREFIX=/usr for a
# system package), which is also where the unit's ExecStart points.
configure_file(${PROJECT_SOURCE_DIR}/packaging/pulse-server.service.in
  ${PROJECT_BINARY_DIR}/packaging/pulse-server.service @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/packaging/pulse-server.service
  DESTINATION lib/systemd/system)
# pulse-agent's unit (docs/agent.md): installed, not enabled; it needs /etc/default/pulse-agent.
configure_file(${PROJECT_SOURCE_DIR}/packaging/pulse-agent.service.in
  ${PROJECT_BINARY_DIR}/packaging/pulse-agent.service @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/packaging/pulse-agent.service
  DESTINATION lib/systemd/system)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME pulse-core)
set(CPACK_PACKAGE_VENDOR "Pulse Core")
set(CPACK_PACKAGE_CONTACT "Pulse Core maintainers <pulse-core@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "Governed AI-operations engine: pulse-server, pulse-cli, pulse-mcp, pulse-agent")
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/packaging/postinst)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
