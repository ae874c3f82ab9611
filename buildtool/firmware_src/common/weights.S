/* Places the flash image weights.bin (written by buildtool.flash) in the
   read-only .bt_weights section; the generated model reads tensors in
   place at their offsets from bt_weights. BT_WEIGHTS_FILE is a quoted path.
   A multi-model firmware assembles this once per model with BT_WEIGHTS_SYM
   and BT_WEIGHTS_END_SYM naming that model's image (<prefix>_weights). */
#ifndef BT_WEIGHTS_ALIGN
#define BT_WEIGHTS_ALIGN 64
#endif
#ifndef BT_WEIGHTS_SYM
#define BT_WEIGHTS_SYM bt_weights
#define BT_WEIGHTS_END_SYM bt_weights_end
#endif
  .section .bt_weights,"a"
  .balign BT_WEIGHTS_ALIGN
  .globl BT_WEIGHTS_SYM
BT_WEIGHTS_SYM:
  .incbin BT_WEIGHTS_FILE
  .globl BT_WEIGHTS_END_SYM
BT_WEIGHTS_END_SYM:
#if defined(__linux__) && defined(__ELF__)
  .section .note.GNU-stack,"",@progbits
#endif
