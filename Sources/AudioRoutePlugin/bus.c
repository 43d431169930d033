// The PCM's session in audiorouted's tower, over D-Bus (sd-bus): opened with the PCM's category,
// activated when data first flows, deactivated with notifyOthers at close. The daemon's signals
// (docs/dbus-api.md) set the stream's `struct ar_tower`; what they do to the frames is the PCM's (transfer.c, hold.c).
//
// No thread: the connection is served by the thread that transfers, at each period boundary and
// while a writer is held (it polls the bus). The daemon does not wait on us, so a slow or paused
// app only delays when it hears the tower. A daemon that is not there is the normal state of a
// machine without AudioRoute running: the stream then simply follows the route file.
#include "audioroute_bus.h"
#include "audioroute_contract.h"

#include <alsa/asoundlib.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <stdarg.h>

/// A daemon that does not answer within this long is treated as absent. The calls that wait for
/// an answer run on the app's thread (the open, and the activation before the first frames), so
/// the deadline is short: the daemon answers in about a millisecond (docs/benchmarks.md), and a
/// stopped daemon or a name squatter costs an open at most this much (it was 2 s).
#define AR_CALL_TIMEOUT_USEC (250 * 1000)

struct ar_bus {
	sd_bus *bus;
	/// The daemon's unique name: only its signals are believed.
	char owner[128];
	/// The session's object path, "" while there is none.
	char path[128];
	char app[64];
	const struct ar_args *args;
	struct ar_tower *tower;
	/// An interruption ended with shouldResume while processing: activate once processing is done.
	int resume;
	/// The daemon changed owner while processing: open the session again once processing is done.
	int reopen;
	/// The tower was lost (the daemon left, or the bus went away) and the caller has not been told.
	int lost;
	/// The bus itself went away: nothing more is read or sent.
	int dead;
	/// While the session is being opened, the daemon's refusal is kept here, not printed: the
	/// caller says it once, with what follows from it.
	int quiet;
	char error[256];
};

/// Sends `m` (built with `built`, the result of the calls that built it) and waits for the reply;
/// says which call the daemon refused, and why. Frees `m`.
static int send_call(struct ar_bus *b, sd_bus_message *m, int built, sd_bus_message **reply) {
	sd_bus_error error = SD_BUS_ERROR_NULL;
	int r = built >= 0 ? sd_bus_call(b->bus, m, AR_CALL_TIMEOUT_USEC, &error, reply) : built;
	if (r < 0) {
		snprintf(b->error, sizeof(b->error), "%s: %s", sd_bus_message_get_member(m) != NULL ? sd_bus_message_get_member(m) : "a call",
				sd_bus_error_is_set(&error) && error.message != NULL ? error.message : strerror(-r));
		if (!b->quiet && sd_bus_error_is_set(&error))
			SNDERR("audioroute: %s.%s: %s", sd_bus_message_get_interface(m), sd_bus_message_get_member(m), error.message);
	}
	sd_bus_error_free(&error);
	sd_bus_message_unref(m);
	return r;
}

static int call(struct ar_bus *b, sd_bus_message **reply, const char *path, const char *interface, const char *member,
		const char *types, ...) {
	sd_bus_message *m = NULL;
	int r = sd_bus_message_new_method_call(b->bus, &m, AR_BUS_NAME, path, interface, member);
	if (r >= 0 && types != NULL) {
		va_list ap;
		va_start(ap, types);
		r = sd_bus_message_appendv(m, types, ap);
		va_end(ap);
	}
	return send_call(b, m, r, reply);
}

/// OpenSession, then SetCategory with the PCM's arguments.
static int open_session(struct ar_bus *b) {
	sd_bus_message *reply = NULL, *m = NULL;
	const char *path;
	b->path[0] = '\0';
	int r = call(b, &reply, AR_MANAGER_PATH, AR_MANAGER_INTERFACE, AR_METHOD_OPEN_SESSION, AR_METHOD_OPEN_SESSION_IN, b->app);
	if (r >= 0 && (r = sd_bus_message_read(reply, AR_METHOD_OPEN_SESSION_OUT, &path)) >= 0)
		snprintf(b->path, sizeof(b->path), "%s", path);
	sd_bus_message_unref(reply);
	if (r < 0)
		return r;
	char *options[sizeof(b->args->option_names) * 8 + 1];
	size_t count = 0;
	for (int i = 0; ar_name(AR_OPTIONS, i, NULL) != NULL; i++)
		if (b->args->option_names & (1UL << i))
			options[count++] = (char *)ar_name(AR_OPTIONS, i, NULL);
	options[count] = NULL;
	r = sd_bus_message_new_method_call(b->bus, &m, AR_BUS_NAME, b->path, AR_SESSION_INTERFACE, AR_METHOD_SET_CATEGORY);
	// AR_METHOD_SET_CATEGORY_IN, "ssas": the category and mode, then the options.
	if (r >= 0)
		r = sd_bus_message_append(m, "ss", b->args->category, b->args->mode);
	if (r >= 0)
		r = sd_bus_message_append_strv(m, options);
	return send_call(b, m, r, NULL);
}

/// Every message the connection receives: the daemon's signals (a session's are sent to its owner
/// only), and the bus driver's NameOwnerChanged for the daemon's name.
static int on_message(sd_bus_message *m, void *userdata, sd_bus_error *error) {
	(void)error;
	struct ar_bus *b = userdata;
	if (sd_bus_message_is_signal(m, NULL, NULL) <= 0)
		return 0;
	const char *sender = sd_bus_message_get_sender(m), *member = sd_bus_message_get_member(m);
	if (sender == NULL || member == NULL)
		return 0;
	if (strcmp(sender, "org.freedesktop.DBus") == 0 && strcmp(member, "NameOwnerChanged") == 0) {
		const char *name, *old_owner, *new_owner;
		if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0 || strcmp(name, AR_BUS_NAME) != 0)
			return 0;
		if (b->owner[0] != '\0') {
			ar_tower_lost(b->tower);
			b->lost = b->lost || b->path[0] != '\0';
			b->path[0] = '\0';
		}
		snprintf(b->owner, sizeof(b->owner), "%s", new_owner);
		b->reopen = new_owner[0] != '\0';
		return 0;
	}
	if (b->owner[0] == '\0' || strcmp(sender, b->owner) != 0)
		return 0;
	if (sd_bus_message_is_signal(m, AR_MANAGER_INTERFACE, AR_SIGNAL_ROUTE_CHANGED)) {
		ar_tower_signal(b->tower, member, "", "", 0);
		return 0;
	}
	const char *path = sd_bus_message_get_path(m);
	if (!sd_bus_message_is_signal(m, AR_SESSION_INTERFACE, NULL) || path == NULL || strcmp(path, b->path) != 0)
		return 0;
	const char *kind = "", *reason = "";
	int should_resume = 0;
	if (strcmp(member, AR_SIGNAL_INTERRUPTION) == 0 && sd_bus_message_read(m, AR_SIGNAL_INTERRUPTION_SIGNATURE, &kind, &reason, &should_resume) < 0)
		return 0;  // a malformed signal is ignored, not half applied
	if (ar_tower_signal(b->tower, member, kind, reason, should_resume) == AR_TOWER_RESUME)
		b->resume = 1;
	return 0;
}

/// `text` into `out` as valid UTF-8: each byte that does not start a well-formed sequence (a
/// process name is any 15 bytes) becomes '?', so that D-Bus, which takes only UTF-8, takes it.
static void valid_utf8(char *out, size_t size, const char *text) {
	const unsigned char *in = (const unsigned char *)text;
	size_t o = 0;
	while (*in != '\0' && o + 1 < size) {
		size_t length = *in < 0x80 ? 1 : (*in & 0xE0) == 0xC0 && *in >= 0xC2 ? 2 : (*in & 0xF0) == 0xE0 ? 3
			: (*in & 0xF8) == 0xF0 && *in <= 0xF4 ? 4 : 0;
		for (size_t i = 1; i < length; i++)
			if ((in[i] & 0xC0) != 0x80)
				length = 0;  // also stops at the terminating NUL
		// Overlong three-byte forms, surrogates, and code points above U+10FFFF are not UTF-8.
		if (length == 3 && ((in[0] == 0xE0 && in[1] < 0xA0) || (in[0] == 0xED && in[1] >= 0xA0)))
			length = 0;
		if (length == 4 && ((in[0] == 0xF0 && in[1] < 0x90) || (in[0] == 0xF4 && in[1] >= 0x90)))
			length = 0;
		if (length == 0 || *in < 0x20 || *in == 0x7F) {
			out[o++] = '?';
			in++;
			continue;
		}
		if (o + length >= size)
			break;
		memcpy(out + o, in, length);
		o += length;
		in += length;
	}
	out[o] = '\0';
}

int ar_bus_open(struct ar_bus **out, int system, const char *app, const struct ar_args *args, struct ar_tower *tower) {
	*out = NULL;
	struct ar_bus *b = calloc(1, sizeof(*b));
	if (b == NULL)
		return -ENOMEM;
	b->args = args;
	b->tower = tower;
	valid_utf8(b->app, sizeof(b->app), app);
	int r = system ? sd_bus_open_system(&b->bus) : sd_bus_open_user(&b->bus);
	sd_bus_message *reply = NULL;
	const char *owner;
	if (r >= 0)
		r = sd_bus_add_filter(b->bus, NULL, on_message, b);
	// The daemon's signals: RouteChanged (broadcast) and its name's owner; a session's own
	// signals are unicast to us and need no match.
	if (r >= 0)
		r = sd_bus_call_method(b->bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "AddMatch", NULL, NULL,
				"s", "type='signal',sender='" AR_BUS_NAME "',interface='" AR_MANAGER_INTERFACE "',member='RouteChanged'");
	if (r >= 0)
		r = sd_bus_call_method(b->bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "AddMatch", NULL, NULL,
				"s", "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='" AR_BUS_NAME "'");
	if (r >= 0)
		r = sd_bus_call_method(b->bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner", NULL, &reply,
				"s", AR_BUS_NAME);
	if (r >= 0 && (r = sd_bus_message_read(reply, "s", &owner)) >= 0)
		snprintf(b->owner, sizeof(b->owner), "%s", owner);
	sd_bus_message_unref(reply);
	if (r >= 0) {
		b->quiet = 1;
		r = open_session(b);
		b->quiet = 0;
		// A daemon that is there and gives no session: the app would never know why the tower
		// does not see it (before, only AUDIOROUTE_DEBUG's trace said so).
		if (r < 0 && r != -ENOMEM)
			SNDERR("audioroute: the tower (audiorouted) gave this stream no session (%s): it plays outside the tower, "
					"with no interruption, ducking or silent mode", b->error);
	}
	if (r < 0) {
		// No bus, no daemon, or one that refused us: the stream follows the route file alone.
		ar_bus_close(b);
		return r == -ENOMEM ? r : 0;
	}
	*out = b;
	return 0;
}

int ar_bus_fd(const struct ar_bus *b) { return b->dead ? -1 : sd_bus_get_fd(b->bus); }

int ar_bus_take_lost(struct ar_bus *b) {
	int lost = b->lost;
	b->lost = 0;
	return lost;
}

int ar_bus_connected(const struct ar_bus *b) { return b != NULL && b->path[0] != '\0'; }

int ar_bus_set_active(struct ar_bus *b, int active, int notify_others) {
	if (b->path[0] == '\0')
		return -ENOTCONN;
	int r = call(b, NULL, b->path, AR_SESSION_INTERFACE, AR_METHOD_SET_ACTIVE, AR_METHOD_SET_ACTIVE_IN, active, notify_others);
	if (r >= 0)
		b->tower->active = active;
	return r;
}

int ar_bus_process(struct ar_bus *b) {
	int r;
	if (b->dead)
		return 0;
	while ((r = sd_bus_process(b->bus, NULL)) > 0)
		;
	if (sd_bus_is_open(b->bus) <= 0) {
		// The bus went away (its daemon killed): no daemon can speak for the stream any more.
		b->dead = 1;
		b->lost = b->lost || b->path[0] != '\0';
		ar_tower_lost(b->tower);
		b->path[0] = b->owner[0] = '\0';
		b->reopen = b->resume = 0;
		return 0;
	}
	if (b->reopen) {
		// A new daemon: the session is opened again and, if it was active, activated again.
		int was_active = b->tower->active || b->resume;
		b->reopen = 0;
		if (open_session(b) >= 0 && was_active)
			ar_bus_set_active(b, 1, 0);
	}
	if (b->resume) {
		b->resume = 0;
		ar_bus_set_active(b, 1, 0);
	}
	return r;
}

int ar_bus_wait(struct ar_bus *b, int other_fd, int timeout_ms) {
	int events = b->dead ? 0 : sd_bus_get_events(b->bus);
	struct pollfd fds[2] = {
		{ .fd = b->dead || events < 0 ? -1 : sd_bus_get_fd(b->bus), .events = (short)(events < 0 ? 0 : events) },
		{ .fd = other_fd, .events = POLLIN },
	};
	if (fds[0].fd < 0 && other_fd < 0 && timeout_ms < 0)
		return 0;  // nothing could wake us: the caller looks again
	int r = poll(fds, 2, timeout_ms);
	return r < 0 && errno != EINTR ? -errno : 0;
}

/// Sends a call whose answer nobody waits for: the daemon handles a connection's calls in order.
static void send_only(struct ar_bus *b, const char *member, const char *types, ...) {
	sd_bus_message *m = NULL;
	int r = sd_bus_message_new_method_call(b->bus, &m, AR_BUS_NAME, b->path, AR_SESSION_INTERFACE, member);
	if (r >= 0 && types != NULL) {
		va_list ap;
		va_start(ap, types);
		r = sd_bus_message_appendv(m, types, ap);
		va_end(ap);
	}
	if (r >= 0 && (r = sd_bus_message_set_expect_reply(m, 0)) >= 0)
		sd_bus_send(b->bus, m, NULL);
	sd_bus_message_unref(m);
}

void ar_bus_close(struct ar_bus *b) {
	if (b == NULL)
		return;
	if (b->path[0] != '\0' && !b->dead) {
		// Deactivated with notifyOthers, as a client that goes away is (spec section 7); then
		// closed. Neither waits for its answer: a stopped daemon held the app's close for 4 s. The
		// flush below writes them; the daemon would also deactivate and close the session when
		// the connection goes.
		if (b->tower->active)
			send_only(b, AR_METHOD_SET_ACTIVE, AR_METHOD_SET_ACTIVE_IN, 0, 1);
		send_only(b, AR_METHOD_CLOSE, NULL);
	}
	if (b->bus != NULL)
		sd_bus_flush_close_unref(b->bus);
	free(b);
}
