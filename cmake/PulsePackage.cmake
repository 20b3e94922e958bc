# Installs libpulse-core as a CMake package: find_package(PulseCore) gives pulse::core.
include(CMakePackageConfigHelpers)

set(PULSE_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/PulseCore)

install(TARGETS pulse_core pulse_rapidjson pulse_sodium
  EXPORT PulseCoreTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/libpulse-core/include/pulse
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT PulseCoreTargets
  NAMESPACE pulse::
  DESTINATION ${PULSE_CMAKE_INSTALL_DIR})

configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/PulseCoreConfig.cmake.in
  ${PROJECT_BINARY_DIR}/PulseCoreConfig.cmake
  INSTALL_DESTINATION ${PULSE_CMAKE_INSTALL_DIR})
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/PulseCoreConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/PulseCoreConfig.cmake
  ${PROJECT_BINARY_DIR}/PulseCoreConfigVersion.cmake
  DESTINATION ${PULSE_CMAKE_INSTALL_DIR})
