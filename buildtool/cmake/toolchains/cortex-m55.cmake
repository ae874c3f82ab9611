# buildtool board cortex-m55 (Helium/MVE, QEMU mps3-an547): arm-none-eabi-gcc 10.2 or later (-mcpu=cortex-m55,
# arm_mve.h); buildtool_add_model without BOARD builds for it.
include("${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake")
set(BUILDTOOL_BOARD cortex-m55)
