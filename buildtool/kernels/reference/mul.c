/* mul.c -- the reference set's mul kernels: mul_ref.h, which other sets include under their own names
 * for the cases they leave to the reference code (a .c file in an export compiles on its own). */
#include "mul_ref.h"
