// The `audioroute` PCM's state, shared by the files that each hold one concern of it: pcm.c (the
// ioplug's callbacks, the open, the follower's API), route.c (reading the route), device.c (the
// device's life and moves), hold.c (holding) and transfer.c (moving frames). Private to the
// plugin: the functions below are hidden from the shared object's symbols.
#ifndef AUDIOROUTE_PCM_INTERNAL_H
#define AUDIOROUTE_PCM_INTERNAL_H

#include "audioroute_bus.h"
#include "audioroute_contract.h"
#include "audioroute_follower.h"
#include "audioroute_mix.h"
#include "audioroute_plugin.h"

#include <alsa/asoundlib.h>
#include <alsa/pcm_external.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
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

#define AR_HIDDEN __attribute__((visibility("hidden")))

/// A multiRoute route's further output (outputs.c): its own device, written what the first gets.
struct ar_output {
	/// NULL: not open (it failed, and waits for the route file to change).
	snd_pcm_t *pcm;
	snd_config_t *config;
	/// The slave.pcm of its definition in the route file.
	char device[512];
	struct ar_drift drift;
};

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
	/// Held by an interruption, and what the hold keeps (the tested state of audioroute_plugin.h).
	struct ar_hold hold;
	/// Opening at hw_params with a daemon: a busy device is reported by open_route, once.
	int busy_reported_later;
	/// Where a ducked or silenced period is scaled (the app's own buffer is not ours to change).
	char *scratch;
	/// The app's frames taken while the stream is held (`hold.stashed` of them, a buffer's worth at
	/// most): its buffer fills, so it waits in its own poll; they go first on resume.
	char *stash;
	/// The session's preferred rate and this direction's channel count (0: none), read from the
	/// environment at the open (ar_preference), and which of them the open slave's plug was given
	/// (AR_PREFER_RATE, AR_PREFER_CHANNELS).
	unsigned int preferred_rate, preferred_channels;
	int slave_preferred;
	/// Frames forwarded at a time: 10 ms, or the session's I/O buffer duration (ar_io_sizes).
	snd_pcm_uframes_t piece;
	/// Most frames queued in the device ahead of what it plays: ten pieces (100 ms), or the app's buffer if smaller.
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
	/// A multiRoute route's further outputs (playback), from the route file's text last read
	/// (`outputs_text`, NULL: none read yet), opened once the stream's parameters are known.
	struct ar_output outputs[AR_MAX_OUTPUTS - 1];
	size_t output_count;
	char *outputs_text;
	size_t outputs_length;
};

// The stream's clock, trace and bus (pcm.c).
AR_HIDDEN __attribute__((format(printf, 2, 3))) void ar_trace(const struct ar_pcm *p, const char *format, ...);
AR_HIDDEN void ar_read_bus(struct ar_pcm *p);
AR_HIDDEN long long ar_now_ms(void);

/// Whether the app called snd_pcm_abort() (ioplug keeps its `nonblock` argument, 2 for an abort):
/// aplay's handler of SIGINT and SIGTERM does, then waits for its transfer to return. Every wait
/// of a transfer ends then, with -EINTR, as alsa-lib's own waits end in abort mode.
static inline int ar_aborted(const struct ar_pcm *p) { return p->io.nonblock == 2; }
AR_HIDDEN long long ar_now_ns(void);

// Reading the route (route.c).
AR_HIDDEN int ar_read_route_text(struct ar_pcm *p, char **text, size_t *length);
AR_HIDDEN int ar_load_text(snd_config_t *top, const char *text, size_t length);
AR_HIDDEN int ar_load_file(snd_config_t *top, const char *path);
AR_HIDDEN int ar_route_device(struct ar_pcm *p, const char *text, size_t length, char *device, size_t size);
AR_HIDDEN void ar_keep_route_text(struct ar_pcm *p, char *text, size_t length);
AR_HIDDEN void ar_check_route(struct ar_pcm *p);

// The session's preferred rate and channels on the route's plug (device.c).
#define AR_PREFER_RATE 1
#define AR_PREFER_CHANNELS 2
AR_HIDDEN int ar_prefer(struct ar_pcm *p, snd_config_t *config, const char *name);
AR_HIDDEN int ar_setup_preferred(struct ar_pcm *p, snd_pcm_t **pcm, const char *name, snd_config_t *config, int mode, int preferred,
		const char *device);

// The device's life and moves (device.c).
AR_HIDDEN void ar_close_retired(struct ar_pcm *p, int now);
AR_HIDDEN void ar_close_slave(struct ar_pcm *p);
AR_HIDDEN int ar_open_slave(struct ar_pcm *p);
AR_HIDDEN int ar_setup_device(struct ar_pcm *p, snd_pcm_t *pcm);
AR_HIDDEN int ar_setup_slave(struct ar_pcm *p);
AR_HIDDEN snd_pcm_sframes_t ar_write_all(struct ar_pcm *p, const char *frames, snd_pcm_uframes_t count);
AR_HIDDEN int ar_replay(struct ar_pcm *p, snd_pcm_sframes_t frames);
AR_HIDDEN int ar_open_and_setup(struct ar_pcm *p);
AR_HIDDEN int ar_move(struct ar_pcm *p);

// A multiRoute route's further outputs (outputs.c).
AR_HIDDEN void ar_outputs_keep_text(struct ar_pcm *p, const char *text, size_t length);
AR_HIDDEN void ar_outputs_sync(struct ar_pcm *p);
AR_HIDDEN void ar_outputs_close(struct ar_pcm *p);
AR_HIDDEN void ar_outputs_write(struct ar_pcm *p, const char *frames, snd_pcm_uframes_t count);
AR_HIDDEN void ar_outputs_each(struct ar_pcm *p, int (*action)(snd_pcm_t *pcm));
AR_HIDDEN void ar_outputs_drain(struct ar_pcm *p);

// Holding (hold.c).
AR_HIDDEN void ar_update_readiness(struct ar_pcm *p);
AR_HIDDEN int ar_wait_for_route(struct ar_pcm *p);
AR_HIDDEN void ar_begin_hold(struct ar_pcm *p);
AR_HIDDEN int ar_end_hold(struct ar_pcm *p);
AR_HIDDEN snd_pcm_sframes_t ar_stash_frames(struct ar_pcm *p, const char *frames, snd_pcm_uframes_t size);

// Transfers (transfer.c).
AR_HIDDEN snd_pcm_sframes_t ar_pump(struct ar_pcm *p, char *frames, snd_pcm_uframes_t size);

#endif
