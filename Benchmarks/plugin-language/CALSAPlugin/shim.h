#define PIC 1
#include <alsa/asoundlib.h>
#include <alsa/pcm_external.h>
#include <sys/eventfd.h>
#include <poll.h>
// A macro built from other macros does not import into Swift.
static const unsigned int audioroute_ioplug_version = SND_PCM_IOPLUG_VERSION;
