#ifndef AUDIOROUTE_CALSA_SHIM_H
#define AUDIOROUTE_CALSA_SHIM_H
#include <alsa/asoundlib.h>
/* The UCM API (snd_use_case_*): asoundlib.h does not include it. */
#include <alsa/use-case.h>

/* snd_use_case_get hands back a malloc'd string the caller frees with free();
 * AudioRouteALSA does not import Glibc (only AudioRouteSystem does). */
static inline void audioroute_ucm_free_string(const char *value) { free((void *)value); }
#endif
