#ifndef AUDIOROUTE_PULSE_H
#define AUDIOROUTE_PULSE_H
/* libpulse for audioroute-pulse (docs/daemon.md, "The PulseAudio helper"). libpulse's callbacks
 * take structs and its introspection comes in list callbacks with an end marker; these few
 * plain functions, all prefixed arpa_, turn them into one set of callbacks for Swift. A client
 * is one pa_mainloop whose poll is ours: arpa_client_iterate polls its descriptors together with
 * one of the caller's (stdin), on the caller's thread, and waits for nothing else (no timer: an
 * idle helper does not wake). Functions that fail return -errno. */
/* The types are opaque here: libpulse's headers are included by pulse.c alone. */
#include <stdint.h>

struct arpa_client;
/* A server object's property list (pa_proplist), valid during the callback that gives it. */
struct arpa_proplist;

/* The server's four kinds of audio object, and its cards; each has indices of its own. */
enum arpa_facility {
	ARPA_SINK = 0,
	ARPA_SOURCE = 1,
	ARPA_SINK_INPUT = 2,
	ARPA_SOURCE_OUTPUT = 3,
	/* Only in `removed`: a card comes through `card`. */
	ARPA_CARD = 4,
};

/* The most profiles given for one card (the protocol's PipeWireDevice.maximumProfiles); the
 * rest are counted, not given. */
#define ARPA_PROFILES_MAX 96

/* One profile of a card (pa_card_profile_info2), valid during the `card` callback. */
struct arpa_profile {
	const char *name;
	/* "" when the server gives none. */
	const char *description;
	uint32_t sinks, sources, priority;
	/* 0 when the server knows it useless now, 1 otherwise (libpulse's word: not a promise). */
	int available;
};

/* The most channels a volume has (libpulse's PA_CHANNELS_MAX). */
#define ARPA_CHANNELS_MAX 32

/* A stream's volume and mute as the server has them (a sink input's or a source output's).
 * Volumes are libpulse's pa_volume_t: 0 silent, 0x10000 (PA_VOLUME_NORM) the stream as played,
 * on libpulse's cubic scale. */
struct arpa_stream_state {
	int muted;
	/* 0 when the volume cannot be set (a passthrough stream, or one without a volume). */
	int volume_writable;
	unsigned channels;
	uint32_t volume[ARPA_CHANNELS_MAX];
};

/* What the client tells its caller, on the caller's thread, from arpa_client_iterate. */
struct arpa_callbacks {
	/* Connected, subscribed, and every object listed once (they came through `object` before):
	 * the server's name and version. */
	void (*ready)(void *data, const char *name, const char *version);
	/* An object as the server has it now (listed, added or changed). `name` is a sink's or a
	 * source's name, NULL for a stream; `monitor` is 1 for a sink's monitor source; `stream` is
	 * a stream's volume and mute, NULL for a sink or a source. */
	void (*object)(void *data, int facility, uint32_t index, const char *name, int monitor, const struct arpa_proplist *props,
	               const struct arpa_stream_state *stream);
	void (*removed)(void *data, int facility, uint32_t index);
	/* A card as the server has it now (listed, added or changed): its name, proplist, its first
	 * `count` profiles in the server's order (at most ARPA_PROFILES_MAX of `total`), and the
	 * active one's position among them (-1: none, or past the first ARPA_PROFILES_MAX). */
	void (*card)(void *data, uint32_t index, const char *name, const struct arpa_proplist *props, const struct arpa_profile *profiles,
	             unsigned count, unsigned total, int active);
	/* The server's answer to request `tag` (arpa_client_set_defaults, arpa_client_set_stream,
	 * arpa_client_set_card_profile): 0, or -errno. */
	void (*done)(void *data, uint32_t tag, int result);
	/* The connection failed or ended: -errno and libpulse's words. The caller stops. */
	void (*failed)(void *data, int result, const char *message);
};

/* Starts connecting to the user's PulseAudio (PULSE_SERVER, else pulse/native in
 * XDG_RUNTIME_DIR; never autospawned). NULL with *error set (-errno) when it cannot start. */
struct arpa_client *arpa_client_new(const struct arpa_callbacks *callbacks, void *data, const char *client_name, int *error);
/* Waits up to timeout_ms (-1: for ever) for the server or `fd` (-1: none), dispatches what the
 * server sent (the callbacks run in here), and sets *fd_ready when `fd` can be read. 0 or -errno. */
int arpa_client_iterate(struct arpa_client *c, int fd, int timeout_ms, int *fd_ready);
/* Sets the default sink and/or source by name (NULL: left as it is); `done` follows with `tag`
 * once the server answered both. 0 or -errno. */
int arpa_client_set_defaults(struct arpa_client *c, const char *sink, const char *source, uint32_t tag);
/* Sets a sink input's or a source output's mute (`mute` 0 or 1; -1: left as it is) and volume
 * (`channels` values of `volume`; 0 channels: left as it is); `done` follows with `tag` once the
 * server answered both. 0 or -errno (-EINVAL for a facility that is not a stream's, or a volume
 * the server would not take). */
int arpa_client_set_stream(struct arpa_client *c, int facility, uint32_t index, int mute, const uint32_t *volume, unsigned channels, uint32_t tag);
/* Sets card `card`'s active profile by name; `done` follows with `tag` once the server answered
 * (-ENOENT: no such card or profile). 0 or -errno. */
int arpa_client_set_card_profile(struct arpa_client *c, uint32_t card, const char *profile, uint32_t tag);
/* pa_sw_volume_from_linear: the pa_volume_t of an amplitude factor (0 to 1). */
uint32_t arpa_volume_from_linear(double factor);
/* Disconnects and frees everything. */
void arpa_client_free(struct arpa_client *c);
/* A property's value as text, or NULL when it is not there (or not text). */
const char *arpa_proplist_gets(const struct arpa_proplist *props, const char *key);
/* The version of libpulse this process runs with. */
const char *arpa_library_version(void);

#endif
