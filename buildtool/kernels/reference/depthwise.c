/* depthwise.c -- the reference set's depthwise kernels: depthwise_ref.h, which other sets include under their own names
 * for the cases they leave to the reference code (a .c file in an export compiles on its own). */
#include "depthwise_ref.h"
