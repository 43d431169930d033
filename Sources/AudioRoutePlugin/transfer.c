// Frames through the tower's decisions to the device: the gain, the pace, the pieces, and a
// capture's silence while the route has no input.
#include "pcm_internal.h"

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
/// -EINTR when the app aborted meanwhile: a device that stops taking frames while it runs
/// (BlueALSA's, its IO thread paused) holds its delay, and this wait would otherwise outlive the
/// app's SIGTERM (seen on the real Bluetooth bench).
static int throttle(struct ar_pcm *p, int read_news) {
	snd_pcm_sframes_t delay;
	while (snd_pcm_state(p->slave) == SND_PCM_STATE_RUNNING && snd_pcm_delay(p->slave, &delay) >= 0 &&
			delay > (snd_pcm_sframes_t)p->ahead) {
		long long wait_ns = (long long)(delay - (snd_pcm_sframes_t)p->ahead) * 1000000000LL / p->io.rate;
		struct timespec pause = { .tv_nsec = wait_ns < 10000000LL ? (long)wait_ns : 10000000L };
		nanosleep(&pause, NULL);
		if (ar_aborted(p))
			return -EINTR;
		if (!read_news)
			continue;
		ar_read_bus(p);
		ar_check_route(p);
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
		int due = throttle(p, may_stop);
		if (due < 0)
			return done > 0 ? (snd_pcm_sframes_t)done : due;
		if (due && may_stop)
			break;
		snd_pcm_uframes_t piece = count - done < p->piece ? count - done : p->piece;
		const char *at = frames + done * p->frame_bytes;
		const char *sent = at_tower_gain(p, at, piece);
		snd_pcm_sframes_t n = ar_write_all(p, sent, piece);
		if (n < 0)
			return done > 0 ? (snd_pcm_sframes_t)done : n;
		ar_outputs_write(p, sent, (snd_pcm_uframes_t)n);  // a multiRoute route's further outputs
		ar_history_remember(&p->history, at, (size_t)n);
		ar_close_retired(p, 0);
		p->transferred = (p->transferred + (snd_pcm_uframes_t)n) % p->boundary;
		done += (snd_pcm_uframes_t)n;
		if (may_stop && done < count) {
			ar_read_bus(p);
			ar_check_route(p);
			if (p->state == AR_MOVE_PENDING || p->tower.interrupted)
				break;
		}
	}
	return (snd_pcm_sframes_t)done;
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
		p->silence_since = ar_now_ns();
		p->silence_frames = 0;
	}
	for (;;) {
		long long due = p->silence_since + (long long)((p->silence_frames + size) * 1000000000ULL / p->io.rate);
		long long wait = due - ar_now_ns();
		if (wait <= 0)
			break;
		struct timespec pause = { .tv_nsec = wait < 10000000LL ? (long)wait : 10000000L };
		nanosleep(&pause, NULL);
		if (ar_aborted(p))
			return -EINTR;
		ar_read_bus(p);
		ar_check_route(p);
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
snd_pcm_sframes_t ar_pump(struct ar_pcm *p, char *frames, snd_pcm_uframes_t size) {
	snd_pcm_ioplug_t *io = &p->io;
	for (;;) {
		if (ar_aborted(p))
			return -EINTR;  // a wait below (held, no route) ended on the app's signal
		ar_read_bus(p);
		ar_check_route(p);
		if (p->tower.interrupted) {
			// A writer held still is how a plain app pauses (docs/alsa.md). Its frames go into
			// the stash, the pointer standing, blocking or not: the app then waits in its own
			// poll (snd_pcm_wait), with its own locks released, so that its pause (a drop, then
			// a prepare: mpv's) gets through. Only a blocking writer whose stash is full waits
			// in the transfer.
			ar_begin_hold(p);
			ar_update_readiness(p);
			snd_pcm_sframes_t stashed = ar_stash_frames(p, frames, size);
			if (io->nonblock || stashed != -EAGAIN)
				return stashed;
			int err = ar_bus_wait(p->bus, -1, -1);
			if (err < 0)
				return err;
			continue;
		}
		if (p->hold.holding && ar_end_hold(p) < 0)
			ar_step(&p->state, AR_EVENT_DEVICE_GONE);
		ar_update_readiness(p);
		// Active while data flows: asked for before the first frames, so that a non-mixable
		// stream has interrupted the others before it is heard.
		if (ar_bus_connected(p->bus) && !p->tower.active && !p->hold.activation_failed) {
			// Refused after the stream resumed by itself: the tower still holds it (a call goes
			// on), so it is held again, as an iOS app's play fails while a call has the session.
			if (ar_hold_activation(&p->hold, ar_bus_set_active(p->bus, 1, 0) >= 0))
				p->tower.interrupted = 1;
			ar_trace(p, "session %s", p->tower.interrupted ? "not activated: held again" : p->hold.activation_failed ? "not activated" : "activated");
			continue;  // what the activation caused (ducked, silenced) applies to these frames
		}
		switch (ar_step(&p->state, AR_EVENT_BOUNDARY)) {
		case AR_ACTION_MOVE:
			if (ar_move(p) < 0)
				ar_step(&p->state, AR_EVENT_DEVICE_GONE);
			continue;
		case AR_ACTION_WAIT_FOR_ROUTE: {
			if (p->follower)
				return -ENODEV;  // the client's session says what follows (pause, or a new route)
			int err = ar_wait_for_route(p);
			if (err == -EAGAIN)
				return ar_stash_frames(p, frames, size);
			if (err < 0)
				return err;
			continue;
		}
		case AR_ACTION_NONE:
			break;
		}
		// What was stashed while held goes first.
		char *out = p->hold.stashed > 0 ? p->stash : frames;
		snd_pcm_uframes_t count = p->hold.stashed > 0 ? p->hold.stashed : size;
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
			ar_trace(p, "%s is gone: %s", p->device, snd_strerror((int)n));
			ar_step(&p->state, AR_EVENT_DEVICE_GONE);
			continue;
		}
		if (n < 0 || out != p->stash)
			return n;
		// The stash, or what of it the device took before it failed: the rest stays first in line.
		ar_hold_unstash(&p->hold, (unsigned long)n);
		memmove(p->stash, p->stash + (size_t)n * p->frame_bytes, p->hold.stashed * p->frame_bytes);
	}
}
