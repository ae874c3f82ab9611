# Bare-metal Arm (Debian's arm-none-eabi-gcc) for buildtool's Cortex-M boards. The CPU flags come
# from the board (buildtool_add_model), not from here; prefer the per-board files (cortex-m4.cmake ...).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)  # no start-up code yet: compile checks only
