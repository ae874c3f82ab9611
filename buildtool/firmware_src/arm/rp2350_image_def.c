/* RP2350: the boot ROM runs a flash image only when it finds a block of image metadata (an IMAGE_DEF)
   within the first 4 KiB of flash. This is the smallest one for Arm code, secure, with no other items:
   the block start marker, one IMAGE_TYPE item (exe, secure, Arm, RP2350), the last-item marker with
   the items' size in words, a zero link (the block loops to itself), the end marker (RP2350 datasheet,
   section 5.9, "Metadata block details" / "Minimum viable image metadata"). With no VECTOR_TABLE item
   the ROM takes the vector table at the start of the image (0x10000000): the linker script puts this
   block right after it (.bt_boot_block). */
#include <stdint.h>

__attribute__((section(".bt_boot_block"), used)) const uint32_t bt_rp2350_image_def[5] = {
    0xffffded3u, /* PICOBIN_BLOCK_MARKER_START */
    0x10210142u, /* item IMAGE_TYPE (0x42), 1 word: EXE | SECURITY_S | CPU_ARM | CHIP_RP2350 (0x1021) */
    0x000001ffu, /* item LAST (0xff): the items before it are 1 word */
    0x00000000u, /* link to the next block: 0, this block alone */
    0xab123579u, /* PICOBIN_BLOCK_MARKER_END */
};
