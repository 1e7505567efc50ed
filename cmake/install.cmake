# Install rules (included from the top-level CMakeLists.txt when OVL_INSTALL):
#   <prefix>/include/ovl/*.h                the public headers
#   <libdir>/libovl.so.X.Y.Z, libovl.a      shared (SONAME libovl.so.MAJOR.MINOR) and static
#   <libdir>/cmake/ovl/                     find_package(ovl): ovl::ovl (shared), ovl::ovl_static
#   <libdir>/pkgconfig/ovl.pc               pkg-config ovl (--static for libovl.a)
#   <bindir>/ovl                            the command
include(CMakePackageConfigHelpers)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ovl DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
set(OVL_INSTALL_TARGETS ovl)
if(TARGET ovl_shared)
  list(APPEND OVL_INSTALL_TARGETS ovl_shared)
endif()
install(TARGETS ${OVL_INSTALL_TARGETS} EXPORT ovlTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET ovl_cli)
  install(TARGETS ovl_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# What libovl.a needs at link time besides MPI, from what the target ovl
# links: library files become -l flags in ovl.pc (Libs.private); the
# imported targets of packages become find_dependency() calls in ovlConfig.cmake
# and, for pkg-config, Requires.private. OVL_PACKAGE_DEPENDENCIES (find_package
# arguments, one entry each) and OVL_PC_REQUIRES_PRIVATE add to what is found.
if(MPI_C_LIBRARY_VERSION_STRING MATCHES "MPICH" OR MPI_C_COMPILER MATCHES "mpich")
  set(OVL_PC_MPI mpich)
else()
  set(OVL_PC_MPI ompi-c)
endif()
set(OVL_PC_MPI "${OVL_PC_MPI}" CACHE STRING "pkg-config module of the MPI library ovl.pc requires")
get_target_property(OVL_LINKS ovl LINK_LIBRARIES)
set(OVL_PC_LIBS_PRIVATE)
list(APPEND OVL_PC_REQUIRES_PRIVATE)
list(APPEND OVL_PACKAGE_DEPENDENCIES)
foreach(l IN LISTS OVL_LINKS)
  if(l STREQUAL "MPI::MPI_C" OR l MATCHES "^\\$<")
    continue()
  elseif(l STREQUAL "cjson" OR l STREQUAL "cjson::cjson")
    list(APPEND OVL_PACKAGE_DEPENDENCIES cJSON)
    list(APPEND OVL_PC_REQUIRES_PRIVATE libcjson)
  elseif(TARGET ${l})
    message(WARNING "ovl: ovl.pc and ovlConfig.cmake do not know the package of '${l}': "
                    "add it to OVL_PACKAGE_DEPENDENCIES and OVL_PC_REQUIRES_PRIVATE (cmake/install.cmake)")
  elseif(IS_ABSOLUTE "${l}")
    get_filename_component(d "${l}" DIRECTORY)
    get_filename_component(n "${l}" NAME_WE)
    string(REGEX REPLACE "^lib" "" n "${n}")
    if(NOT d IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES AND NOT OVL_PC_LIBS_PRIVATE MATCHES " -L${d} ")
      set(OVL_PC_LIBS_PRIVATE "${OVL_PC_LIBS_PRIVATE} -L${d}")
    endif()
    set(OVL_PC_LIBS_PRIVATE "${OVL_PC_LIBS_PRIVATE} -l${n}")
  else()
    set(OVL_PC_LIBS_PRIVATE "${OVL_PC_LIBS_PRIVATE} -l${l}")
  endif()
endforeach()
list(REMOVE_DUPLICATES OVL_PACKAGE_DEPENDENCIES)
list(REMOVE_DUPLICATES OVL_PC_REQUIRES_PRIVATE)
string(STRIP "${OVL_PC_LIBS_PRIVATE}" OVL_PC_LIBS_PRIVATE)
string(REPLACE ";" " " OVL_PC_REQUIRES_PRIVATE "${OVL_PC_REQUIRES_PRIVATE}")
set(OVL_CONFIG_DEPENDENCIES)
foreach(dep IN LISTS OVL_PACKAGE_DEPENDENCIES)
  string(APPEND OVL_CONFIG_DEPENDENCIES "find_dependency(${dep})\n")
endforeach()

# The CMake package. libovl.a's link interface names the plain libraries by
# their paths on this machine; the installed package names them ovl::lib_<name>
# instead, which ovlConfig.cmake defines by finding each again (a hint: the
# directory it was found in here; failing that, the bare name for the linker).
get_target_property(OVL_IFACE ovl INTERFACE_LINK_LIBRARIES)
set(OVL_IFACE_NEW)
set(OVL_CONFIG_LIBS)
foreach(item IN LISTS OVL_IFACE)
  set(lib "${item}")
  set(only "")
  if(item MATCHES "^\\$<LINK_ONLY:([^<>]*)>$")
    set(lib "${CMAKE_MATCH_1}")
    set(only 1)
  endif()
  if(IS_ABSOLUTE "${lib}" AND NOT IS_DIRECTORY "${lib}")
    get_filename_component(d "${lib}" DIRECTORY)
    get_filename_component(n "${lib}" NAME_WE)
    string(REGEX REPLACE "^lib" "" n "${n}")
    string(MAKE_C_IDENTIFIER "${n}" id)
    set(b "$<BUILD_INTERFACE:${lib}>")
    set(i "$<INSTALL_INTERFACE:ovl::lib_${id}>")
    if(only)
      list(APPEND OVL_IFACE_NEW "$<LINK_ONLY:${b}>" "$<LINK_ONLY:${i}>")
    else()
      list(APPEND OVL_IFACE_NEW "${b}" "${i}")
    endif()
    string(APPEND OVL_CONFIG_LIBS "ovl_lib(${id} ${n} \"${d}\")\n")
  else()
    list(APPEND OVL_IFACE_NEW "${item}")
  endif()
endforeach()
set_property(TARGET ovl PROPERTY INTERFACE_LINK_LIBRARIES "${OVL_IFACE_NEW}")
set(OVL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ovl)
install(EXPORT ovlTargets NAMESPACE ovl:: DESTINATION ${OVL_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ovlConfig.cmake.in
  ${PROJECT_BINARY_DIR}/ovlConfig.cmake INSTALL_DESTINATION ${OVL_CMAKE_DIR})
# 0.x: a new minor version may change the API (the SONAME carries MAJOR.MINOR too).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ovlConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ovlConfig.cmake ${PROJECT_BINARY_DIR}/ovlConfigVersion.cmake
        DESTINATION ${OVL_CMAKE_DIR})

# pkg-config: paths relative to the .pc file, so that the install prefix can
# be chosen at install time (cmake --install build --prefix DIR); for /usr
# (a distribution's package) the plain path, which pkg-config recognises as
# the system's and leaves out of --cflags and --libs.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}"
   OR CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(OVL_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH rel "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
  string(REGEX REPLACE "/$" "" rel "${rel}")
  set(OVL_PC_PREFIX "\${pcfiledir}/${rel}")
endif()
foreach(v LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${v}}")
    set(OVL_PC_${v} "${CMAKE_INSTALL_${v}}")
  else()
    set(OVL_PC_${v} "\${prefix}/${CMAKE_INSTALL_${v}}")
  endif()
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/ovl.pc.in ${PROJECT_BINARY_DIR}/ovl.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/ovl.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
