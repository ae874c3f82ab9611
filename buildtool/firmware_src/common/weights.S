/* Places the flash image weights.bin (written by buildtool.flash) in the
   read-only .bt_weights section; the generated model reads tensors in
   place at their offsets from bt_weights. BT_WEIGHTS_FILE is a quoted path. */
#ifndef BT_WEIGHTS_ALIGN
#define BT_WEIGHTS_ALIGN 64
#endif
  .section .bt_weights,"a"
  .balign BT_WEIGHTS_ALIGN
  .globl bt_weights
bt_weights:
  .incbin BT_WEIGHTS_FILE
  .globl bt_weights_end
bt_weights_end:
#if defined(__linux__) && defined(__ELF__)
  .section .note.GNU-stack,"",@progbits
#endif
