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
	int err = ar_setup_device(p, p->slave);
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
