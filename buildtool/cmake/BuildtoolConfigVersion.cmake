# find_package(Buildtool <version>): compatible when the installed version is at least the one asked for
# (same major version).
set(PACKAGE_VERSION "0.1.0")
if(PACKAGE_FIND_VERSION AND (PACKAGE_VERSION VERSION_LESS PACKAGE_FIND_VERSION
                             OR NOT PACKAGE_FIND_VERSION_MAJOR EQUAL 0))
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
