// The `audioroute` ALSA plugin's own logic, apart from libasound, so that tests can call it
// without a sound card: the PCM's arguments, where the route file is, and the stream's states
// around a route change. The ioplug itself (pcm.c and pcm_internal.h) is not part of this header.
#ifndef AUDIOROUTE_PLUGIN_H
#define AUDIOROUTE_PLUGIN_H

#include <stddef.h>

// None of this is exported from the plugin: in an arbitrary process, only alsa-lib's two symbols are.
#pragma GCC visibility push(hidden)

/// What the PCM's arguments say the app is: the session it will be in the tower.
struct ar_args {
	char category[32];
	char mode[32];
	/// Apple's raw values (AudioRouteCore.CategoryOptions), or-ed.
	unsigned long options;
	/// Which options were named: bit i for ar_name(AR_OPTIONS, i) (raw values overlap, names do not).
	unsigned long option_names;
	/// Why the arguments were refused (empty when they were accepted).
	char error[160];
};

/// Fills `out` from the PCM definition's `category`, `mode` and `options` fields (NULL or ""
/// when not given), else `env_category` (the process's AUDIOROUTE_CATEGORY, NULL when unset),
/// else `playback` (`record` when `capture`). Options are names separated by `,`, `+`, `|` or
/// spaces. Returns 0, or -EINVAL with `out->error` set for an unknown name.
int ar_args_resolve(struct ar_args *out, const char *category, const char *mode, const char *options,
		const char *env_category, int capture);

enum ar_names { AR_CATEGORIES, AR_MODES, AR_OPTIONS };

/// The `index`th name the plugin accepts of a kind, NULL past the last (the tests compare them
/// with AudioRouteCore's); `value`, when not NULL, gets an option's raw value.
const char *ar_name(enum ar_names kind, int index, unsigned long *value);

/// The route file to read: `configured` when not empty, else
/// `<xdg_runtime_dir>/audioroute/asound.conf` when `xdg_runtime_dir` is set and `user_exists`
/// says that file exists, else the system instance's `/run/audioroute/asound.conf`.
/// Returns 0, or -ENAMETOOLONG.
int ar_route_file_path(char *buffer, size_t size, const char *configured, const char *xdg_runtime_dir,
		int (*user_exists)(const char *path));

/// The I/O buffer a stream forwards in: 10 ms pieces unless AUDIOROUTE_IO_BUFFER_DURATION (set by
/// the client library's setPreferredIOBufferDuration) says otherwise, 1 ms to 100 ms.
#define AR_IO_PIECE_DEFAULT_US 10000
#define AR_IO_PIECE_MIN_US 1000
#define AR_IO_PIECE_MAX_US 100000
/// Pieces queued in the device ahead of what it plays (100 ms by default).
#define AR_IO_PIECES_AHEAD 10

/// The stream's piece (frames forwarded at a time) and its queue ahead of the device (frames),
/// at `rate`, from `duration_us` (the process's AUDIOROUTE_IO_BUFFER_DURATION in microseconds, NULL
/// or "" when unset): a piece of that duration and ten of them ahead, the queue no larger than the
/// app's `buffer_size` and the piece no larger than the queue. Returns 0, or -EINVAL with `error`
/// naming the fault for a value that is not a number of 1000 to 100000 (the defaults are used then).
int ar_io_sizes(unsigned int rate, unsigned long buffer_size, const char *duration_us, unsigned long *piece, unsigned long *ahead,
		char *error, size_t error_size);

/// The session's preferred hardware format (the client library's setPreferredSampleRate and
/// setPreferred{Output,Input}NumberOfChannels): the route's device is run at it, `plug`
/// converting the app's stream to it, where the device takes it.
#define AR_PREFERRED_RATE_VARIABLE "AUDIOROUTE_PREFERRED_SAMPLE_RATE"
#define AR_PREFERRED_OUTPUT_CHANNELS_VARIABLE "AUDIOROUTE_PREFERRED_OUTPUT_CHANNELS"
#define AR_PREFERRED_INPUT_CHANNELS_VARIABLE "AUDIOROUTE_PREFERRED_INPUT_CHANNELS"
#define AR_PREFERRED_RATE_MIN 8000
#define AR_PREFERRED_RATE_MAX 768000
#define AR_PREFERRED_CHANNELS_MAX 64

/// One preference from the environment: `value` (the variable `name`'s, NULL or "" when unset)
/// as a number of `minimum` to `maximum` into `*out`; unset and "0" are 0 (no preference).
/// Returns 0, or -EINVAL with `error` naming the variable and the value (`*out` is 0 then).
int ar_preference(const char *name, const char *value, unsigned long minimum, unsigned long maximum, unsigned int *out,
		char *error, size_t error_size);

/// The stream's states around the device it forwards to.
enum ar_state {
	/// No device open (before hw_params, after close).
	AR_IDLE,
	/// Forwarding to the route's device.
	AR_FORWARDING,
	/// The route changed: the stream moves at the next period boundary.
	AR_MOVE_PENDING,
	/// The device went away (ENODEV, EBADFD, ESHUTDOWN): the writer is held until the route changes.
	AR_HELD,
};

enum ar_event {
	AR_EVENT_OPENED,
	/// The route file names another device than the one open.
	AR_EVENT_ROUTE_CHANGED,
	/// A transfer begins: the app hands over a period (or what it has).
	AR_EVENT_BOUNDARY,
	AR_EVENT_DEVICE_GONE,
	AR_EVENT_CLOSED,
};

enum ar_action {
	AR_ACTION_NONE,
	/// Close the device and open the route's, replaying what the old one had not played.
	AR_ACTION_MOVE,
	/// Hold the transfer until the route changes.
	AR_ACTION_WAIT_FOR_ROUTE,
};

/// One step of the stream's state machine: the new state in `*state`, what to do returned.
enum ar_action ar_step(enum ar_state *state, enum ar_event event);

/// The last frames a playback stream forwarded, a device buffer's worth: on a move, what the old
/// device still held (its delay) is written again to the new one, so no frame is lost.
struct ar_history {
	char *bytes;
	size_t allocated;
	size_t frame_bytes;
	/// In frames: the ring's size, how much of it holds frames, where the next frame goes.
	size_t capacity, filled, end;
};

/// Makes room for `frames` frames of `frame_bytes` bytes, and empties it. 0 or -ENOMEM.
int ar_history_reserve(struct ar_history *h, size_t frames, size_t frame_bytes);
void ar_history_clear(struct ar_history *h);
/// Keeps `count` frames (only the last `capacity` of them when more).
void ar_history_remember(struct ar_history *h, const void *frames, size_t count);
/// The last `count` frames kept (fewer when fewer are), in order, as two pieces (the ring may
/// wrap); returns how many.
size_t ar_history_last(const struct ar_history *h, size_t count, const void **first, size_t *first_count,
		const void **second, size_t *second_count);
void ar_history_free(struct ar_history *h);

/// What the tower has told the PCM's session (the daemon's org.audioroute.Session1 signals).
struct ar_tower {
	/// Active in the tower: asked for when data first flows (or at hw_params, when the route's
	/// device is busy: ar_busy_step), given up when interrupted or closed.
	int active;
	/// Interrupted: the writer is held until an interruption ends with shouldResume, the app
	/// restarts its stream, or (`disconnected`) the device it was held from is the route's again.
	int interrupted;
	/// The interruption is `routeDisconnected`: the route's device went away under the stream.
	int disconnected;
	int ducked;
	/// Silent mode, for ambient and soloAmbient sessions: the stream runs, its samples are zero.
	int silenced;
	/// A RouteChanged arrived: the route file is to be read again.
	int route_changed;
};

enum ar_tower_action {
	AR_TOWER_NONE,
	/// An interruption began: hold the writer.
	AR_TOWER_HOLD,
	/// An interruption ended with shouldResume: activate again and let the writer go on.
	AR_TOWER_RESUME,
};

/// Applies one of the daemon's signals, by member name (`Interruption`, `Ducked`, `Unducked`,
/// `Silenced`, `Unsilenced`, `RouteChanged`; others are ignored). For `Interruption`, `kind` is
/// "began" or "ended", `reason` the interruption's (`default`, `routeDisconnected`, "" at its
/// end) and `should_resume` its flag.
enum ar_tower_action ar_tower_signal(struct ar_tower *tower, const char *member, const char *kind, const char *reason,
		int should_resume);

/// The app restarted its stream while the tower held it (snd_pcm_drop, then snd_pcm_prepare: how
/// a plain app pauses and plays, and what mpv does on a device that cannot pause): the hold is
/// lifted, and the stream asks the tower to activate it again before its first frames, as an
/// iOS app's play activates its session. 1 if it was held, 0 if there was nothing to lift.
int ar_tower_restart(struct ar_tower *tower);

/// The route names the device a `routeDisconnected` interruption held the stream from (the
/// headphones plugged back): the hold is lifted as for a restart. 1 if it was so held, else 0.
int ar_tower_device_back(struct ar_tower *tower);

/// What opening the route's device at hw_params does after an attempt that returned `err`. An
/// exclusive device another stream holds is busy (BlueALSA's PCMs, a `hw:` card): the session is
/// then activated at once, as an app activates before it starts its engine, so that the tower can
/// interrupt that stream or move the route; the plugin itself decides nothing.
enum ar_busy_action {
	/// Opened, or failed for good: `err` is the result, as without a daemon.
	AR_BUSY_DONE,
	/// Busy, with a session that is neither active nor interrupted: activate it, then try again.
	AR_BUSY_ACTIVATE,
	/// Still busy after this open activated the session: read the bus, then try again on the
	/// route as it now stands.
	AR_BUSY_RETRY,
	/// Still busy when the time is up, another failure, the daemon gone or the session taken back
	/// by the tower: deactivate it (with notifyOthers, if still active), then fail with `err`.
	AR_BUSY_GIVE_UP,
};

/// One step of that open: `connected` says there is a session in a daemon, `activated` that this
/// open activated it (a refused activation is a failure at once, not a step), `expired` that its
/// time for trying again is up.
enum ar_busy_action ar_busy_step(int err, int connected, const struct ar_tower *tower, int activated, int expired);

/// What holding a stream keeps, apart from the frames themselves: set by the tower's
/// interruption, lifted by its end, the app's restart or the device's return (ar_tower_*), and
/// acted on by the PCM (hold.c: the device dropped, the frames replayed, the app's stashed).
struct ar_hold {
	/// Held: the device was dropped, and `replay` frames of the history (what it had not played)
	/// go out again when the stream resumes.
	int holding;
	long replay;
	/// The daemon refused to activate the session: not asked again at every period.
	int activation_failed;
	/// The hold was lifted by the app's restart or the device's return, not by the tower: if the
	/// tower refuses the activation that follows, the stream is held again.
	int resuming_by_itself;
	/// The app's frames taken while held and not forwarded yet, at most `capacity` (a buffer's
	/// worth; 0: no stash): its buffer fills, so it waits in its own poll; they go first on resume.
	unsigned long stashed, capacity;
};

/// An interruption began, the device not having played `delay` frames (negative: unknown, as 0).
/// 1 if the hold begins now (the device is to be dropped), 0 if the stream was held already.
int ar_hold_begin(struct ar_hold *hold, long delay);
/// The hold ends (resumed on the device it was held from, or moved): the frames to replay.
long ar_hold_end(struct ar_hold *hold);
/// The app restarted its stream while held (a drop, then a prepare): what the device had not
/// played was the app's to discard; it asks the tower to activate it again.
void ar_hold_restarted(struct ar_hold *hold);
/// The device an unplug held the stream from is back: it asks the tower to activate it again.
void ar_hold_device_back(struct ar_hold *hold);
/// The tower's answer to the activation asked before the first frames (`ok`): 1 if the stream is
/// to be held again (it resumed by itself, and the tower keeps it held, as during a call), else 0
/// (refused otherwise: not asked again).
int ar_hold_activation(struct ar_hold *hold, int ok);
/// How many of `size` frames the stash takes now (0 when full or absent); they are counted.
unsigned long ar_hold_stash(struct ar_hold *hold, unsigned long size);
/// `count` stashed frames went to the device.
void ar_hold_unstash(struct ar_hold *hold, unsigned long count);

/// A multiRoute route's further output against the first (docs/decisions.md, "multiRoute"): the
/// difference of their delays, smoothed, and whether it is being corrected.
struct ar_drift {
	/// 16 times the smoothed difference, in frames (an average over about 16 measurements).
	long long sum16;
	int measured;
	int correcting;
};

/// Feeds one measured `difference` (the further device's delay minus the first's, in frames) and
/// returns what to do to the further device's next piece: drop that many frames (> 0: it holds
/// more than the first) or repeat its last frame that many times (< 0: it holds less). 0 while the
/// smoothed difference stays within `threshold`; past it, corrections of at most `max_step` until
/// the smoothed difference is within a quarter of `threshold` again.
long ar_drift_step(struct ar_drift *drift, long difference, long threshold, long max_step);

/// Frames of silence to write ahead of a further output's frames: when it has not started (just
/// opened, prepared again, or recovered from an underrun) while the first runs holding
/// `first_delay` frames, that many, so that it starts as far behind as the first and plays each
/// frame when the first does. Started with the frames alone, it would play them the first's delay
/// early (100 ms on the real-kernel bench), more than the drift's steps make up before it runs dry.
/// 0 otherwise.
long ar_output_lead(int first_running, long first_delay, int output_started);

/// The daemon went away (its bus name lost its owner, or the bus closed): everything derived from
/// it is dropped, as BlueALSA drops BlueZ's state, the interruption too. A stream the tower held
/// plays on outside it (docs/alsa.md, "When the tower goes away"); nothing else would ever
/// release it: a restarted daemon knows nothing of the old one's interruption.
void ar_tower_lost(struct ar_tower *tower);

#pragma GCC visibility pop

#endif
