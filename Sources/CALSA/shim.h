#ifndef AUDIOROUTE_CALSA_SHIM_H
#define AUDIOROUTE_CALSA_SHIM_H
#include <alsa/asoundlib.h>
#endif
