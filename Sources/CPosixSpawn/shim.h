// posix_spawn_file_actions_addclosefrom_np (glibc 2.34+), which <spawn.h> declares
// only under _GNU_SOURCE: Swift's Glibc module is built without it.
// A child spawned while another thread holds a descriptor opened without O_CLOEXEC
// (libasound's popen for a `file "|cmd"` PCM) must not keep a copy: that pipe would
// never reach its end and the PCM's close would wait forever.
#ifndef AUDIOROUTE_CPOSIXSPAWN_SHIM_H
#define AUDIOROUTE_CPOSIXSPAWN_SHIM_H
#include <spawn.h>

extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
#endif
