/* Per-operator profiling markers for emulated boards. The generated model
   calls bt_profile_begin/bt_profile_end around every operator; the QEMU
   instruction-count plugin (tools/qemu-insncount) is given their addresses
   and counts the instructions of each begin..end region. The bodies differ
   (two different globals) so the compiler cannot fold them into one. */
volatile int bt_prof_begun = -1, bt_prof_ended = -1;

__attribute__((noinline, used)) void bt_profile_begin(int op) { bt_prof_begun = op; }
__attribute__((noinline, used)) void bt_profile_end(int op) { bt_prof_ended = op; }
