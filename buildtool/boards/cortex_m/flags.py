"""The compile and link flags every Cortex-M board shares (the QEMU machines, the Helium board and the
real parts): Thumb, -O2, freestanding C with sections for --gc-sections, no C library but libgcc."""

COMMON = ("-mthumb", "-O2", "-g", "-std=gnu11", "-ffreestanding", "-ffunction-sections", "-fdata-sections")
LD = ("-nostdlib", "-nostartfiles", "-Wl,--gc-sections", "-lgcc")
