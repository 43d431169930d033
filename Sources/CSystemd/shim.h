// sd-bus and the poll/eventfd calls the BlueZ watcher's loop needs.
#ifndef AUDIOROUTE_CSYSTEMD_SHIM_H
#define AUDIOROUTE_CSYSTEMD_SHIM_H
#include <systemd/sd-bus.h>
#include <poll.h>
#include <sys/eventfd.h>
#endif
