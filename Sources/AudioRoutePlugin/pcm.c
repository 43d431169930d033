// The `audioroute` ALSA PCM (type audioroute): an ioplug that forwards frames to the device the
// current route names, and moves to the new route's device when the route changes.
//
// The route comes from the file audiorouted writes (docs/alsa.md): its `pcm.audioroute_route` (or
// `pcm.audioroute_route_capture`) definition is opened as the slave, as written, over the system's
// configuration. The PCM is also a session in the daemon's tower (bus.c): interrupted, it holds
// the writer; ducked, it applies the gain; silenced, it writes zeros. The plugin links libasound
// and libsystemd (sd-bus) only: no libudev, no libbluetooth.
// Frames pass straight through: a transfer is a blocking write (read) on the slave, so the
// slave paces the app; the plugin's own buffer is always empty and `delay` is the slave's.
#include "audioroute_bus.h"
#include "audioroute_contract.h"
#include "audioroute_follower.h"
#include "audioroute_mix.h"
#include "audioroute_plugin.h"

#define PIC 1  // alsa-lib's plugin symbols (SND_PCM_PLUGIN_SYMBOL) are those of a shared object
#include <alsa/asoundlib.h>
#include <alsa/pcm_external.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

struct ar_pcm {
	snd_pcm_ioplug_t io;
	struct ar_args args;
	/// The direction, known before snd_pcm_ioplug_create fills io.stream (the slave opens first).
	snd_pcm_stream_t stream;
	enum ar_state state;
	/// `audioroute_route` or `audioroute_route_capture`: the name the route file defines for this direction.
	char route_name[64];
	char route_file[PATH_MAX];
	/// The slave.pcm of the route's definition now open, to tell a real change from a rewrite.
	char device[512];
	/// The route file's text that named another device, kept for the move it causes: the move
	/// opens what was compared, and the file is read once per move (NULL: read it at the open).
	char *route_text;
	size_t route_length;
	snd_pcm_t *slave;
	/// The configuration the slave was opened from (the system's with the route file over it).
	snd_config_t *slave_config;
	/// The device a move left, played out and kept open a little longer (until `retired_until`,
	/// CLOCK_MONOTONIC ms): closed at once, its card's stream stopped with the last frames still
	/// in the hardware's own buffer past the ring (the emulated HDA's, 20-30 ms), and they were lost.
	snd_pcm_t *retired;
	snd_config_t *retired_config;
	long long retired_until;
	int inotify_fd;
	/// Always readable: registered in the poll descriptor (an epoll set, io.poll_fd) while the
	/// stream can take frames, removed while it is held.
	int ready_fd;
	int ready_registered;
	snd_pcm_uframes_t transferred;
	snd_pcm_uframes_t boundary;
	size_t frame_bytes;
	/// Playback: the last frames forwarded, a slave buffer's worth, to replay on the new device
	/// what the old one had not played yet.
	struct ar_history history;
	/// The session in the tower (NULL without a daemon) and what the tower has said of it.
	struct ar_bus *bus;
	struct ar_tower tower;
	/// The bus's descriptor in the poll set (-1: none), taken out if the bus goes away, when it
	/// would be readable for ever; whether the tower's loss was said on standard error.
	int bus_fd;
	int told_lost;
	/// Held by an interruption: the slave was dropped, and `replay` frames of the history (what it
	/// had not played) go out again when the stream resumes.
	int holding;
	snd_pcm_sframes_t replay;
	/// The daemon refused to activate the session: not asked again at every period.
	int activation_failed;
	/// The hold was lifted by the app's restart or the device's return, not by the tower: if the
	/// tower refuses the activation that follows, the stream is held again.
	int resuming_by_itself;
	/// Opening at hw_params with a daemon: a busy device is reported by open_route, once.
	int busy_reported_later;
	/// Where a ducked or silenced period is scaled (the app's own buffer is not ours to change).
	char *scratch;
	/// A non-blocking app's frames taken while the stream is held, not forwarded (a buffer's worth
	/// at most): its buffer fills, so it waits in poll instead of spinning; they go first on resume.
	char *stash;
	snd_pcm_uframes_t stashed;
	/// Frames forwarded at a time: 10 ms.
	snd_pcm_uframes_t piece;
	/// Most frames queued in the device ahead of what it plays: 100 ms, or the app's buffer if smaller.
	snd_pcm_uframes_t ahead;
	/// AUDIOROUTE_DEBUG is set: what the stream does is written to standard error, timed.
	int debug;
	/// Capture while the route has no input (its device is `null`): silence, paced as a device
	/// would be, from `silence_since` (CLOCK_MONOTONIC ns; 0: not started) for `silence_frames`.
	long long silence_since;
	snd_pcm_uframes_t silence_frames;
	/// Opened by ar_follower_open for a client with a session of its own (the player): it moves
	/// when told, and a gone device fails the transfer instead of holding it.
	int follower;
	/// Files loaded over the system's configuration before the route file (the follower's).
	char **config_files;
	size_t config_count;
	/// The last move, for ar_follower_take_move: the device left, and what was replayed.
	int moved;
	char moved_from[512];
	long moved_replay;
};

/// One line on standard error with the CLOCK_MONOTONIC time, when AUDIOROUTE_DEBUG is set: how
/// long a move took, when a hold began, for an integrator's logs and the real-kernel bench.
__attribute__((format(printf, 2, 3))) static void trace(const struct ar_pcm *p, const char *format, ...) {
	if (!p->debug)
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	char line[512];
	va_list ap;
	va_start(ap, format);
	vsnprintf(line, sizeof(line), format, ap);
	va_end(ap);
	fprintf(stderr, "audioroute %lld.%06ld: %s\n", (long long)now.tv_sec, now.tv_nsec / 1000, line);
}

/// Handles what the bus has brought. A lost tower (its daemon gone, or the bus) has already
/// released the stream (ar_tower_lost); this says so, once, and takes a dead bus out of the poll set.
static void read_bus(struct ar_pcm *p) {
	if (p->bus == NULL)
		return;
	ar_bus_process(p->bus);
	if (!ar_bus_take_lost(p->bus))
		return;
	trace(p, "the tower went away%s", ar_bus_fd(p->bus) < 0 ? ", and the bus" : "");
	if (!p->told_lost)
		SNDERR("audioroute: the tower (audiorouted) went away: this stream plays on outside it, on the route file's device");
	p->told_lost = 1;
	if (ar_bus_fd(p->bus) < 0 && p->bus_fd >= 0 && p->io.poll_fd >= 0) {
		epoll_ctl(p->io.poll_fd, EPOLL_CTL_DEL, p->bus_fd, NULL);
		p->bus_fd = -1;
	}
}

/// Milliseconds on CLOCK_MONOTONIC.
static long long now_ms(void) {
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/// Nanoseconds on CLOCK_MONOTONIC.
static long long now_ns(void) {
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

/// The route file's text, read once, so that what is compared and what is opened are the same
/// version of a file the daemon may replace at any moment. NUL-terminated; free() it.
static int read_route_text(struct ar_pcm *p, char **text, size_t *length) {
	FILE *file = fopen(p->route_file, "re");
	if (file == NULL) {
		int err = -errno;
		SNDERR("audioroute: cannot read the route file %s: %s (is audiorouted running?)", p->route_file, snd_strerror(err));
		return err;
	}
	size_t capacity = 65536;
	*text = malloc(capacity + 1);
	*length = *text != NULL ? fread(*text, 1, capacity, file) : 0;
	int failed = *text == NULL || ferror(file) || !feof(file);
	fclose(file);
	if (failed) {
		free(*text);
		*text = NULL;
		return -EIO;
	}
	(*text)[*length] = '\0';
	return 0;
}

/// Loads `text` (a route file) into `top`.
static int load_text(snd_config_t *top, const char *text, size_t length) {
	snd_input_t *in;
	int err = snd_input_buffer_open(&in, text, (ssize_t)length);
	if (err < 0)
		return err;
	err = snd_config_load(top, in);
	snd_input_close(in);
	return err;
}

/// Loads the configuration file at `path` into `top`.
static int load_file(snd_config_t *top, const char *path) {
	snd_input_t *in;
	int err = snd_input_stdio_open(&in, path, "r");
	if (err < 0)
		return err;
	err = snd_config_load(top, in);
	snd_input_close(in);
	return err;
}

/// The slave.pcm of the route's definition of `p->route_name` in `text`, into `device`.
static int route_device(struct ar_pcm *p, const char *text, size_t length, char *device, size_t size) {
	snd_config_t *top, *definition, *slave;
	int err = snd_config_top(&top);
	if (err < 0)
		return err;
	char key[96];
	snprintf(key, sizeof(key), "pcm.%s", p->route_name);
	const char *name = "";
	if ((err = load_text(top, text, length)) >= 0 && (err = snd_config_search(top, key, &definition)) < 0)
		SNDERR("audioroute: the route file %s does not define %s", p->route_file, key);
	if (err >= 0 && snd_config_search(definition, "slave.pcm", &slave) >= 0)
		snd_config_get_string(slave, &name);
	snprintf(device, size, "%s", name);
	snd_config_delete(top);
	return err;
}

/// The route's device now (the slave.pcm of its definition), into `device`; the file's text,
/// read once, into `*text` (free() it).
static int read_route(struct ar_pcm *p, char *device, size_t size, char **text, size_t *length) {
	int err = read_route_text(p, text, length);
	if (err < 0)
		return err;
	if ((err = route_device(p, *text, *length, device, size)) < 0) {
		free(*text);
		*text = NULL;
	}
	return err;
}

/// Keeps `text`, the file as last read, for the move it may cause (the one kept before is
/// outdated by it); NULL forgets it, so that the next open reads the file.
static void keep_route_text(struct ar_pcm *p, char *text, size_t length) {
	free(p->route_text);
	p->route_text = text;
	p->route_length = length;
}

/// Closes the device a move left, when its time is up or `now` says so.
static void close_retired(struct ar_pcm *p, int now) {
	if (p->retired == NULL || (!now && now_ms() < p->retired_until))
		return;
	snd_pcm_drop(p->retired);
	snd_pcm_close(p->retired);
	p->retired = NULL;
	if (p->retired_config != NULL)
		snd_config_delete(p->retired_config);
	p->retired_config = NULL;
}

static void close_slave(struct ar_pcm *p) {
	close_retired(p, 1);
	if (p->slave != NULL) {
		snd_pcm_drop(p->slave);
		snd_pcm_close(p->slave);
		p->slave = NULL;
	}
	if (p->slave_config != NULL) {
		snd_config_delete(p->slave_config);
		p->slave_config = NULL;
	}
}

/// Opens the route's definition as the slave: the system's configuration with the route file
/// loaded over it (its `pcm.?audioroute` leaves this plugin's definition as it is), so that
/// names the route uses (dmix:, plughw:, bluealsa:, a user's own) resolve as for any client.
static int open_slave(struct ar_pcm *p) {
	char *text = p->route_text;
	size_t length = p->route_length;
	char device[sizeof(p->device)];
	int err = 0;
	p->route_text = NULL;
	if (text == NULL && (err = read_route_text(p, &text, &length)) < 0)
		return err;
	snd_config_t *global = NULL, *config = NULL;
	if ((err = route_device(p, text, length, device, sizeof(device))) >= 0 && (err = snd_config_update_ref(&global)) >= 0) {
		err = snd_config_copy(&config, global);
		snd_config_unref(global);
	}
	for (size_t i = 0; err >= 0 && i < p->config_count; i++)
		if ((err = load_file(config, p->config_files[i])) < 0)
			SNDERR("audioroute: cannot load %s: %s", p->config_files[i], snd_strerror(err));
	if (err >= 0)
		err = load_text(config, text, length);
	free(text);
	char key[96];
	snprintf(key, sizeof(key), "pcm.%s.type", p->route_name);
	snd_config_t *type;
	const char *type_name = NULL;
	if (err >= 0 && snd_config_search(config, key, &type) >= 0 && snd_config_get_string(type, &type_name) >= 0 &&
			strcmp(type_name, "audioroute") == 0) {
		SNDERR("audioroute: the route file %s defines %s as this plugin", p->route_file, p->route_name);
		err = -ELOOP;
	}
	if (err >= 0)
		err = snd_pcm_open_lconf(&p->slave, p->route_name, p->stream, 0, config);
	if (err < 0) {
		if (config != NULL)
			snd_config_delete(config);
		return err;
	}
	p->slave_config = config;
	snprintf(p->device, sizeof(p->device), "%s", device);
	return 0;
}

/// Gives the slave the stream's parameters: the route's definition is a `plug`, so it converts.
static int setup_slave(struct ar_pcm *p) {
	snd_pcm_hw_params_t *hw;
	snd_pcm_hw_params_alloca(&hw);
	snd_pcm_uframes_t period = p->io.period_size, buffer = p->io.buffer_size;
	int err;
	if ((err = snd_pcm_hw_params_any(p->slave, hw)) < 0 ||
			(err = snd_pcm_hw_params_set_access(p->slave, hw, SND_PCM_ACCESS_RW_INTERLEAVED)) < 0 ||
			(err = snd_pcm_hw_params_set_format(p->slave, hw, p->io.format)) < 0 ||
			(err = snd_pcm_hw_params_set_channels(p->slave, hw, p->io.channels)) < 0 ||
			(err = snd_pcm_hw_params_set_rate(p->slave, hw, p->io.rate, 0)) < 0 ||
			(err = snd_pcm_hw_params_set_period_size_near(p->slave, hw, &period, NULL)) < 0 ||
			(err = snd_pcm_hw_params_set_buffer_size_near(p->slave, hw, &buffer)) < 0 ||
			(err = snd_pcm_hw_params(p->slave, hw)) < 0) {
		if (err != -EBUSY || !p->busy_reported_later)
			SNDERR("audioroute: the route's device %s refused the stream's parameters: %s", p->device, snd_strerror(err));
		return err;
	}
	return 0;
}

/// Reads the route watch; on a change of the file, re-reads the route and tells the state
/// machine when it names another device.
static void check_route(struct ar_pcm *p) {
	char events[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	const char *base = strrchr(p->route_file, '/') + 1;
	int touched = 0;
	ssize_t n;
	while ((n = read(p->inotify_fd, events, sizeof(events))) > 0)
		for (char *e = events; e < events + n; e += sizeof(struct inotify_event) + ((struct inotify_event *)e)->len) {
			const struct inotify_event *event = (const struct inotify_event *)e;
			if (event->len > 0 && strcmp(event->name, base) == 0)
				touched = 1;
		}
	// With a daemon, its RouteChanged says when: the daemon sends a session's interruption
	// before the route change that caused it, so an unplug holds the stream before it could move
	// to the speaker. The file's own change only counts without a daemon.
	// A tower lost asks for the file to be read again, as it now governs.
	// A follower moves when its client says so: the client's session pauses it first on an unplug.
	touched = ar_bus_connected(p->bus) || p->follower ? p->tower.route_changed : touched || p->tower.route_changed;
	p->tower.route_changed = 0;
	char device[sizeof(p->device)];
	char *text;
	size_t length;
	if (!touched || read_route(p, device, sizeof(device), &text, &length) < 0)
		return;
	keep_route_text(p, text, length);  // a move opens the version of the file last compared
	if (strcmp(device, p->device) == 0 && ar_tower_device_back(&p->tower)) {
		// The device an unplug held the stream from is the route's again (plugged back): the
		// stream goes on there, reopened (its old handle died with the device).
		trace(p, "%s is back: the hold is lifted", device);
		p->resuming_by_itself = 1;
		p->activation_failed = 0;
		ar_step(&p->state, AR_EVENT_ROUTE_CHANGED);
	} else if (strcmp(device, p->device) != 0) {
		trace(p, "the route names %s", device);
		ar_step(&p->state, AR_EVENT_ROUTE_CHANGED);
	}
}

/// Writes all of `frames` to the slave, recovering an underrun; a negative errno on failure.
static snd_pcm_sframes_t write_all(struct ar_pcm *p, const char *frames, snd_pcm_uframes_t count) {
	snd_pcm_uframes_t done = 0;
	while (done < count) {
		snd_pcm_sframes_t n = snd_pcm_writei(p->slave, frames + done * p->frame_bytes, count - done);
		if (n == -EPIPE || n == -ESTRPIPE || n == -EINTR) {
			if (n == -EPIPE)
				trace(p, "underrun on %s", p->device);
			if ((n = snd_pcm_recover(p->slave, (int)n, 1)) < 0)
				return n;
			continue;
		}
		if (n < 0)
			return ar_pcm_disconnected(p->slave, (int)n);
		done += (snd_pcm_uframes_t)n;
	}
	return (snd_pcm_sframes_t)done;
}

/// Writes the last `frames` frames of the history (fewer if it holds fewer) to the device: what
/// the device the stream left, or dropped for a hold, had not played. 0 or a negative errno.
static int replay(struct ar_pcm *p, snd_pcm_sframes_t frames) {
	const void *first, *second;
	size_t first_count, second_count;
	ar_history_last(&p->history, (size_t)frames, &first, &first_count, &second, &second_count);
	snd_pcm_sframes_t n = write_all(p, first, first_count);
	if (n >= 0)
		n = write_all(p, second, second_count);
	return n < 0 ? (int)n : 0;
}

/// Opens the route's device and gives it the stream's parameters; on failure nothing is open.
static int open_and_setup(struct ar_pcm *p) {
	int err = open_slave(p);
	if (err >= 0 && (err = setup_slave(p)) < 0)
		close_slave(p);
	return err;
}

/// Moves the stream to the route's device. The new device is opened first, while the old one
/// plays what it holds (make before break: opening a USB card takes 150 ms and more); then the
/// old one, still there, plays out the rest and stays open, silent, for 100 ms (close_retired),
/// and the stream goes on on the new one from the next frame: none lost, none twice. Held, the old device was dropped when the hold
/// began: what it had not played is replayed from the history. A device already gone held
/// nothing we can know of (its delay fails): those are the ones lost.
static int move(struct ar_pcm *p) {
	close_retired(p, 1);
	snd_pcm_t *old = p->slave;
	snd_config_t *old_config = p->slave_config;
	char old_device[sizeof(p->device)];
	snprintf(old_device, sizeof(old_device), "%s", p->device);
	trace(p, "move from %s", old_device);
	p->slave = NULL;
	p->slave_config = NULL;
	int err = open_and_setup(p);
	if (err == -EBUSY && old != NULL) {
		// The new name reaches the old device's hardware (an exclusive card under two names).
		snd_pcm_drop(old);
		snd_pcm_close(old);
		old = NULL;
		err = open_and_setup(p);
	}
	snd_pcm_sframes_t pending = 0;
	int played_out = 0;
	if (p->holding) {
		pending = p->replay;  // the old device was dropped when the hold began
	} else if (old != NULL && p->stream == SND_PCM_STREAM_PLAYBACK && snd_pcm_delay(old, &pending) >= 0 && pending > 0 &&
			snd_pcm_state(old) == SND_PCM_STATE_RUNNING) {
		// The old device is still there: it plays out what it holds (at most `ahead`, 100 ms,
		// which the new one's open has already shortened), and the new one starts where it
		// stopped. Dropping it and replaying its delay lost the frames the hardware had taken
		// but not yet played (30-50 ms at each move on the real-kernel bench).
		trace(p, "move: %s plays out its %ld frames", old_device, (long)pending);
		int drained = snd_pcm_drain(old);
		played_out = drained >= 0;
		pending = 0;
		if (drained < 0 && snd_pcm_delay(old, &pending) < 0)
			pending = 0;  // gone while it played: what it had left is lost
		if (pending < 0)
			pending = 0;
	} else {
		// Ran dry while the new one opened (its frames all taken), or already gone: then it held
		// nothing we can know of. Drained all the same, so that a PCM that buffers on its own (a
		// `file` PCM writes its file in periods) has given everything out before the new one starts.
		played_out = old != NULL && !p->holding && snd_pcm_state(old) != SND_PCM_STATE_DISCONNECTED;
		if (played_out && p->stream == SND_PCM_STREAM_PLAYBACK)
			snd_pcm_drain(old);
		pending = 0;
	}
	p->holding = 0;
	if (old != NULL && played_out && err >= 0 && strncmp(old_device, "bluealsa", 8) != 0) {
		// Kept open (silent) a little, so that the card plays what its DMA had taken. Not a
		// BlueALSA PCM: its server plays what it has, and holding the A2DP transport could keep
		// the headset from the HFP link a call moves to.
		p->retired = old;
		p->retired_config = old_config;
		p->retired_until = now_ms() + 100;
		old = NULL;
		old_config = NULL;
	}
	if (old != NULL) {
		snd_pcm_drop(old);
		snd_pcm_close(old);
	}
	if (old_config != NULL)
		snd_config_delete(old_config);
	if (err < 0) {
		trace(p, "move: the route's device cannot be opened: %s", snd_strerror(err));
		return err;
	}
	trace(p, "move: %s open, %ld frames to replay", p->device, (long)pending);
	p->moved = 1;
	snprintf(p->moved_from, sizeof(p->moved_from), "%s", old_device);
	p->moved_replay = (long)pending;
	err = replay(p, pending);
	trace(p, "move: replayed on %s", p->device);
	return err;
}

/// Puts the always-ready descriptor in the app's poll set, or takes it out while the stream is held.
static void update_readiness(struct ar_pcm *p) {
	int ready = !p->tower.interrupted && p->state != AR_HELD;
	if (ready == p->ready_registered || p->io.poll_fd < 0)
		return;
	struct epoll_event event = { .events = EPOLLIN };
	if (epoll_ctl(p->io.poll_fd, ready ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, p->ready_fd, &event) == 0)
		p->ready_registered = ready;
}

/// Holds the caller until the route changes (a blocking writer held still is how a plain app
/// pauses); -EAGAIN at once in non-blocking mode.
static int wait_for_route(struct ar_pcm *p) {
	update_readiness(p);
	if (p->io.nonblock)
		return -EAGAIN;
	if (ar_bus_connected(p->bus))
		return ar_bus_wait(p->bus, -1, -1);
	struct pollfd watch = { .fd = p->inotify_fd, .events = POLLIN };
	if (poll(&watch, 1, -1) < 0 && errno != EINTR)
		return -errno;
	return 0;
}

/// An interruption began: the device is dropped at once, so nothing more of this stream is heard;
/// what it had not played is kept to go out again on resume.
static void begin_hold(struct ar_pcm *p) {
	if (p->holding)
		return;
	trace(p, "held (interrupted)");
	p->holding = 1;
	p->replay = 0;
	if (p->slave == NULL)
		return;
	if (p->stream == SND_PCM_STREAM_PLAYBACK && (snd_pcm_delay(p->slave, &p->replay) < 0 || p->replay < 0))
		p->replay = 0;
	snd_pcm_drop(p->slave);
}

/// The interruption ended with shouldResume (and the session is active again): the stream goes
/// on where it stopped, on the device the route names now.
static int end_hold(struct ar_pcm *p) {
	if (p->state == AR_MOVE_PENDING || p->slave == NULL)
		return 0;  // the move replays what was held
	trace(p, "resumed, %ld frames to replay", (long)p->replay);
	p->holding = 0;
	int err = snd_pcm_prepare(p->slave);
	if (err < 0)
		return err;
	if (p->stream == SND_PCM_STREAM_CAPTURE)
		return snd_pcm_start(p->slave);
	return replay(p, p->replay);
}

static enum ar_mix_format mix_format(snd_pcm_format_t format) {
	switch (format) {
	case SND_PCM_FORMAT_U8: return AR_MIX_U8;
	case SND_PCM_FORMAT_S24_LE: return AR_MIX_S24_LE;
	case SND_PCM_FORMAT_S24_3LE: return AR_MIX_S24_3LE;
	case SND_PCM_FORMAT_S32_LE: return AR_MIX_S32_LE;
	case SND_PCM_FORMAT_FLOAT_LE: return AR_MIX_FLOAT_LE;
	default: return AR_MIX_S16_LE;  // the only other format set_constraints admits
	}
}

/// The frames to send: the app's own, or a copy at the tower's gain (ducked, silenced).
static const char *at_tower_gain(struct ar_pcm *p, const char *frames, snd_pcm_uframes_t size) {
	float gain = ar_mix_gain(p->tower.ducked, p->tower.silenced);
	if (gain == 1.0f || p->scratch == NULL)
		return frames;
	memcpy(p->scratch, frames, size * p->frame_bytes);
	ar_mix_apply(mix_format(p->io.format), p->scratch, size * p->io.channels, gain);
	return p->scratch;
}

/// Waits while the device holds more than `p->ahead` frames not yet played, reading the bus and
/// the route meanwhile; 1 when a move or a hold is due. The device's buffer is the mixer's, not
/// the app's: dmix's default is 341 ms, and frames it holds have been mixed into the card's
/// ring, where a hold (snd_pcm_drop) cannot take them back; kept this short, an interruption
/// silences the stream, and a duck lowers it, within about 100 ms (seen on the real-kernel
/// bench: 340 ms of music went on under the call's start before this).
static int throttle(struct ar_pcm *p, int read_news) {
	snd_pcm_sframes_t delay;
	while (snd_pcm_state(p->slave) == SND_PCM_STATE_RUNNING && snd_pcm_delay(p->slave, &delay) >= 0 &&
			delay > (snd_pcm_sframes_t)p->ahead) {
		long long wait_ns = (long long)(delay - (snd_pcm_sframes_t)p->ahead) * 1000000000LL / p->io.rate;
		struct timespec pause = { .tv_nsec = wait_ns < 10000000LL ? (long)wait_ns : 10000000L };
		nanosleep(&pause, NULL);
		if (!read_news)
			continue;
		read_bus(p);
		check_route(p);
		if (p->state == AR_MOVE_PENDING || p->tower.interrupted)
			return 1;
	}
	return 0;
}

/// Writes `count` frames to the device in pieces of about 10 ms, each at the tower's gain and kept
/// in the history. Between pieces, when `may_stop`, the bus and the route are read, and a move or
/// a hold ends the transfer early (the next one makes it): a stream reacts within a piece, not
/// within the app's period, which may be half a second. Frames written, or the error when none.
static snd_pcm_sframes_t forward(struct ar_pcm *p, const char *frames, snd_pcm_uframes_t count, int may_stop) {
	snd_pcm_uframes_t done = 0;
	while (done < count) {
		if (throttle(p, may_stop) && may_stop)
			break;
		snd_pcm_uframes_t piece = count - done < p->piece ? count - done : p->piece;
		const char *at = frames + done * p->frame_bytes;
		snd_pcm_sframes_t n = write_all(p, at_tower_gain(p, at, piece), piece);
		if (n < 0)
			return done > 0 ? (snd_pcm_sframes_t)done : n;
		ar_history_remember(&p->history, at, (size_t)n);
		close_retired(p, 0);
		p->transferred = (p->transferred + (snd_pcm_uframes_t)n) % p->boundary;
		done += (snd_pcm_uframes_t)n;
		if (may_stop && done < count) {
			read_bus(p);
			check_route(p);
			if (p->state == AR_MOVE_PENDING || p->tower.interrupted)
				break;
		}
	}
	return (snd_pcm_sframes_t)done;
}

/// Held, for a non-blocking app: takes what fits of its frames into the stash, -EAGAIN when full.
static snd_pcm_sframes_t stash_frames(struct ar_pcm *p, const char *frames, snd_pcm_uframes_t size) {
	if (size == 0)
		return 0;
	snd_pcm_uframes_t room = p->stash != NULL ? p->io.buffer_size - p->stashed : 0;
	if (room == 0)
		return -EAGAIN;
	snd_pcm_uframes_t n = size < room ? size : room;
	memcpy(p->stash + p->stashed * p->frame_bytes, frames, n * p->frame_bytes);
	p->stashed += n;
	return (snd_pcm_sframes_t)n;
}

/// Whether the stream's device is the route's "no port" device: a capture stream with no input
/// in the route (the route file names `null` until a session that records is active).
static int on_no_device(const struct ar_pcm *p) { return strcmp(p->device, "null") == 0; }

/// Capture with no input in the route: `size` frames of silence, at the pace of a device at the
/// stream's rate (alsa-lib's null PCM returns at once and leaves the app's buffer as it was: heap
/// bytes or zeros, unpaced, in 10 of 20 recordings of a plug mid-stream). A mic that comes into
/// the route is moved to between 10 ms pieces of the wait; then 0, and the move is the caller's.
/// It waits in non-blocking mode too, as a transfer on a device does here.
static snd_pcm_sframes_t silence(struct ar_pcm *p, char *frames, snd_pcm_uframes_t size) {
	if (p->silence_since == 0) {
		p->silence_since = now_ns();
		p->silence_frames = 0;
	}
	for (;;) {
		long long due = p->silence_since + (long long)((p->silence_frames + size) * 1000000000ULL / p->io.rate);
		long long wait = due - now_ns();
		if (wait <= 0)
			break;
		struct timespec pause = { .tv_nsec = wait < 10000000LL ? (long)wait : 10000000L };
		nanosleep(&pause, NULL);
		read_bus(p);
		check_route(p);
		if (p->state == AR_MOVE_PENDING || p->tower.interrupted)
			return 0;
	}
	snd_pcm_format_set_silence(p->io.format, frames, (unsigned int)(size * p->io.channels));
	p->silence_frames += size;
	p->transferred = (p->transferred + size) % p->boundary;
	return (snd_pcm_sframes_t)size;
}

/// Forwards `size` frames (none: only what the bus, the route and the stash call for) through
/// the tower's decisions and the route's changes; the transfer's result.
static snd_pcm_sframes_t pump(struct ar_pcm *p, char *frames, snd_pcm_uframes_t size) {
	snd_pcm_ioplug_t *io = &p->io;
	for (;;) {
		read_bus(p);
		check_route(p);
		if (p->tower.interrupted) {
			// A writer held still is how a plain app pauses (docs/alsa.md). Its frames go into
			// the stash, the pointer standing, blocking or not: the app then waits in its own
			// poll (snd_pcm_wait), with its own locks released, so that its pause (a drop, then
			// a prepare: mpv's) gets through. Only a blocking writer whose stash is full waits
			// in the transfer.
			begin_hold(p);
			update_readiness(p);
			snd_pcm_sframes_t stashed = stash_frames(p, frames, size);
			if (io->nonblock || stashed != -EAGAIN)
				return stashed;
			int err = ar_bus_wait(p->bus, -1, -1);
			if (err < 0)
				return err;
			continue;
		}
		if (p->holding && end_hold(p) < 0)
			ar_step(&p->state, AR_EVENT_DEVICE_GONE);
		update_readiness(p);
		// Active while data flows: asked for before the first frames, so that a non-mixable
		// stream has interrupted the others before it is heard.
		if (ar_bus_connected(p->bus) && !p->tower.active && !p->activation_failed) {
			if (ar_bus_set_active(p->bus, 1, 0) < 0) {
				p->activation_failed = 1;
				if (p->resuming_by_itself) {
					// The tower still holds it (a call goes on): held again, as an iOS app's
					// play fails while a call has the session.
					p->tower.interrupted = 1;
					p->activation_failed = 0;
				}
			}
			trace(p, "session %s", p->tower.interrupted ? "not activated: held again" : p->activation_failed ? "not activated" : "activated");
			p->resuming_by_itself = 0;
			continue;  // what the activation caused (ducked, silenced) applies to these frames
		}
		switch (ar_step(&p->state, AR_EVENT_BOUNDARY)) {
		case AR_ACTION_MOVE:
			if (move(p) < 0)
				ar_step(&p->state, AR_EVENT_DEVICE_GONE);
			continue;
		case AR_ACTION_WAIT_FOR_ROUTE: {
			if (p->follower)
				return -ENODEV;  // the client's session says what follows (pause, or a new route)
			int err = wait_for_route(p);
			if (err == -EAGAIN)
				return stash_frames(p, frames, size);
			if (err < 0)
				return err;
			continue;
		}
		case AR_ACTION_NONE:
			break;
		}
		// What was stashed while held goes first.
		char *out = p->stashed > 0 ? p->stash : frames;
		snd_pcm_uframes_t count = p->stashed > 0 ? p->stashed : size;
		if (count == 0)
			return 0;
		snd_pcm_sframes_t n;
		if (p->slave == NULL) {  // a move that failed to open the new device
			n = -ENODEV;
		} else if (io->stream == SND_PCM_STREAM_PLAYBACK) {
			// A read/write app's transfer may end early (alsa-lib hands over the rest); an mmap
			// app's commit must take all it offers.
			n = forward(p, out, count, out != p->stash && io->access == SND_PCM_ACCESS_RW_INTERLEAVED);
		} else if (on_no_device(p)) {
			n = silence(p, frames, size);
			if (n == 0)
				continue;  // a move or a hold is due
		} else {
			p->silence_since = 0;
			n = snd_pcm_readi(p->slave, frames, size);
			if (n == -EPIPE || n == -ESTRPIPE)
				n = snd_pcm_recover(p->slave, (int)n, 1) < 0 ? n : 0;
			if (n < 0)
				n = ar_pcm_disconnected(p->slave, (int)n);
			if (n > 0)
				p->transferred = (p->transferred + (snd_pcm_uframes_t)n) % p->boundary;
		}
		if (n < 0 && ar_is_device_gone((int)n)) {
			trace(p, "%s is gone: %s", p->device, snd_strerror((int)n));
			ar_step(&p->state, AR_EVENT_DEVICE_GONE);
			continue;
		}
		if (n < 0 || out != p->stash)
			return n;
		// The stash, or what of it the device took before it failed: the rest stays first in line.
		p->stashed -= (snd_pcm_uframes_t)n;
		memmove(p->stash, p->stash + (size_t)n * p->frame_bytes, p->stashed * p->frame_bytes);
	}
}

static snd_pcm_sframes_t ar_transfer(snd_pcm_ioplug_t *io, const snd_pcm_channel_area_t *areas,
		snd_pcm_uframes_t offset, snd_pcm_uframes_t size) {
	char *frames = (char *)areas[0].addr + (areas[0].first + offset * areas[0].step) / 8;
	return pump(io->private_data, frames, size);
}

static snd_pcm_sframes_t ar_pointer(snd_pcm_ioplug_t *io) {
	struct ar_pcm *p = io->private_data;
	// Playback: what was forwarded has left this buffer. Capture: one period is always "ready";
	// the read that takes it blocks on the slave.
	snd_pcm_uframes_t hw = p->transferred;
	if (io->stream == SND_PCM_STREAM_CAPTURE)
		hw = (hw + io->period_size) % p->boundary;
	return (snd_pcm_sframes_t)hw;
}


/// How long a busy device is tried again after the session was activated for it, and how often.
#define AR_BUSY_WAIT_MS 1000
#define AR_BUSY_RETRY_MS 25

/// Opens the route's device (open since the PCM's open, unless it was busy then) and gives it
/// the stream's parameters. Busy, with a session in a daemon, the session is activated now rather
/// than at the first frames (ar_busy_step): the tower may then interrupt the stream that holds
/// the device, or move the route (a voice call from A2DP to HFP), and the open is tried again on
/// the route as it now stands, every 25 ms for up to a second. What frees the device is the
/// tower's doing, not the plugin's.
static int open_route(struct ar_pcm *p) {
	p->busy_reported_later = ar_bus_connected(p->bus);
	int err = p->slave != NULL ? setup_slave(p) : open_and_setup(p);
	int activated = 0;
	long long deadline = 0;
	enum ar_busy_action action;
	while ((action = ar_busy_step(err, ar_bus_connected(p->bus), &p->tower, activated, now_ms() >= deadline)) != AR_BUSY_DONE) {
		if (action == AR_BUSY_ACTIVATE) {
			trace(p, "%s is busy: activating the session before the first frames", p->slave != NULL ? p->device : p->route_name);
			if (ar_bus_set_active(p->bus, 1, 0) < 0) {
				trace(p, "session not activated: the route's device stays busy");
				break;
			}
			trace(p, "session activated");
			activated = 1;
			deadline = now_ms() + AR_BUSY_WAIT_MS;
		} else if (action == AR_BUSY_RETRY) {
			close_slave(p);
			ar_bus_wait(p->bus, -1, AR_BUSY_RETRY_MS);
			read_bus(p);
			p->tower.route_changed = 0;  // the open below reads the route as it is now
			keep_route_text(p, NULL, 0);
			err = open_and_setup(p);
			trace(p, "the route's device, tried again: %s%s", err < 0 ? snd_strerror(err) : p->device, err < 0 ? "" : " open");
		} else {  // AR_BUSY_GIVE_UP
			close_slave(p);
			if (p->tower.active)
				ar_bus_set_active(p->bus, 0, 1);  // those it interrupted resume
			trace(p, "the route's device stays busy: session deactivated");
			break;
		}
	}
	// Reported once, not at every try, and not at all when a try succeeded.
	if (err == -EBUSY && p->busy_reported_later)
		SNDERR("audioroute: the route's device %s is busy%s", p->device[0] != '\0' ? p->device : p->route_name,
				activated ? ", still a second after the session was activated" : "");
	p->busy_reported_later = 0;
	return err;
}

static int ar_hw_params(snd_pcm_ioplug_t *io, snd_pcm_hw_params_t *params) {
	(void)params;
	struct ar_pcm *p = io->private_data;
	p->frame_bytes = (size_t)snd_pcm_format_physical_width(io->format) / 8 * io->channels;
	p->piece = io->rate / 100 > 0 ? io->rate / 100 : 1;
	p->ahead = io->rate / 10 < io->buffer_size ? io->rate / 10 : io->buffer_size;
	// Twice the app's buffer: the device's may be larger (its size is only "near" ours), and its
	// delay is what a move replays from here.
	if (io->stream == SND_PCM_STREAM_PLAYBACK && ar_history_reserve(&p->history, 2 * io->buffer_size, p->frame_bytes) < 0)
		return -ENOMEM;
	free(p->scratch);
	free(p->stash);
	p->scratch = p->stash = NULL;
	if (io->stream == SND_PCM_STREAM_PLAYBACK &&
			((p->scratch = malloc(io->buffer_size * p->frame_bytes)) == NULL || (p->stash = malloc(io->buffer_size * p->frame_bytes)) == NULL))
		return -ENOMEM;
	int err = open_route(p);
	if (err >= 0)
		ar_step(&p->state, AR_EVENT_OPENED);
	return err;
}

static int ar_prepare(snd_pcm_ioplug_t *io) {
	struct ar_pcm *p = io->private_data;
	read_bus(p);
	if (ar_bus_connected(p->bus) && ar_tower_restart(&p->tower)) {
		// The app restarted its stream while held (drop, then prepare): it asks to play again.
		// What the device had not played was the app's to discard, and it did.
		trace(p, "restarted by the app while held: asking the tower to activate it again");
		p->resuming_by_itself = 1;
		p->activation_failed = 0;
		p->holding = 0;
		p->replay = 0;
		update_readiness(p);
	}
	snd_pcm_sw_params_t *sw;
	snd_pcm_sw_params_alloca(&sw);
	if (snd_pcm_sw_params_current(io->pcm, sw) < 0 || snd_pcm_sw_params_get_boundary(sw, &p->boundary) < 0 || p->boundary == 0)
		p->boundary = io->buffer_size;
	p->transferred = 0;
	p->stashed = 0;
	p->silence_since = 0;
	ar_history_clear(&p->history);
	return p->slave != NULL ? snd_pcm_prepare(p->slave) : 0;
}

static int ar_start(snd_pcm_ioplug_t *io) {
	struct ar_pcm *p = io->private_data;
	// Playback starts itself on its first write; capture starts here.
	if (io->stream == SND_PCM_STREAM_CAPTURE && p->slave != NULL && snd_pcm_state(p->slave) == SND_PCM_STATE_PREPARED)
		return snd_pcm_start(p->slave);
	return 0;
}

static int ar_stop(snd_pcm_ioplug_t *io) {
	struct ar_pcm *p = io->private_data;
	return p->slave != NULL ? snd_pcm_drop(p->slave) : 0;
}

static int ar_drain(snd_pcm_ioplug_t *io) {
	struct ar_pcm *p = io->private_data;
	if (p->slave == NULL || io->stream != SND_PCM_STREAM_PLAYBACK)
		return 0;
	int err = snd_pcm_drain(p->slave);
	return ar_is_device_gone(err) ? 0 : err;
}

static int ar_delay(snd_pcm_ioplug_t *io, snd_pcm_sframes_t *delay) {
	struct ar_pcm *p = io->private_data;
	*delay = 0;
	if (p->slave != NULL && snd_pcm_delay(p->slave, delay) < 0)
		*delay = 0;
	return 0;
}

static void free_pcm(struct ar_pcm *p) {
	ar_bus_close(p->bus);  // first: deactivating with notifyOthers lets others resume
	close_slave(p);
	free(p->route_text);
	free(p->scratch);
	free(p->stash);
	if (p->io.poll_fd >= 0)
		close(p->io.poll_fd);
	if (p->ready_fd >= 0)
		close(p->ready_fd);
	if (p->inotify_fd >= 0)
		close(p->inotify_fd);
	ar_history_free(&p->history);
	for (size_t i = 0; i < p->config_count; i++)
		free(p->config_files[i]);
	free(p->config_files);
	free(p);
}

static int ar_close(snd_pcm_ioplug_t *io) {
	struct ar_pcm *p = io->private_data;
	ar_step(&p->state, AR_EVENT_CLOSED);
	free_pcm(p);
	return 0;
}

/// A copy of `map` as a one-entry query list (snd_pcm_free_chmaps frees it), or NULL.
static snd_pcm_chmap_query_t **one_map(const snd_pcm_chmap_t *map, enum snd_pcm_chmap_type type) {
	snd_pcm_chmap_query_t **maps = calloc(2, sizeof(*maps));
	if (maps == NULL)
		return NULL;
	maps[0] = malloc(sizeof(*maps[0]) + map->channels * sizeof(map->pos[0]));
	if (maps[0] == NULL) {
		free(maps);
		return NULL;
	}
	maps[0]->type = type;
	maps[0]->map.channels = map->channels;
	memcpy(maps[0]->map.pos, map->pos, map->channels * sizeof(map->pos[0]));
	return maps;
}

/// The layouts the route's device plays: the one it runs now where it already runs one (dmix,
/// which runs the card at one layout for every stream), else every one it offers (an exclusive
/// plughw, a file PCM's slave); NULL where it says none (the app decides, as before). The route
/// file's plug would take any other count by dropping or repeating channels; offering only what
/// the device plays lets the app downmix with its own rule (mpv, GStreamer and ffmpeg mix a
/// 5.1 centre and surrounds into stereo; the plug would drop them).
static snd_pcm_chmap_query_t **ar_query_chmaps(snd_pcm_ioplug_t *io) {
	struct ar_pcm *p = io->private_data;
	if (p->slave == NULL)
		return NULL;
	snd_pcm_chmap_t *now = snd_pcm_get_chmap(p->slave);
	if (now != NULL) {
		snd_pcm_chmap_query_t **maps = now->channels >= 1 && now->channels <= 8 ? one_map(now, SND_CHMAP_TYPE_FIXED) : NULL;
		free(now);
		return maps;
	}
	return snd_pcm_query_chmaps(p->slave);
}

/// The layout in use: the device's, where it plays the stream's channels as they are.
static snd_pcm_chmap_t *ar_get_chmap(snd_pcm_ioplug_t *io) {
	struct ar_pcm *p = io->private_data;
	snd_pcm_chmap_t *map = p->slave != NULL ? snd_pcm_get_chmap(p->slave) : NULL;
	if (map != NULL && map->channels != io->channels) {
		free(map);  // the plug converts: no map of the device is the stream's
		return NULL;
	}
	return map;
}

/// A layout set by the app: the device's to take, where it plays the stream's channels.
static int ar_set_chmap(snd_pcm_ioplug_t *io, const snd_pcm_chmap_t *map) {
	struct ar_pcm *p = io->private_data;
	snd_pcm_chmap_t *now = ar_get_chmap(io);
	if (now != NULL && now->channels == map->channels &&
			memcmp(now->pos, map->pos, map->channels * sizeof(map->pos[0])) == 0) {
		free(now);
		return 0;  // what it plays already
	}
	free(now);
	return p->slave != NULL && map->channels == io->channels ? snd_pcm_set_chmap(p->slave, map) : -ENXIO;
}

/// A non-blocking app polled: ready unless held; the bus is read first, so a resume counts.
static int ar_poll_revents(snd_pcm_ioplug_t *io, struct pollfd *pfd, unsigned int nfds, unsigned short *revents) {
	(void)pfd;
	(void)nfds;
	struct ar_pcm *p = io->private_data;
	read_bus(p);
	// The route watch is in the descriptor's set too: read, or its change keeps the set ready
	// and a held app spins in its wait (deaf to its own SIGTERM on the real kernel).
	check_route(p);
	// Resumed with frames stashed: they go now, so that the app's buffer has room again.
	if (p->stashed > 0 && !p->tower.interrupted)
		pump(p, NULL, 0);
	update_readiness(p);
	*revents = p->ready_registered ? (io->stream == SND_PCM_STREAM_PLAYBACK ? POLLOUT : POLLIN) : 0;
	return 0;
}

static const snd_pcm_ioplug_callback_t ar_callbacks = {
	.poll_revents = ar_poll_revents,
	.start = ar_start,
	.stop = ar_stop,
	.pointer = ar_pointer,
	.transfer = ar_transfer,
	.close = ar_close,
	.hw_params = ar_hw_params,
	.prepare = ar_prepare,
	.drain = ar_drain,
	.delay = ar_delay,
	.query_chmaps = ar_query_chmaps,
	.get_chmap = ar_get_chmap,
	.set_chmap = ar_set_chmap,
};

static int file_exists(const char *path) { return access(path, F_OK) == 0; }

/// The largest buffer an app gets, in bytes: 10.9 s of 48 kHz stereo S16, 0.34 s of 192 kHz 8-channel
/// S32. The plugin keeps about four buffers' worth (the history of twice, the gain's scratch, the
/// hold's stash), so an app that takes the largest buffer (speaker-test without -b) costs 8 MiB,
/// not the 768 GiB that ioplug's default bound allowed. PulseAudio's ALSA plugin bounds its own at 4 MiB.
#define AR_MAX_BUFFER_BYTES (2 * 1024 * 1024)

static int set_constraints(snd_pcm_ioplug_t *io) {
	static const unsigned int accesses[] = { SND_PCM_ACCESS_RW_INTERLEAVED, SND_PCM_ACCESS_MMAP_INTERLEAVED };
	static const unsigned int formats[] = {
		SND_PCM_FORMAT_U8, SND_PCM_FORMAT_S16_LE, SND_PCM_FORMAT_S24_LE, SND_PCM_FORMAT_S24_3LE,
		SND_PCM_FORMAT_S32_LE, SND_PCM_FORMAT_FLOAT_LE,
	};
	int err;
	if ((err = snd_pcm_ioplug_set_param_list(io, SND_PCM_IOPLUG_HW_ACCESS, 2, accesses)) < 0 ||
			(err = snd_pcm_ioplug_set_param_list(io, SND_PCM_IOPLUG_HW_FORMAT, sizeof(formats) / sizeof(formats[0]), formats)) < 0 ||
			(err = snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_CHANNELS, 1, 8)) < 0 ||
			(err = snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_RATE, 8000, 192000)) < 0 ||
			(err = snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_PERIODS, 2, 1024)) < 0 ||
			(err = snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_PERIOD_BYTES, 64, AR_MAX_BUFFER_BYTES / 2)) < 0 ||
			(err = snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_BUFFER_BYTES, 128, AR_MAX_BUFFER_BYTES)) < 0)
		return err;
	return 0;
}

/// The PCM definition's fields (NULL when not given).
struct ar_fields {
	const char *category, *session_mode, *options, *route_file, *route_name, *bus;
};

static int open_pcm(snd_pcm_t **pcmp, const char *name, snd_pcm_stream_t stream, int mode, const struct ar_fields *f, struct ar_pcm *p);

SND_PCM_PLUGIN_DEFINE_FUNC(audioroute) {
	(void)root;
	const char *category = NULL, *session_mode = NULL, *options = NULL, *route_file = NULL, *route_name = NULL, *bus = NULL;
	snd_config_iterator_t i, next;
	snd_config_for_each(i, next, conf) {
		snd_config_t *n = snd_config_iterator_entry(i);
		const char *id;
		if (snd_config_get_id(n, &id) < 0)
			continue;
		if (strcmp(id, "comment") == 0 || strcmp(id, "type") == 0 || strcmp(id, "hint") == 0)
			continue;
		const char **field = strcmp(id, "category") == 0 ? &category
			: strcmp(id, "mode") == 0 ? &session_mode
			: strcmp(id, "options") == 0 ? &options
			: strcmp(id, "route_file") == 0 ? &route_file
			: strcmp(id, "route_pcm") == 0 ? &route_name
			: strcmp(id, "bus") == 0 ? &bus : NULL;
		if (field == NULL) {
			SNDERR("audioroute: unknown field %s", id);
			return -EINVAL;
		}
		if (snd_config_get_string(n, field) < 0) {
			SNDERR("audioroute: %s must be a string", id);
			return -EINVAL;
		}
	}
	struct ar_pcm *p = calloc(1, sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	const struct ar_fields fields = { category, session_mode, options, route_file, route_name, bus };
	return open_pcm(pcmp, name, stream, mode, &fields, p);
}

/// Opens the PCM `p` (allocated, its follower fields set) stands for; frees it on failure.
static int open_pcm(snd_pcm_t **pcmp, const char *name, snd_pcm_stream_t stream, int mode, const struct ar_fields *f, struct ar_pcm *p) {
	const char *category = f->category, *session_mode = f->session_mode, *options = f->options;
	const char *route_file = f->route_file, *route_name = f->route_name, *bus = f->bus;
	p->io.poll_fd = p->inotify_fd = p->ready_fd = p->bus_fd = -1;
	p->stream = stream;
	p->debug = getenv("AUDIOROUTE_DEBUG") != NULL && getenv("AUDIOROUTE_DEBUG")[0] != '\0';
	int capture = stream == SND_PCM_STREAM_CAPTURE;
	int err = ar_args_resolve(&p->args, category, session_mode, options, getenv("AUDIOROUTE_CATEGORY"), capture);
	if (err < 0) {
		SNDERR("audioroute: %s", p->args.error);
		goto fail;
	}
	snprintf(p->route_name, sizeof(p->route_name), "%s",
			route_name != NULL && route_name[0] != '\0' ? route_name : capture ? AR_ROUTE_INPUT_PCM : AR_ROUTE_OUTPUT_PCM);
	if ((err = ar_route_file_path(p->route_file, sizeof(p->route_file), route_file, getenv("XDG_RUNTIME_DIR"), file_exists)) < 0)
		goto fail;
	// An exclusive device another stream holds (a `hw:` card) is busy already here: with a daemon,
	// it is opened at hw_params instead, after the session is activated (open_route).
	int busy = (err = open_slave(p)) == -EBUSY;
	if (err < 0 && !busy)
		goto fail;
	// The daemon that writes the route file is the tower: the user's instance on the session
	// bus, the system instance (its route file, AR_ROUTE_FILE_SYSTEM) on the system bus; `bus`
	// says otherwise.
	int system = strcmp(p->route_file, AR_ROUTE_FILE_SYSTEM) == 0;
	if (bus != NULL && bus[0] != '\0') {
		if (strcmp(bus, "none") != 0 && strcmp(bus, "session") != 0 && strcmp(bus, "system") != 0) {
			SNDERR("audioroute: bus must be session, system or none, not \"%.40s\"", bus);
			err = -EINVAL;
			goto fail;
		}
		system = strcmp(bus, "system") == 0;
	}
	if (bus == NULL || strcmp(bus, "none") != 0) {
		char app[17] = "";  // the process's name, as `ps` shows it
		prctl(PR_GET_NAME, app, 0, 0, 0);
		if ((err = ar_bus_open(&p->bus, system, app[0] != '\0' ? app : "alsa", &p->args, &p->tower)) < 0)
			goto fail;
	}
	if (busy && !ar_bus_connected(p->bus)) {
		err = -EBUSY;  // no tower to free it: as without the plugin
		goto fail;
	}
	trace(p, "open on %s, category %s; %s", busy ? "(busy: opened at hw_params)" : p->device, p->args.category,
			p->bus != NULL ? "a session in the tower" : p->follower ? "following its client's session" : "no daemon on the bus: following the route file alone");
	// Watch the directory: the daemon replaces the file by a rename, which a watch on the
	// file itself would not follow. Set after the first read, so a missing file is reported as such.
	if ((p->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0) {
		err = -errno;
		goto fail;
	}
	char directory[PATH_MAX];
	snprintf(directory, sizeof(directory), "%s", p->route_file);
	*strrchr(directory, '/') = '\0';
	if (inotify_add_watch(p->inotify_fd, directory[0] != '\0' ? directory : "/", IN_CLOSE_WRITE | IN_MOVED_TO) < 0) {
		err = -errno;
		SNDERR("audioroute: cannot watch %s: %s", directory, snd_strerror(err));
		goto fail;
	}
	// The app's poll descriptor: an epoll set, ready while the stream can take frames (the
	// transfer itself blocks on the device), and, while it is held, when the bus or the route
	// watch has news. One descriptor that never changes, for apps that ask for it once.
	if ((p->io.poll_fd = epoll_create1(EPOLL_CLOEXEC)) < 0 || (p->ready_fd = eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		err = -errno;
		goto fail;
	}
	struct epoll_event news = { .events = EPOLLIN };
	if (epoll_ctl(p->io.poll_fd, EPOLL_CTL_ADD, p->inotify_fd, &news) < 0 ||
			(p->bus != NULL && epoll_ctl(p->io.poll_fd, EPOLL_CTL_ADD, ar_bus_fd(p->bus), &news) < 0)) {
		err = -errno;
		goto fail;
	}
	p->bus_fd = p->bus != NULL ? ar_bus_fd(p->bus) : -1;
	update_readiness(p);
	p->io.version = SND_PCM_IOPLUG_VERSION;
	p->io.name = "AudioRoute: follows the current route";
	p->io.flags = SND_PCM_IOPLUG_FLAG_BOUNDARY_WA;
	p->io.poll_events = POLLIN;  // an epoll set is readable; ar_poll_revents says which way
	p->io.mmap_rw = 0;
	p->io.callback = &ar_callbacks;
	p->io.private_data = p;
	if ((err = snd_pcm_ioplug_create(&p->io, name, stream, mode)) < 0)
		goto fail;
	// ioplug sets `nonblock` only when the app calls snd_pcm_nonblock(): an app that opens with
	// SND_PCM_NONBLOCK alone (and polls) was held inside a transfer, where it could not restart.
	p->io.nonblock = (mode & SND_PCM_NONBLOCK) != 0;
	if ((err = set_constraints(&p->io)) < 0) {
		snd_pcm_ioplug_delete(&p->io);  // calls ar_close, which frees p
		return err;
	}
	*pcmp = p->io.pcm;
	return 0;
fail:
	free_pcm(p);
	return err;
}

SND_PCM_PLUGIN_SYMBOL(audioroute);

int ar_follower_open(snd_pcm_t **pcm, struct ar_pcm **follower, const char *route_file, const char *route_pcm,
		const char *const *config_files, size_t config_count) {
	if (route_file == NULL || route_file[0] == '\0')
		return -EINVAL;
	struct ar_pcm *p = calloc(1, sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	p->follower = 1;
	p->io.poll_fd = p->inotify_fd = p->ready_fd = p->bus_fd = -1;
	if (config_count > 0 && (p->config_files = calloc(config_count, sizeof(*p->config_files))) == NULL) {
		free_pcm(p);
		return -ENOMEM;
	}
	for (; p->config_count < config_count; p->config_count++)
		if ((p->config_files[p->config_count] = strdup(config_files[p->config_count])) == NULL) {
			free_pcm(p);
			return -ENOMEM;
		}
	// No session of its own: the client's session is the one in the tower.
	const struct ar_fields fields = { "playback", NULL, NULL, route_file, route_pcm, "none" };
	int err = open_pcm(pcm, "audioroute_follower", SND_PCM_STREAM_PLAYBACK, 0, &fields, p);
	if (err >= 0)
		*follower = p;
	return err;
}

void ar_follower_route_changed(struct ar_pcm *follower) { follower->tower.route_changed = 1; }

int ar_follower_take_move(struct ar_pcm *follower, char *from, size_t from_size, char *to, size_t to_size, long *replayed) {
	if (!follower->moved)
		return 0;
	follower->moved = 0;
	snprintf(from, from_size, "%s", follower->moved_from);
	snprintf(to, to_size, "%s", follower->device);
	*replayed = follower->moved_replay;
	return 1;
}

const char *ar_follower_device(const struct ar_pcm *follower) { return follower->device; }

int ar_pcm_disconnected(snd_pcm_t *pcm, int err) {
	if (err != -EIO)
		return err;
	for (int attempt = 0; attempt < 50; attempt++) {
		if (snd_pcm_state(pcm) == SND_PCM_STATE_DISCONNECTED)
			return -ENODEV;
		struct timespec pause = { .tv_nsec = 10 * 1000 * 1000 };
		nanosleep(&pause, NULL);
	}
	return err;
}
