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
//
// This file: the ioplug's callbacks, the open, the follower's API; the rest by concern beside it
// (pcm_internal.h).
#define PIC 1  // alsa-lib's plugin symbols (SND_PCM_PLUGIN_SYMBOL) are those of a shared object
#include "pcm_internal.h"

/// One line on standard error with the CLOCK_MONOTONIC time, when AUDIOROUTE_DEBUG is set: how
/// long a move took, when a hold began, for an integrator's logs and the real-kernel bench.
__attribute__((format(printf, 2, 3))) void ar_trace(const struct ar_pcm *p, const char *format, ...) {
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
void ar_read_bus(struct ar_pcm *p) {
	if (p->bus == NULL)
		return;
	ar_bus_process(p->bus);
	if (!ar_bus_take_lost(p->bus))
		return;
	ar_trace(p, "the tower went away%s", ar_bus_fd(p->bus) < 0 ? ", and the bus" : "");
	if (!p->told_lost)
		SNDERR("audioroute: the tower (audiorouted) went away: this stream plays on outside it, on the route file's device");
	p->told_lost = 1;
	if (ar_bus_fd(p->bus) < 0 && p->bus_fd >= 0 && p->io.poll_fd >= 0) {
		epoll_ctl(p->io.poll_fd, EPOLL_CTL_DEL, p->bus_fd, NULL);
		p->bus_fd = -1;
	}
}

/// Milliseconds on CLOCK_MONOTONIC.
long long ar_now_ms(void) {
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/// Nanoseconds on CLOCK_MONOTONIC.
long long ar_now_ns(void) {
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

static snd_pcm_sframes_t ar_transfer(snd_pcm_ioplug_t *io, const snd_pcm_channel_area_t *areas,
		snd_pcm_uframes_t offset, snd_pcm_uframes_t size) {
	char *frames = (char *)areas[0].addr + (areas[0].first + offset * areas[0].step) / 8;
	return ar_pump(io->private_data, frames, size);
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
	int err = p->slave != NULL ? ar_setup_slave(p) : ar_open_and_setup(p);
	int activated = 0;
	long long deadline = 0;
	enum ar_busy_action action;
	while ((action = ar_busy_step(err, ar_bus_connected(p->bus), &p->tower, activated, ar_now_ms() >= deadline)) != AR_BUSY_DONE) {
		if (action == AR_BUSY_ACTIVATE) {
			ar_trace(p, "%s is busy: activating the session before the first frames", p->slave != NULL ? p->device : p->route_name);
			if (ar_bus_set_active(p->bus, 1, 0) < 0) {
				ar_trace(p, "session not activated: the route's device stays busy");
				break;
			}
			ar_trace(p, "session activated");
			activated = 1;
			deadline = ar_now_ms() + AR_BUSY_WAIT_MS;
		} else if (action == AR_BUSY_RETRY) {
			ar_close_slave(p);
			ar_bus_wait(p->bus, -1, AR_BUSY_RETRY_MS);
			ar_read_bus(p);
			p->tower.route_changed = 0;  // the open below reads the route as it is now
			ar_keep_route_text(p, NULL, 0);
			err = ar_open_and_setup(p);
			ar_trace(p, "the route's device, tried again: %s%s", err < 0 ? snd_strerror(err) : p->device, err < 0 ? "" : " open");
		} else {  // AR_BUSY_GIVE_UP
			ar_close_slave(p);
			if (p->tower.active)
				ar_bus_set_active(p->bus, 0, 1);  // those it interrupted resume
			ar_trace(p, "the route's device stays busy: session deactivated");
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
	char why[160];
	if (ar_io_sizes(io->rate, io->buffer_size, getenv("AUDIOROUTE_IO_BUFFER_DURATION"), &p->piece, &p->ahead, why, sizeof(why)) < 0)
		SNDERR("audioroute: %s", why);
	ar_trace(p, "pieces of %lu frames, %lu ahead", p->piece, p->ahead);
	// Twice the app's buffer: the device's may be larger (its size is only "near" ours), and its
	// delay is what a move replays from here.
	if (io->stream == SND_PCM_STREAM_PLAYBACK && ar_history_reserve(&p->history, 2 * io->buffer_size, p->frame_bytes) < 0)
		return -ENOMEM;
	free(p->scratch);
	free(p->stash);
	p->scratch = p->stash = NULL;
	p->hold.capacity = 0;
	if (io->stream == SND_PCM_STREAM_PLAYBACK &&
			((p->scratch = malloc(io->buffer_size * p->frame_bytes)) == NULL || (p->stash = malloc(io->buffer_size * p->frame_bytes)) == NULL))
		return -ENOMEM;
	p->hold.capacity = p->stash != NULL ? io->buffer_size : 0;
	ar_outputs_close(p);  // set up again below, with these parameters
	int err = open_route(p);
	if (err >= 0) {
		ar_step(&p->state, AR_EVENT_OPENED);
		ar_outputs_sync(p);
	}
	return err;
}

static int ar_prepare(snd_pcm_ioplug_t *io) {
	struct ar_pcm *p = io->private_data;
	ar_read_bus(p);
	if (ar_bus_connected(p->bus) && ar_tower_restart(&p->tower)) {
		// The app restarted its stream while held (drop, then prepare): it asks to play again.
		// What the device had not played was the app's to discard, and it did.
		ar_trace(p, "restarted by the app while held: asking the tower to activate it again");
		ar_hold_restarted(&p->hold);
		ar_update_readiness(p);
	}
	snd_pcm_sw_params_t *sw;
	snd_pcm_sw_params_alloca(&sw);
	if (snd_pcm_sw_params_current(io->pcm, sw) < 0 || snd_pcm_sw_params_get_boundary(sw, &p->boundary) < 0 || p->boundary == 0)
		p->boundary = io->buffer_size;
	p->transferred = 0;
	ar_hold_unstash(&p->hold, p->hold.stashed);
	p->silence_since = 0;
	ar_history_clear(&p->history);
	ar_outputs_each(p, snd_pcm_prepare);
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
	ar_outputs_each(p, snd_pcm_drop);
	return p->slave != NULL ? snd_pcm_drop(p->slave) : 0;
}

static int ar_drain(snd_pcm_ioplug_t *io) {
	struct ar_pcm *p = io->private_data;
	if (p->slave == NULL || io->stream != SND_PCM_STREAM_PLAYBACK)
		return 0;
	ar_outputs_drain(p);
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
	ar_close_slave(p);
	free(p->route_text);
	free(p->outputs_text);
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
	ar_read_bus(p);
	// The route watch is in the descriptor's set too: read, or its change keeps the set ready
	// and a held app spins in its wait (deaf to its own SIGTERM on the real kernel).
	ar_check_route(p);
	// Resumed with frames stashed: they go now, so that the app's buffer has room again.
	if (p->hold.stashed > 0 && !p->tower.interrupted)
		ar_pump(p, NULL, 0);
	ar_update_readiness(p);
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
	// The session's preferred format for the device (the client library sets these in its
	// process); a bad value is named and the route's own format used.
	char why[160];
	if (ar_preference(AR_PREFERRED_RATE_VARIABLE, getenv(AR_PREFERRED_RATE_VARIABLE), AR_PREFERRED_RATE_MIN, AR_PREFERRED_RATE_MAX,
			&p->preferred_rate, why, sizeof(why)) < 0)
		SNDERR("audioroute: %s", why);
	const char *channels_variable = capture ? AR_PREFERRED_INPUT_CHANNELS_VARIABLE : AR_PREFERRED_OUTPUT_CHANNELS_VARIABLE;
	if (ar_preference(channels_variable, getenv(channels_variable), 1, AR_PREFERRED_CHANNELS_MAX, &p->preferred_channels, why,
			sizeof(why)) < 0)
		SNDERR("audioroute: %s", why);
	snprintf(p->route_name, sizeof(p->route_name), "%s",
			route_name != NULL && route_name[0] != '\0' ? route_name : capture ? AR_ROUTE_INPUT_PCM : AR_ROUTE_OUTPUT_PCM);
	if ((err = ar_route_file_path(p->route_file, sizeof(p->route_file), route_file, getenv("XDG_RUNTIME_DIR"), file_exists)) < 0)
		goto fail;
	// An exclusive device another stream holds (a `hw:` card) is busy already here: with a daemon,
	// it is opened at hw_params instead, after the session is activated (open_route).
	int busy = (err = ar_open_slave(p)) == -EBUSY;
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
	ar_trace(p, "open on %s, category %s; %s", busy ? "(busy: opened at hw_params)" : p->device, p->args.category,
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
	// The route was read before the session's signals (and the file's watch) were there: a change
	// in between, another app's session bringing the mic into the route, would be missed until
	// the next one (on the real kernel, a reader recorded 2.4 s of silence so). So the file is read
	// again at the first boundary; the same device moves nothing. Not for a follower, which
	// moves only when its client's session says so.
	if (!p->follower)
		p->tower.route_changed = 1;
	ar_update_readiness(p);
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
