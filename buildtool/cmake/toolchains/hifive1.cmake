# buildtool board hifive1: riscv64-unknown-elf-gcc; buildtool_add_model without BOARD builds for it.
include("${CMAKE_CURRENT_LIST_DIR}/riscv64-unknown-elf.cmake")
set(BUILDTOOL_BOARD hifive1)
