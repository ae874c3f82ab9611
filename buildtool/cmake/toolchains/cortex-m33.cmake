# buildtool board cortex-m33: arm-none-eabi-gcc; buildtool_add_model without BOARD builds for it.
include("${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake")
set(BUILDTOOL_BOARD cortex-m33)
