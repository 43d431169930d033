// Holding a stream: the tower's interruption drops the device and keeps what it had not played;
// a held app waits in its own poll, its frames in the stash.
#include "pcm_internal.h"

/// Puts the always-ready descriptor in the app's poll set, or takes it out while the stream is held.
void ar_update_readiness(struct ar_pcm *p) {
	int ready = !p->tower.interrupted && p->state != AR_HELD;
	if (ready == p->ready_registered || p->io.poll_fd < 0)
		return;
	struct epoll_event event = { .events = EPOLLIN };
	if (epoll_ctl(p->io.poll_fd, ready ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, p->ready_fd, &event) == 0)
		p->ready_registered = ready;
}

/// Holds the caller until the route changes (a blocking writer held still is how a plain app
/// pauses); -EAGAIN at once in non-blocking mode.
int ar_wait_for_route(struct ar_pcm *p) {
	ar_update_readiness(p);
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
void ar_begin_hold(struct ar_pcm *p) {
	if (p->hold.holding)
		return;
	ar_trace(p, "held (interrupted)");
	snd_pcm_sframes_t delay = 0;
	if (p->slave != NULL && p->stream == SND_PCM_STREAM_PLAYBACK && snd_pcm_delay(p->slave, &delay) < 0)
		delay = 0;
	ar_hold_begin(&p->hold, (long)delay);
	if (p->slave != NULL)
		snd_pcm_drop(p->slave);
	ar_outputs_each(p, snd_pcm_drop);  // a multiRoute route's further outputs are silent too
}

/// The interruption ended with shouldResume (and the session is active again): the stream goes
/// on where it stopped, on the device the route names now.
int ar_end_hold(struct ar_pcm *p) {
	if (p->state == AR_MOVE_PENDING || p->slave == NULL)
		return 0;  // the move replays what was held
	long replay = ar_hold_end(&p->hold);
	ar_trace(p, "resumed, %ld frames to replay", replay);
	int err = snd_pcm_prepare(p->slave);
	if (err < 0)
		return err;
	ar_outputs_each(p, snd_pcm_prepare);
	if (p->stream == SND_PCM_STREAM_CAPTURE)
		return snd_pcm_start(p->slave);
	return ar_replay(p, replay);
}

/// Held, for a non-blocking app: takes what fits of its frames into the stash, -EAGAIN when full.
snd_pcm_sframes_t ar_stash_frames(struct ar_pcm *p, const char *frames, snd_pcm_uframes_t size) {
	if (size == 0)
		return 0;
	snd_pcm_uframes_t at = p->hold.stashed, n = ar_hold_stash(&p->hold, size);
	if (n == 0)
		return -EAGAIN;
	memcpy(p->stash + at * p->frame_bytes, frames, n * p->frame_bytes);
	return (snd_pcm_sframes_t)n;
}
