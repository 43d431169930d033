// The PCM's session in audiorouted's tower, over D-Bus (bus.c). Apart from audioroute_plugin.h:
// it needs a daemon on a bus, so the tests reach it through aplay, not by calling it.
#ifndef AUDIOROUTE_BUS_H
#define AUDIOROUTE_BUS_H

#include "audioroute_plugin.h"

#pragma GCC visibility push(hidden)

struct ar_bus;

/// Connects to the session bus (the system bus when `system`), opens a session named `app` in the
/// daemon's tower with `args`' category, mode and options, and keeps `tower` up to date from its
/// signals. No bus, no daemon or a refusal is not an error: 0 with `*out` NULL (the stream then
/// follows the route file alone); a daemon that is there but gives no session is said on standard
/// error, once, with its reason. -ENOMEM only.
int ar_bus_open(struct ar_bus **out, int system, const char *app, const struct ar_args *args, struct ar_tower *tower);
/// 1 once after the tower was lost (its daemon left the bus, or the bus itself went away): the
/// caller says so, once. With the bus gone, `ar_bus_fd` is -1 from then on.
int ar_bus_take_lost(struct ar_bus *bus);
/// The connection's descriptor, for a poll set; -1 once the bus went away.
int ar_bus_fd(const struct ar_bus *bus);
/// Whether the session is open in a daemon (it may go away and come back).
int ar_bus_connected(const struct ar_bus *bus);
/// SetActive on the session; `tower->active` follows when the daemon accepts.
int ar_bus_set_active(struct ar_bus *bus, int active, int notify_others);
/// Handles every message received so far, without blocking; activates again after an
/// interruption ended with shouldResume, and opens the session again in a restarted daemon.
int ar_bus_process(struct ar_bus *bus);
/// Waits until the bus (or `other_fd`, when not negative) has something, or `timeout_ms` (-1: forever).
int ar_bus_wait(struct ar_bus *bus, int other_fd, int timeout_ms);
/// Deactivates the session with notifyOthers if it is active, closes it, and disconnects. NULL is fine.
void ar_bus_close(struct ar_bus *bus);

#pragma GCC visibility pop

#endif
