// The route's device: opened, set up, moved to (make before break), played out and closed.
#include "pcm_internal.h"

/// Closes the device a move left, when its time is up or `now` says so.
void ar_close_retired(struct ar_pcm *p, int now) {
	if (p->retired == NULL || (!now && ar_now_ms() < p->retired_until))
		return;
	snd_pcm_drop(p->retired);
	snd_pcm_close(p->retired);
	p->retired = NULL;
	if (p->retired_config != NULL)
		snd_config_delete(p->retired_config);
	p->retired_config = NULL;
}

void ar_close_slave(struct ar_pcm *p) {
	ar_close_retired(p, 1);
	ar_outputs_close(p);
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

/// Sets `field` of the `slave` compound of a plug's definition to `value`, or removes it (0).
static int set_slave_field(snd_config_t *slave, const char *field, unsigned int value) {
	snd_config_t *node;
	if (snd_config_search(slave, field, &node) >= 0)
		snd_config_delete(node);
	if (value == 0)
		return 0;
	int err = snd_config_imake_integer(&node, field, value);
	if (err >= 0 && (err = snd_config_add(slave, node)) < 0)
		snd_config_delete(node);
	return err;
}

/// The `slave` compound of `config`'s definition `name` where it is a `plug` (the route file's
/// are), else NULL: another type, or a slave named by reference, is left as it is.
static snd_config_t *plug_slave(snd_config_t *config, const char *name) {
	char key[96];
	snprintf(key, sizeof(key), "pcm.%s", name);
	snd_config_t *definition, *type, *slave;
	const char *type_name;
	if (snd_config_search(config, key, &definition) < 0 || snd_config_search(definition, "type", &type) < 0 ||
			snd_config_get_string(type, &type_name) < 0 || strcmp(type_name, "plug") != 0 ||
			snd_config_search(definition, "slave", &slave) < 0 || snd_config_get_type(slave) != SND_CONFIG_TYPE_COMPOUND)
		return NULL;
	return slave;
}

/// The device last found not to run at a preference, and what it runs nearest to it: later
/// streams of the process open it at that at once, instead of failing first (alsa-lib says
/// "Slave PCM not usable" at every such failure, on every stream of a dmix route).
static struct {
	pthread_mutex_t lock;
	char device[512];
	unsigned int asked_rate, asked_channels, rate, channels;
} refused = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void remember_refused(const char *device, unsigned int asked_rate, unsigned int asked_channels, unsigned int rate,
		unsigned int channels) {
	pthread_mutex_lock(&refused.lock);
	snprintf(refused.device, sizeof(refused.device), "%s", device);
	refused.asked_rate = asked_rate;
	refused.asked_channels = asked_channels;
	refused.rate = rate;
	refused.channels = channels;
	pthread_mutex_unlock(&refused.lock);
}

/// What `device` was found to run at instead of the preferences (1), or 0 when it was not.
static int known_refused(const char *device, unsigned int asked_rate, unsigned int asked_channels, unsigned int *rate,
		unsigned int *channels) {
	pthread_mutex_lock(&refused.lock);
	int known = strcmp(refused.device, device) == 0 && refused.asked_rate == asked_rate && refused.asked_channels == asked_channels;
	if (known) {
		*rate = refused.rate;
		*channels = refused.channels;
	}
	pthread_mutex_unlock(&refused.lock);
	return known;
}

/// Gives `config`'s definition `name` (the route's plug) the session's preferred rate and channel
/// count as its slave's, so that the device runs at them and the plug converts the app's stream;
/// a rate or count the definition sets itself stays. Returns which it was given (AR_PREFER_*).
int ar_prefer(struct ar_pcm *p, snd_config_t *config, const char *name) {
	snd_config_t *slave = plug_slave(config, name), *node;
	if (slave == NULL)
		return 0;
	int given = 0;
	unsigned int rate = p->preferred_rate, channels = p->preferred_channels;
	const char *device;
	if (snd_config_search(slave, "pcm", &node) >= 0 && snd_config_get_string(node, &device) >= 0)
		known_refused(device, rate, channels, &rate, &channels);
	if (p->preferred_rate > 0 && snd_config_search(slave, "rate", &node) < 0 && set_slave_field(slave, "rate", rate) >= 0)
		given |= AR_PREFER_RATE;
	if (p->preferred_channels > 0 && snd_config_search(slave, "channels", &node) < 0 && set_slave_field(slave, "channels", channels) >= 0)
		given |= AR_PREFER_CHANNELS;
	return given;
}

/// What `device` (the route's device itself, not its plug) runs at nearest to the preferences
/// `*rate` and `*channels` (0: not asked), as the client library's probe reads it; 0 where it
/// cannot be opened to say.
static void nearest_format(struct ar_pcm *p, snd_config_t *config, const char *device, unsigned int *rate, unsigned int *channels) {
	snd_pcm_t *pcm;
	snd_pcm_hw_params_t *hw;
	snd_pcm_hw_params_alloca(&hw);
	if (device[0] == '\0' || snd_pcm_open_lconf(&pcm, device, p->stream, SND_PCM_NONBLOCK, config) < 0) {
		*rate = *channels = 0;
		return;
	}
	if (snd_pcm_hw_params_any(pcm, hw) < 0 || (*rate > 0 && snd_pcm_hw_params_set_rate_near(pcm, hw, rate, NULL) < 0))
		*rate = 0;
	if (*channels > 0 && snd_pcm_hw_params_set_channels_near(pcm, hw, channels) < 0)
		*channels = 0;
	snd_pcm_close(pcm);
}

/// "44100 Hz, 6 channels", "44100 Hz", "6 channels", or `none` for neither.
static void describe_format(char *text, size_t size, unsigned int rate, unsigned int channels, const char *none) {
	if (rate > 0 && channels > 0)
		snprintf(text, size, "%u Hz, %u channels", rate, channels);
	else if (rate > 0)
		snprintf(text, size, "%u Hz", rate);
	else if (channels > 0)
		snprintf(text, size, "%u channels", channels);
	else
		snprintf(text, size, "%s", none);
}

/// Gives `*pcm` (`config`'s definition `name`, opened with `mode`, its plug given the
/// preferences `preferred` by ar_prefer) the stream's parameters. Where its device `device`
/// refuses the preferred rate or channels (dmix runs at its own; a card without that rate), the
/// stream does not fail: it is reopened at what the device runs nearest to them (what the
/// client's `sampleRate` says), else at the route's own; the error of that last try otherwise.
/// Said once per process on standard error.
int ar_setup_preferred(struct ar_pcm *p, snd_pcm_t **pcm, const char *name, snd_config_t *config, int mode, int preferred,
		const char *device) {
	static int told;
	int err = ar_setup_device(p, *pcm);
	snd_config_t *slave = plug_slave(config, name);
	// Whatever the refusal's code (a plug over dmix fails later in its refinement than over
	// hardware); a busy device is the caller's to wait for.
	if (err >= 0 || err == -EBUSY || preferred == 0 || slave == NULL)
		return err;
	unsigned int rate = preferred & AR_PREFER_RATE ? p->preferred_rate : 0;
	unsigned int channels = preferred & AR_PREFER_CHANNELS ? p->preferred_channels : 0;
	snd_pcm_close(*pcm);  // before the device is asked: an exclusive one opens once
	*pcm = NULL;
	nearest_format(p, config, device, &rate, &channels);
	for (int attempt = 0; attempt < 2; attempt++) {
		if (attempt == 1)
			rate = channels = 0;  // the route's own: the plug picks what the device runs nearest the app's
		if ((preferred & AR_PREFER_RATE && (err = set_slave_field(slave, "rate", rate)) < 0) ||
				(preferred & AR_PREFER_CHANNELS && (err = set_slave_field(slave, "channels", channels)) < 0))
			return err;
		if ((err = snd_pcm_open_lconf(pcm, name, p->stream, mode, config)) < 0)
			return err;
		if ((err = ar_setup_device(p, *pcm)) >= 0 || err == -EBUSY)
			break;
		snd_pcm_close(*pcm);
		*pcm = NULL;
	}
	char asked[64], given[64];
	describe_format(asked, sizeof(asked), preferred & AR_PREFER_RATE ? p->preferred_rate : 0,
			preferred & AR_PREFER_CHANNELS ? p->preferred_channels : 0, "none");
	describe_format(given, sizeof(given), rate, channels, "the route's own rate and channels");
	ar_trace(p, "%s does not run at %s: opened at %s", device, asked, given);
	if (err >= 0)
		remember_refused(device, p->preferred_rate, p->preferred_channels, rate, channels);
	if (err >= 0 && !__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
		SNDERR("audioroute: the route's device %s does not run at the session's preferred %s: it runs at %s", device, asked, given);
	return err;
}

/// Opens the route's definition as the slave: the system's configuration with the route file
/// loaded over it (its `pcm.?audioroute` leaves this plugin's definition as it is), so that
/// names the route uses (dmix:, plughw:, bluealsa:, a user's own) resolve as for any client.
int ar_open_slave(struct ar_pcm *p) {
	char *text = p->route_text;
	size_t length = p->route_length;
	char device[sizeof(p->device)];
	int err = 0;
	p->route_text = NULL;
	if (text == NULL && (err = ar_read_route_text(p, &text, &length)) < 0)
		return err;
	snd_config_t *global = NULL, *config = NULL;
	if ((err = ar_route_device(p, text, length, device, sizeof(device))) >= 0 && (err = snd_config_update_ref(&global)) >= 0) {
		err = snd_config_copy(&config, global);
		snd_config_unref(global);
	}
	for (size_t i = 0; err >= 0 && i < p->config_count; i++)
		if ((err = ar_load_file(config, p->config_files[i])) < 0)
			SNDERR("audioroute: cannot load %s: %s", p->config_files[i], snd_strerror(err));
	if (err >= 0)
		err = ar_load_text(config, text, length);
	if (err >= 0 && p->stream == SND_PCM_STREAM_PLAYBACK)
		ar_outputs_keep_text(p, text, length);
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
	p->slave_preferred = err >= 0 ? ar_prefer(p, config, p->route_name) : 0;
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

/// Gives `pcm` the stream's parameters: the route's definitions are `plug`s, so they convert.
int ar_setup_device(struct ar_pcm *p, snd_pcm_t *pcm) {
	snd_pcm_hw_params_t *hw;
	snd_pcm_hw_params_alloca(&hw);
	snd_pcm_uframes_t period = p->io.period_size, buffer = p->io.buffer_size;
	// No longer than half the queue kept ahead: a rate converter on the way (the plug's, at the
	// preferred rate or dmix's) passes frames on in whole periods, and holds up to one in its
	// delay, which the writer waits to see fall below the queue (aplay's 125 ms periods over a
	// 100 ms queue waited for ever on a file PCM, and ran the card dry on hardware).
	if (p->ahead > 1 && period > p->ahead / 2)
		period = p->ahead / 2;
	int err;
	if ((err = snd_pcm_hw_params_any(pcm, hw)) < 0 ||
			(err = snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED)) < 0 ||
			(err = snd_pcm_hw_params_set_format(pcm, hw, p->io.format)) < 0 ||
			(err = snd_pcm_hw_params_set_channels(pcm, hw, p->io.channels)) < 0 ||
			(err = snd_pcm_hw_params_set_rate(pcm, hw, p->io.rate, 0)) < 0 ||
			(err = snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, NULL)) < 0 ||
			(err = snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &buffer)) < 0 ||
			(err = snd_pcm_hw_params(pcm, hw)) < 0)
		return err;
	return 0;
}

/// Gives the slave the stream's parameters.
int ar_setup_slave(struct ar_pcm *p) {
	int err = ar_setup_preferred(p, &p->slave, p->route_name, p->slave_config, 0, p->slave_preferred, p->device);
	if (err < 0) {
		if (err != -EBUSY || !p->busy_reported_later)
			SNDERR("audioroute: the route's device %s refused the stream's parameters: %s", p->device, snd_strerror(err));
		return err;
	}
	return 0;
}

/// Writes all of `frames` to the slave, recovering an underrun; a negative errno on failure.
snd_pcm_sframes_t ar_write_all(struct ar_pcm *p, const char *frames, snd_pcm_uframes_t count) {
	snd_pcm_uframes_t done = 0;
	while (done < count) {
		snd_pcm_sframes_t n = snd_pcm_writei(p->slave, frames + done * p->frame_bytes, count - done);
		if (n == -EPIPE || n == -ESTRPIPE || n == -EINTR) {
			if (n == -EPIPE)
				ar_trace(p, "underrun on %s", p->device);
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
int ar_replay(struct ar_pcm *p, snd_pcm_sframes_t frames) {
	const void *first, *second;
	size_t first_count, second_count;
	ar_history_last(&p->history, (size_t)frames, &first, &first_count, &second, &second_count);
	snd_pcm_sframes_t n = ar_write_all(p, first, first_count);
	if (n >= 0) {
		ar_outputs_write(p, first, first_count);  // held, the further outputs were dropped too
		n = ar_write_all(p, second, second_count);
	}
	if (n >= 0)
		ar_outputs_write(p, second, second_count);
	return n < 0 ? (int)n : 0;
}

/// Opens the route's device and gives it the stream's parameters; on failure nothing is open.
int ar_open_and_setup(struct ar_pcm *p) {
	int err = ar_open_slave(p);
	if (err >= 0 && (err = ar_setup_slave(p)) < 0)
		ar_close_slave(p);
	return err;
}

/// Moves the stream to the route's device. The new device is opened first, while the old one
/// plays what it holds (make before break: opening a USB card takes 150 ms and more); then the
/// old one, still there, plays out the rest and stays open, silent, for 100 ms (close_retired),
/// and the stream goes on on the new one from the next frame: none lost, none twice. Held, the old device was dropped when the hold
/// began: what it had not played is replayed from the history. A device already gone held
/// nothing we can know of (its delay fails): those are the ones lost.
int ar_move(struct ar_pcm *p) {
	ar_close_retired(p, 1);
	snd_pcm_t *old = p->slave;
	snd_config_t *old_config = p->slave_config;
	char old_device[sizeof(p->device)];
	snprintf(old_device, sizeof(old_device), "%s", p->device);
	ar_trace(p, "move from %s", old_device);
	p->slave = NULL;
	p->slave_config = NULL;
	int err = ar_open_and_setup(p);
	if (err == -EBUSY && old != NULL) {
		// The new name reaches the old device's hardware (an exclusive card under two names).
		snd_pcm_drop(old);
		snd_pcm_close(old);
		old = NULL;
		err = ar_open_and_setup(p);
	}
	snd_pcm_sframes_t pending = 0;
	int played_out = 0;
	int held = p->hold.holding;
	if (held) {
		pending = p->hold.replay;  // the old device was dropped when the hold began
	} else if (old != NULL && p->stream == SND_PCM_STREAM_PLAYBACK && snd_pcm_delay(old, &pending) >= 0 && pending > 0 &&
			snd_pcm_state(old) == SND_PCM_STATE_RUNNING) {
		// The old device is still there: it plays out what it holds (at most `ahead`, 100 ms,
		// which the new one's open has already shortened), and the new one starts where it
		// stopped. Dropping it and replaying its delay lost the frames the hardware had taken
		// but not yet played (30-50 ms at each move on the real-kernel bench).
		ar_trace(p, "move: %s plays out its %ld frames", old_device, (long)pending);
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
		played_out = old != NULL && !held && snd_pcm_state(old) != SND_PCM_STATE_DISCONNECTED;
		if (played_out && p->stream == SND_PCM_STREAM_PLAYBACK)
			snd_pcm_drain(old);
		pending = 0;
	}
	ar_hold_end(&p->hold);  // the move replays what was held
	if (old != NULL && played_out && err >= 0 && strncmp(old_device, "bluealsa", 8) != 0) {
		// Kept open (silent) a little, so that the card plays what its DMA had taken. Not a
		// BlueALSA PCM: its server plays what it has, and holding the A2DP transport could keep
		// the headset from the HFP link a call moves to.
		p->retired = old;
		p->retired_config = old_config;
		p->retired_until = ar_now_ms() + 100;
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
		ar_trace(p, "move: the route's device cannot be opened: %s", snd_strerror(err));
		return err;
	}
	ar_trace(p, "move: %s open, %ld frames to replay", p->device, (long)pending);
	p->moved = 1;
	snprintf(p->moved_from, sizeof(p->moved_from), "%s", old_device);
	p->moved_replay = (long)pending;
	err = ar_replay(p, pending);
	ar_trace(p, "move: replayed on %s", p->device);
	ar_outputs_sync(p);  // the route's further outputs, as the file that moved the stream names them
	return err;
}
