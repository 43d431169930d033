// sd-bus, the poll/eventfd/signalfd calls of the daemon's loops and mallopt (Glibc's
// module map exports none of these headers).
#ifndef AUDIOROUTE_CSYSTEMD_SHIM_H
#define AUDIOROUTE_CSYSTEMD_SHIM_H
#include <systemd/sd-bus.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <malloc.h>
#endif
