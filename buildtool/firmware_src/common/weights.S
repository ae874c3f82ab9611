/* Places the flash image weights.bin (written by buildtool.flash) in the
   read-only .bt_weights section; the generated model reads tensors in
   place at their offsets from bt_weights. BT_WEIGHTS_FILE is a quoted path.
   A multi-model firmware assembles this once per model with BT_WEIGHTS_SYM
   and BT_WEIGHTS_END_SYM naming that model's image (<prefix>_weights).
   BT_WEIGHTS_EXT_OFFSET (the image header's external-part offset, see
   buildtool/regions.py) splits the image: bytes from there on go to the
   section BT_WEIGHTS_EXT_SECTION (an external memory region) as
   bt_weights_ext. */
  .file "weights.S" /* not the compiler's temporary object name: the same inputs, the same image */
#ifndef BT_WEIGHTS_ALIGN
#define BT_WEIGHTS_ALIGN 64
#endif
#ifndef BT_WEIGHTS_SYM
#define BT_WEIGHTS_SYM bt_weights
#define BT_WEIGHTS_END_SYM bt_weights_end
#endif
#ifndef BT_WEIGHTS_SECTION /* a library for the user's own linker script: .rodata.bt_weights */
#define BT_WEIGHTS_SECTION .bt_weights
#endif
  .section BT_WEIGHTS_SECTION,"a"
  .balign BT_WEIGHTS_ALIGN
  .globl BT_WEIGHTS_SYM
BT_WEIGHTS_SYM:
#ifdef BT_WEIGHTS_EXT_OFFSET
  .incbin BT_WEIGHTS_FILE, 0, BT_WEIGHTS_EXT_OFFSET
  .globl BT_WEIGHTS_END_SYM
BT_WEIGHTS_END_SYM:
  .section BT_WEIGHTS_EXT_SECTION,"a"
  .balign 64
  .globl bt_weights_ext
bt_weights_ext:
  .incbin BT_WEIGHTS_FILE, BT_WEIGHTS_EXT_OFFSET
#else
  .incbin BT_WEIGHTS_FILE
  .globl BT_WEIGHTS_END_SYM
BT_WEIGHTS_END_SYM:
#endif
#if defined(__linux__) && defined(__ELF__)
  .section .note.GNU-stack,"",@progbits
#endif
