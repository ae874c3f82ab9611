/* fused.c -- the reference set's fused kernels: fused_ref.h, which other sets include under their own names
 * for the cases they leave to the reference code (a .c file in an export compiles on its own). */
#include "fused_ref.h"
