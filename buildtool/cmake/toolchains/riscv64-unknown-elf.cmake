# Bare-metal RISC-V (Debian's riscv64-unknown-elf-gcc) for buildtool's rv32 boards. The -march/-mabi
# flags come from the board (buildtool_add_model); prefer the per-board files (riscv32.cmake, hifive1.cmake).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv32)
set(CMAKE_C_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_ASM_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)  # no start-up code yet: compile checks only
