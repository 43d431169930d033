// The plugin's mover for a client in the same process that has a session of its own: the Swift
// player (AudioRouteALSA's RouteFollower). One mover for the plugin and the player: the same
// open, move, replay, drain and gone-device rule, here used without a session in the tower,
// since the client applies its own session's decisions (docs/decisions.md, "One mover").
#ifndef AUDIOROUTE_FOLLOWER_H
#define AUDIOROUTE_FOLLOWER_H

#include <stddef.h>

#pragma GCC visibility push(hidden)

/// libasound's PCM (snd_pcm_t), declared here so that this header needs no ALSA headers.
struct _snd_pcm;
/// The mover behind one PCM opened by `ar_follower_open`: valid until that PCM is closed.
struct ar_pcm;

/// Opens a playback PCM that forwards to the route file's `route_pcm` (`audioroute_route` when
/// NULL or empty), read over the system configuration and `config_files` (loaded in order, before
/// the route file: devices a test or a bench defines). Unlike an app's `audioroute` PCM it has no
/// session of its own in the tower, and it moves only when told (`ar_follower_route_changed`): the
/// client's session says when, and whether it pauses first (an unplug). A device gone under a
/// transfer fails it with -ENODEV, where an app's PCM would wait for the route. 0 or -errno, with
/// alsa-lib's message on standard error.
int ar_follower_open(struct _snd_pcm **pcm, struct ar_pcm **follower, const char *route_file, const char *route_pcm,
		const char *const *config_files, size_t config_count);

/// The route changed (the client's session said so): at the next transfer the route file is read
/// again, and the stream moves if it names another device. (A client whose device went away
/// closes the PCM and opens a new one, which reads the route as it is then.)
void ar_follower_route_changed(struct ar_pcm *follower);

/// What the last move did, once: 1 with the device left, the device opened and the frames
/// replayed on it (what a held stream's old device had not played) filled in; 0 when there was
/// no move since the last call.
int ar_follower_take_move(struct ar_pcm *follower, char *from, size_t from_size, char *to, size_t to_size, long *replayed);

/// The route's device the stream forwards to now (a `dmix:…`, `bluealsa:…` or `null` name).
const char *ar_follower_device(const struct ar_pcm *follower);

/// `err`, or -ENODEV when it is -EIO and the PCM's card went away: how the plugin and the player
/// tell an unplug from a failure. dmix and dsnoop wait on a timer of their own whose poll fails
/// with EIO when the card's stream stops; their state becomes DISCONNECTED once the kernel lets
/// the card go, a little later (a USB card removed under dmix on the real-kernel bench). So an EIO
/// waits up to 500 ms for that state.
int ar_pcm_disconnected(struct _snd_pcm *pcm, int err);

#pragma GCC visibility pop

#endif
