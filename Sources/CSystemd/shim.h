// sd-bus, and the poll/eventfd/signalfd calls of the daemon's loops (Glibc's module map
// exports none of the three headers).
#ifndef AUDIOROUTE_CSYSTEMD_SHIM_H
#define AUDIOROUTE_CSYSTEMD_SHIM_H
#include <systemd/sd-bus.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>

// The credentials the D-Bus server checks: 1ULL << 63 enum constants do not
// combine well in Swift's type checker.
static inline uint64_t audioroute_caller_creds_mask(void) {
    return SD_BUS_CREDS_UID | SD_BUS_CREDS_EUID | SD_BUS_CREDS_EGID | SD_BUS_CREDS_SUPPLEMENTARY_GIDS |
           SD_BUS_CREDS_PID | SD_BUS_CREDS_AUGMENT;
}
#endif
