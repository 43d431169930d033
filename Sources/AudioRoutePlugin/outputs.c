// A multiRoute route's further outputs: each the route file's `audioroute_route_output_<n>`, opened
// as a device of its own beside the first, written the frames the first gets and kept in step with
// it (docs/decisions.md, "multiRoute: one device per output"). The first paces the stream; these
// are written non-blocking, so that one slow, stuck or gone never holds it.
#include "pcm_internal.h"

/// The smoothed delay difference past which a further output is corrected: 2 ms.
static long drift_threshold(const struct ar_pcm *p) { return (long)(p->io.rate / 500 > 0 ? p->io.rate / 500 : 1); }

/// Most frames dropped or repeated on one piece: an eighth of it (1.25 ms of 10 ms).
static long drift_step(const struct ar_pcm *p) { return (long)(p->piece / 8 > 0 ? p->piece / 8 : 1); }

/// Keeps a copy of the route file's `text` (the version the first output was opened from, or that
/// was compared last), for the further outputs it names. Bounded: the route file is read 64 KiB at most.
void ar_outputs_keep_text(struct ar_pcm *p, const char *text, size_t length) {
	char *copy = malloc(length + 1);
	if (copy == NULL)
		return;  // the outputs stay as they are: a further output is no reason to fail the stream
	memcpy(copy, text, length);
	copy[length] = '\0';
	free(p->outputs_text);
	p->outputs_text = copy;
	p->outputs_length = length;
}

static void close_output(struct ar_output *output) {
	if (output->pcm != NULL) {
		snd_pcm_drop(output->pcm);
		snd_pcm_close(output->pcm);
		output->pcm = NULL;
	}
	if (output->config != NULL)
		snd_config_delete(output->config);
	output->config = NULL;
}

void ar_outputs_close(struct ar_pcm *p) {
	for (size_t i = 0; i < p->output_count; i++)
		close_output(&p->outputs[i]);
	p->output_count = 0;
}

/// Opens further output `index` (1-based) of `text` into `output`, set up as the stream; 0 or a
/// negative errno, with nothing left open.
static int open_output(struct ar_pcm *p, struct ar_output *output, size_t index) {
	char name[64];
	snprintf(name, sizeof(name), "%s%zu", AR_ROUTE_FURTHER_OUTPUT_PCM_PREFIX, index);
	snd_config_t *config = NULL;
	int err = snd_config_copy(&config, p->slave_config);
	if (err >= 0)
		err = ar_load_text(config, p->outputs_text, p->outputs_length);
	int preferred = err >= 0 ? ar_prefer(p, config, name) : 0;  // run at the session's rate, as the first
	if (err >= 0)
		err = snd_pcm_open_lconf(&output->pcm, name, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK, config);
	if (err < 0) {
		output->pcm = NULL;
		if (config != NULL)
			snd_config_delete(config);
		return err;
	}
	output->config = config;
	if ((err = ar_setup_preferred(p, &output->pcm, name, config, SND_PCM_NONBLOCK, preferred, output->device)) < 0)
		close_output(output);
	return err;
}

/// Opens the further outputs the route file's text last kept names, keeping those open on the same
/// device and closing those it no longer names; one that fails is left out (and tried again at the
/// file's next change). Only once the stream has its parameters and the first output is open.
void ar_outputs_sync(struct ar_pcm *p) {
	// Only for the route's own output: a definition of the user's (`route_pcm`) is one device.
	if (p->stream != SND_PCM_STREAM_PLAYBACK || strcmp(p->route_name, AR_ROUTE_OUTPUT_PCM) != 0 || p->outputs_text == NULL || p->slave == NULL || p->slave_config == NULL ||
			p->frame_bytes == 0)
		return;
	size_t count = 0;
	char devices[AR_MAX_OUTPUTS - 1][sizeof(p->outputs[0].device)];
	snd_config_t *top;
	if (snd_config_top(&top) < 0)
		return;
	if (ar_load_text(top, p->outputs_text, p->outputs_length) >= 0) {
		for (; count < AR_MAX_OUTPUTS - 1; count++) {
			char key[96];
			snprintf(key, sizeof(key), "pcm.%s%zu.slave.pcm", AR_ROUTE_FURTHER_OUTPUT_PCM_PREFIX, count + 1);
			snd_config_t *slave;
			const char *device;
			if (snd_config_search(top, key, &slave) < 0 || snd_config_get_string(slave, &device) < 0)
				break;  // the outputs are numbered from 1 without a gap
			snprintf(devices[count], sizeof(devices[count]), "%s", device);
		}
	}
	snd_config_delete(top);
	for (size_t i = 0; i < AR_MAX_OUTPUTS - 1; i++) {
		struct ar_output *output = &p->outputs[i];
		int listed = i < count;
		int same = i < p->output_count && listed && strcmp(output->device, devices[i]) == 0;
		if (same && output->pcm != NULL)
			continue;
		if (i < p->output_count)
			close_output(output);
		if (!listed)
			continue;
		memset(output, 0, sizeof(*output));
		memcpy(output->device, devices[i], sizeof(output->device));  // the same size, NUL-terminated
		int err = open_output(p, output, i + 1);
		ar_trace(p, "further output %zu: %s %s%s", i + 1, output->device, err < 0 ? "left out: " : "open",
				err < 0 ? snd_strerror(err) : "");
	}
	p->output_count = count;
}

/// Writes `lead` frames of silence to a further output that has not started (ar_output_lead), what
/// it takes of them; 0 or a negative errno.
static int write_lead(struct ar_pcm *p, snd_pcm_t *pcm, snd_pcm_sframes_t first) {
	long lead = ar_output_lead(first >= 0, (long)first, snd_pcm_state(pcm) != SND_PCM_STATE_PREPARED);
	char silence[4096];
	snd_pcm_uframes_t chunk = sizeof(silence) / p->frame_bytes;
	if (lead <= 0 || chunk == 0)
		return 0;
	snd_pcm_format_set_silence(p->io.format, silence, (unsigned int)(chunk * p->io.channels));
	while (lead > 0) {
		snd_pcm_sframes_t n = snd_pcm_writei(pcm, silence, (snd_pcm_uframes_t)lead < chunk ? (snd_pcm_uframes_t)lead : chunk);
		if (n == -EAGAIN)
			return 0;
		if (n < 0)
			return (int)n;
		lead -= n;
	}
	return 0;
}

/// Writes what it takes of `frames` to `output`, non-blocking, after the silence it needs to start
/// in step with the first (`first`: the first's delay, or -1 when it is not running); 0, or a
/// negative errno when it failed.
static int write_output(struct ar_pcm *p, struct ar_output *output, const char *frames, snd_pcm_uframes_t count, snd_pcm_sframes_t first) {
	snd_pcm_uframes_t done = 0;
	int recovered = 0;
	// Dropped with the first (a hold, a stop) and not prepared since: a move's replay comes first.
	if (snd_pcm_state(output->pcm) == SND_PCM_STATE_SETUP) {
		int err = snd_pcm_prepare(output->pcm);
		if (err < 0)
			return err;
	}
	int err = write_lead(p, output->pcm, first);
	if (err < 0)
		return err;
	while (done < count) {
		snd_pcm_sframes_t n = snd_pcm_writei(output->pcm, frames + done * p->frame_bytes, count - done);
		if (n == -EAGAIN)
			return 0;  // full: what it did not take is lost to it, and its delay says it is behind
		if ((n == -EPIPE || n == -ESTRPIPE || n == -EINTR) && !recovered) {
			recovered = 1;
			if ((n = snd_pcm_recover(output->pcm, (int)n, 1)) < 0)
				return (int)n;
			// Run dry: it starts again as far behind as the first.
			if ((n = write_lead(p, output->pcm, first)) < 0)
				return (int)n;
			continue;
		}
		if (n < 0)
			return (int)n;
		done += (snd_pcm_uframes_t)n;
	}
	return 0;
}

/// Writes the `count` frames just forwarded to the first output to every further one, each
/// corrected by its drift from the first: frames dropped where it holds more, its last frame
/// repeated where it holds less. One that fails is closed and left out until the route changes.
void ar_outputs_write(struct ar_pcm *p, const char *frames, snd_pcm_uframes_t count) {
	if (count == 0)
		return;
	snd_pcm_sframes_t first = 0;
	int measured = snd_pcm_state(p->slave) == SND_PCM_STATE_RUNNING && snd_pcm_delay(p->slave, &first) >= 0;
	for (size_t i = 0; i < p->output_count; i++) {
		struct ar_output *output = &p->outputs[i];
		if (output->pcm == NULL)
			continue;
		snd_pcm_sframes_t delay = 0;
		long correction = 0;
		if (measured && snd_pcm_state(output->pcm) == SND_PCM_STATE_RUNNING && snd_pcm_delay(output->pcm, &delay) >= 0)
			correction = ar_drift_step(&output->drift, (long)(delay - first), drift_threshold(p), drift_step(p));
		if (correction >= (long)count)
			correction = (long)count - 1;
		// The first holds these frames already: the further output's lead is what it held before them.
		snd_pcm_sframes_t lead = !measured ? -1 : first > (snd_pcm_sframes_t)count ? first - (snd_pcm_sframes_t)count : 0;
		int err = write_output(p, output, frames + (correction > 0 ? (size_t)correction * p->frame_bytes : 0),
				count - (snd_pcm_uframes_t)(correction > 0 ? correction : 0), lead);
		for (long r = correction; err >= 0 && r < 0; r++)
			err = write_output(p, output, frames + (count - 1) * p->frame_bytes, 1, lead);
		if (correction != 0)
			ar_trace(p, "further output %zu: %s %ld frames (delay %ld, first's %ld)", i + 1,
					correction > 0 ? "dropped" : "repeated", correction > 0 ? correction : -correction, (long)delay, (long)first);
		if (err < 0) {
			ar_trace(p, "further output %zu: %s failed: %s; left out", i + 1, output->device, snd_strerror(err));
			close_output(output);
		}
	}
}

/// Calls `action` (snd_pcm_drop, snd_pcm_prepare) on every open further output.
void ar_outputs_each(struct ar_pcm *p, int (*action)(snd_pcm_t *pcm)) {
	for (size_t i = 0; i < p->output_count; i++)
		if (p->outputs[i].pcm != NULL)
			action(p->outputs[i].pcm);
}

/// Plays out what every further output holds (the first drains after them, in the app's drain).
void ar_outputs_drain(struct ar_pcm *p) {
	for (size_t i = 0; i < p->output_count; i++) {
		struct ar_output *output = &p->outputs[i];
		if (output->pcm == NULL)
			continue;
		snd_pcm_nonblock(output->pcm, 0);
		snd_pcm_drain(output->pcm);
		snd_pcm_nonblock(output->pcm, 1);
	}
}
