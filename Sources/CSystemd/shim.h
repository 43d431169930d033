// sd-bus and sd_notify from libsystemd. Nothing else: poll, eventfd and friends are in CLinux.
#ifndef AUDIOROUTE_CSYSTEMD_SHIM_H
#define AUDIOROUTE_CSYSTEMD_SHIM_H
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#endif
