# Install rules (included from the top-level CMakeLists.txt when OVL_INSTALL):
#   <prefix>/include/ovl/*.h                the public headers and the generated ovl/version.h
#   <prefix>/include/ovl/fortran/           the Fortran module files (ovl_mod.mod)
#   <libdir>/libovl.so.X.Y.Z, libovl.a      shared (SONAME libovl.so.MAJOR.MINOR) and static
#   <libdir>/libovl_fortran.a               the Fortran module's code
#   <libdir>/cmake/ovl/                     find_package(ovl): ovl::ovl (shared), ovl::ovl_static, ovl::fortran
#   <libdir>/pkgconfig/ovl.pc               pkg-config ovl (--static: libovl.a and what it links)
#   <libdir>/pkgconfig/ovl-fortran.pc       pkg-config ovl-fortran (the module, MPI's Fortran flags, ScaLAPACK)
#   <libdir>/pkgconfig/ovl-shared.pc        libovl.so, which ovl.pc requires (use ovl)
#   <bindir>/ovl                            the command
include(CMakePackageConfigHelpers)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ovl DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/include/ovl/version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ovl)
set(OVL_INSTALL_TARGETS ovl)
foreach(t ovl_shared ovl_fortran)
  if(TARGET ${t})
    list(APPEND OVL_INSTALL_TARGETS ${t})
  endif()
endforeach()
install(TARGETS ${OVL_INSTALL_TARGETS} EXPORT ovlTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET ovl_fortran)
  install(FILES $<TARGET_PROPERTY:ovl_fortran,Fortran_MODULE_DIRECTORY>/ovl_mod.mod
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ovl/fortran)
endif()
if(TARGET ovl_cli)
  install(TARGETS ovl_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# pkg-config flags for libraries given as CMake link items: a file path
# becomes -L<dir> (unless the compiler searches it anyway) and -l<name>, a
# bare name -l<name>; MPI's and generator-expression items are left out.
function(ovl_pc_libs out)
  set(flags "")
  foreach(l IN LISTS ARGN)
    if(l MATCHES "^MPI::" OR l MATCHES "^\\$<" OR TARGET ${l})
      continue()
    elseif(IS_ABSOLUTE "${l}")
      get_filename_component(d "${l}" DIRECTORY)
      get_filename_component(n "${l}" NAME_WE)
      string(REGEX REPLACE "^lib" "" n "${n}")
      if(NOT d IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES AND NOT " ${flags} " MATCHES " -L${d} ")
        string(APPEND flags " -L${d}")
      endif()
      string(APPEND flags " -l${n}")
    else()
      string(APPEND flags " -l${l}")
    endif()
  endforeach()
  string(STRIP "${flags}" flags)
  set(${out} "${flags}" PARENT_SCOPE)
endfunction()

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
list(APPEND OVL_PC_REQUIRES_PRIVATE)
list(APPEND OVL_PACKAGE_DEPENDENCIES)
set(OVL_PC_PLAIN_LINKS)
foreach(l IN LISTS OVL_LINKS)
  if(l STREQUAL "cjson" OR l STREQUAL "cjson::cjson")
    list(APPEND OVL_PACKAGE_DEPENDENCIES cJSON)
    list(APPEND OVL_PC_REQUIRES_PRIVATE libcjson)
  elseif(TARGET ${l} AND NOT l MATCHES "^MPI::")
    message(WARNING "ovl: ovl.pc and ovlConfig.cmake do not know the package of '${l}': "
                    "add it to OVL_PACKAGE_DEPENDENCIES and OVL_PC_REQUIRES_PRIVATE (cmake/install.cmake)")
  else()
    list(APPEND OVL_PC_PLAIN_LINKS "${l}")
  endif()
endforeach()
ovl_pc_libs(OVL_PC_LIBS_PRIVATE ${OVL_PC_PLAIN_LINKS})
list(REMOVE_DUPLICATES OVL_PACKAGE_DEPENDENCIES)
list(REMOVE_DUPLICATES OVL_PC_REQUIRES_PRIVATE)
string(REPLACE ";" " " OVL_PC_REQUIRES_PRIVATE "${OVL_PC_REQUIRES_PRIVATE}")
set(OVL_CONFIG_DEPENDENCIES)
foreach(dep IN LISTS OVL_PACKAGE_DEPENDENCIES)
  string(APPEND OVL_CONFIG_DEPENDENCIES "find_dependency(${dep})\n")
endforeach()

# The CMake package. The targets' link interfaces name MPI by the target of
# the C language (MPI::MPI_C) and the plain libraries by their paths on this
# machine; the installed package names them ovl::mpi (defined by
# ovlConfig.cmake from the languages the project enabled: a C++-only or
# Fortran-only project has no MPI::MPI_C), ovl::mpi_fortran, and
# ovl::lib_<name>, which ovlConfig.cmake defines by finding each library
# again (a hint: the directory it was found in here; failing that, the bare
# name for the linker).
set(OVL_CONFIG_LIBS)
function(ovl_install_interface target)
  get_target_property(iface ${target} INTERFACE_LINK_LIBRARIES)
  if(NOT iface)
    return()
  endif()
  set(new)
  foreach(item IN LISTS iface)
    set(lib "${item}")
    set(only "")
    if(item MATCHES "^\\$<LINK_ONLY:([^<>]*)>$")
      set(lib "${CMAKE_MATCH_1}")
      set(only 1)
    endif()
    set(b "")
    if(lib STREQUAL "MPI::MPI_C")
      set(b "$<BUILD_INTERFACE:${lib}>")
      set(i "$<INSTALL_INTERFACE:ovl::mpi>")
    elseif(lib STREQUAL "MPI::MPI_Fortran")
      set(b "$<BUILD_INTERFACE:${lib}>")
      set(i "$<INSTALL_INTERFACE:ovl::mpi_fortran>")
    elseif(IS_ABSOLUTE "${lib}" AND NOT IS_DIRECTORY "${lib}")
      get_filename_component(d "${lib}" DIRECTORY)
      get_filename_component(n "${lib}" NAME_WE)
      string(REGEX REPLACE "^lib" "" n "${n}")
      string(MAKE_C_IDENTIFIER "${n}" id)
      set(b "$<BUILD_INTERFACE:${lib}>")
      set(i "$<INSTALL_INTERFACE:ovl::lib_${id}>")
      if(NOT OVL_CONFIG_LIBS MATCHES "ovl_lib\\(${id} ")
        string(APPEND OVL_CONFIG_LIBS "ovl_lib(${id} ${n} \"${d}\")\n")
      endif()
    endif()
    if(NOT b)
      list(APPEND new "${item}")
    elseif(only)
      list(APPEND new "$<LINK_ONLY:${b}>" "$<LINK_ONLY:${i}>")
    else()
      list(APPEND new "${b}" "${i}")
    endif()
  endforeach()
  set_property(TARGET ${target} PROPERTY INTERFACE_LINK_LIBRARIES "${new}")
  set(OVL_CONFIG_LIBS "${OVL_CONFIG_LIBS}" PARENT_SCOPE)
endfunction()
foreach(t IN LISTS OVL_INSTALL_TARGETS)
  ovl_install_interface(${t})
endforeach()
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
# ovl.pc names libovl.so through ovl-shared.pc (Requires) and libovl.a in
# Libs.private: pkg-config --static puts libovl.a (and what it links) before
# libovl.so, whose --as-needed then keeps the program from loading it; without
# --static the program links libovl.so. A build without libovl.so: -lovl.
if(TARGET ovl_shared)
  set(OVL_PC_REQUIRES "${OVL_PC_MPI} ovl-shared")
  set(OVL_PC_LIBS "-L\${libdir}")
  set(OVL_PC_LIBS_PRIVATE "\${libdir}/libovl.a ${OVL_PC_LIBS_PRIVATE}")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/ovl-shared.pc.in ${PROJECT_BINARY_DIR}/ovl-shared.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/ovl-shared.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
else()
  set(OVL_PC_REQUIRES "${OVL_PC_MPI}")
  set(OVL_PC_LIBS "-L\${libdir} -lovl")
endif()
configure_file(${PROJECT_SOURCE_DIR}/ovl.pc.in ${PROJECT_BINARY_DIR}/ovl.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/ovl.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
# ovl-fortran.pc: the module directory, libovl_fortran.a, the ScaLAPACK ovl
# was built with, and MPI's Fortran flags (Debian's ompi-fort.pc lacks the
# directory of mpi.mod: the flags come from the Fortran wrapper instead).
if(TARGET ovl_fortran)
  set(OVL_PC_FORTRAN_CFLAGS "-I\${includedir}/ovl/fortran")
  foreach(d IN LISTS MPI_Fortran_INCLUDE_DIRS)
    string(APPEND OVL_PC_FORTRAN_CFLAGS " -I${d}")
  endforeach()
  ovl_pc_libs(OVL_PC_FORTRAN_LIBS ${OVL_SCALAPACK_LIB} ${MPI_Fortran_LIBRARIES})
  set(OVL_PC_FORTRAN_LIBS "-L\${libdir} -lovl_fortran ${OVL_PC_FORTRAN_LIBS}")
  set(OVL_PC_FORTRAN_COMPILER "${CMAKE_Fortran_COMPILER_ID} Fortran ${CMAKE_Fortran_COMPILER_VERSION}")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/ovl-fortran.pc.in ${PROJECT_BINARY_DIR}/ovl-fortran.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/ovl-fortran.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
