# The Debian package (scripts/package runs cpack -G DEB in the build tree):
# the gateway, the plugin SDK (headers and CMake package, as `cmake
# --install` puts them), and, in the `deb` component that a plain `cmake
# --install` leaves out, the example servers and plugins, the packaged
# configuration, the systemd unit, the manual page and the documentation.
set(deb_src ${PROJECT_SOURCE_DIR}/deploy/debian)
set(deb_gen ${CMAKE_BINARY_DIR}/deb)

# A native package (no Debian revision): its changelog is changelog.gz.
# Debian wants the changelog, the manual page and long documents gzipped
# (-9n: reproducible, no name or time stamp inside).
set(deb_gz)
function(mcpgw_deb_gzip out in)
  add_custom_command(OUTPUT ${deb_gen}/${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${deb_gen}
    COMMAND sh -c "gzip -9n -c '${in}' > '${deb_gen}/${out}'"
    DEPENDS ${in} VERBATIM)
  set(deb_gz ${deb_gz} ${deb_gen}/${out} PARENT_SCOPE)
endfunction()
configure_file(${deb_src}/changelog ${deb_gen}/changelog @ONLY)
mcpgw_deb_gzip(changelog.gz ${deb_gen}/changelog)
mcpgw_deb_gzip(mcpgw.1.gz ${deb_src}/mcpgw.1)
mcpgw_deb_gzip(README.md.gz ${PROJECT_SOURCE_DIR}/README.md)
foreach(doc configuration protocol operations plugins architecture development)
  mcpgw_deb_gzip(${doc}.md.gz ${PROJECT_SOURCE_DIR}/docs/${doc}.md)
endforeach()
add_custom_target(mcpgw_deb_files ALL DEPENDS ${deb_gz})

install(TARGETS bank-server rates-server toolbox-server RUNTIME DESTINATION lib/mcpgw/examples
  COMPONENT deb EXCLUDE_FROM_ALL)
install(TARGETS banking_composites deploy_flow LIBRARY DESTINATION lib/mcpgw/plugins
  COMPONENT deb EXCLUDE_FROM_ALL)
install(FILES ${deb_src}/gateway.yaml DESTINATION /etc/mcpgw COMPONENT deb EXCLUDE_FROM_ALL)
install(FILES ${deb_src}/mcpgw.service DESTINATION /lib/systemd/system COMPONENT deb EXCLUDE_FROM_ALL)
install(FILES ${deb_gen}/mcpgw.1.gz DESTINATION share/man/man1 COMPONENT deb EXCLUDE_FROM_ALL)
install(FILES ${deb_src}/copyright ${deb_gen}/changelog.gz ${deb_gen}/README.md.gz
  ${deb_gen}/configuration.md.gz ${deb_gen}/protocol.md.gz ${deb_gen}/operations.md.gz ${deb_gen}/plugins.md.gz
  ${deb_gen}/architecture.md.gz ${deb_gen}/development.md.gz ${PROJECT_SOURCE_DIR}/docs/status-page.png
  ${PROJECT_SOURCE_DIR}/gateway.yaml.example
  DESTINATION share/doc/mcpgw COMPONENT deb EXCLUDE_FROM_ALL)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME mcpgw)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_CONTACT "mcpgw maintainers <maintainers@mcpgw.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "one MCP endpoint in front of many MCP servers")
# The synopsis is the summary above; this is the extended description
# (CPack indents it and turns the empty line into " .").
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "mcpgw is a gateway for the Model Context Protocol: MCP clients connect to
it alone, and it serves the tools, resources and prompts of every MCP
server it is configured with, over Streamable HTTP or stdio. It filters
tools by slice, name and mode, follows nextTool chains, runs composite
tools from C++ plugins, authenticates and limits clients, and reports
through an audit log, Prometheus metrics, OpenTelemetry traces and a
status page.

This package holds the gateway and its systemd service, the plugin SDK
(headers and CMake package), example servers and plugins, and the
documentation.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${deb_src}/conffiles ${deb_src}/postinst ${deb_src}/prerm ${deb_src}/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# One package of everything: the default component and `deb`.
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
set(CPACK_COMPONENTS_ALL Unspecified deb)
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/package)
include(CPack)
