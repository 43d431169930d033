// The route, read: the route file's text, the device it names, and whether that is a change.
#include "pcm_internal.h"

/// The route file's text, read once, so that what is compared and what is opened are the same
/// version of a file the daemon may replace at any moment. NUL-terminated; free() it.
int ar_read_route_text(struct ar_pcm *p, char **text, size_t *length) {
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
int ar_load_text(snd_config_t *top, const char *text, size_t length) {
	snd_input_t *in;
	int err = snd_input_buffer_open(&in, text, (ssize_t)length);
	if (err < 0)
		return err;
	err = snd_config_load(top, in);
	snd_input_close(in);
	return err;
}

/// Loads the configuration file at `path` into `top`.
int ar_load_file(snd_config_t *top, const char *path) {
	snd_input_t *in;
	int err = snd_input_stdio_open(&in, path, "r");
	if (err < 0)
		return err;
	err = snd_config_load(top, in);
	snd_input_close(in);
	return err;
}

/// The slave.pcm of the route's definition of `p->route_name` in `text`, into `device`.
int ar_route_device(struct ar_pcm *p, const char *text, size_t length, char *device, size_t size) {
	snd_config_t *top, *definition, *slave;
	int err = snd_config_top(&top);
	if (err < 0)
		return err;
	char key[96];
	snprintf(key, sizeof(key), "pcm.%s", p->route_name);
	const char *name = "";
	if ((err = ar_load_text(top, text, length)) >= 0 && (err = snd_config_search(top, key, &definition)) < 0)
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
	int err = ar_read_route_text(p, text, length);
	if (err < 0)
		return err;
	if ((err = ar_route_device(p, *text, *length, device, size)) < 0) {
		free(*text);
		*text = NULL;
	}
	return err;
}

/// Keeps `text`, the file as last read, for the move it may cause (the one kept before is
/// outdated by it); NULL forgets it, so that the next open reads the file.
void ar_keep_route_text(struct ar_pcm *p, char *text, size_t length) {
	free(p->route_text);
	p->route_text = text;
	p->route_length = length;
}

/// Reads the route watch; on a change of the file, re-reads the route and tells the state
/// machine when it names another device.
void ar_check_route(struct ar_pcm *p) {
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
	ar_keep_route_text(p, text, length);  // a move opens the version of the file last compared
	if (strcmp(device, p->device) == 0 && ar_tower_device_back(&p->tower)) {
		// The device an unplug held the stream from is the route's again (plugged back): the
		// stream goes on there, reopened (its old handle died with the device).
		ar_trace(p, "%s is back: the hold is lifted", device);
		ar_hold_device_back(&p->hold);
		ar_step(&p->state, AR_EVENT_ROUTE_CHANGED);
	} else if (strcmp(device, p->device) != 0) {
		ar_trace(p, "the route names %s", device);
		ar_step(&p->state, AR_EVENT_ROUTE_CHANGED);
	} else if (p->stream == SND_PCM_STREAM_PLAYBACK) {
		// The same first output: a multiRoute route's further outputs may have changed all the same.
		ar_outputs_keep_text(p, text, length);
		ar_outputs_sync(p);
	}
}
