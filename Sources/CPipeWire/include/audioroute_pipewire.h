#ifndef AUDIOROUTE_PIPEWIRE_H
#define AUDIOROUTE_PIPEWIRE_H
/* libpipewire for audioroute-pipewire (docs/daemon.md, "The PipeWire helper"). Its loops,
 * proxies and listeners are macros and inline functions over structs of callbacks, which Swift
 * cannot call; these few plain functions, all prefixed arpw_, do it instead. A client is one
 * pw_loop the caller polls (its descriptor), a core, the registry, the `default` metadata and
 * the audio nodes and ALSA devices it binds. Functions that fail return -errno. */
/* The types are opaque here: libpipewire's headers are included by pipewire.c alone, so that
 * none of their compiler flags (pkg-config's -D_REENTRANT, which SwiftPM refuses) reaches Swift. */
#include <stdint.h>

struct spa_dict;
struct arpw_client;
struct arpw_node;
struct arpw_device;

/* One of a device's profiles (EnumProfile) or its active one (Profile), as the callback gets it;
 * the strings are valid during the callback only. sinks and sources: the Audio/Sink and
 * Audio/Source nodes the profile makes (its `classes`); available: 0 unknown, 1 no, 2 yes. */
struct arpw_profile {
	int32_t index;
	int32_t priority;
	uint32_t available;
	uint32_t sinks;
	uint32_t sources;
	const char *name;
	const char *description;
};

/* What the client tells its caller, on the caller's thread, from arpw_client_iterate. */
struct arpw_callbacks {
	/* A global appeared: its id, interface type and the properties the registry shows. */
	void (*global)(void *data, uint32_t id, const char *type, const struct spa_dict *props);
	void (*global_remove)(void *data, uint32_t id);
	/* The server's answer to arpw_client_sync's `seq`. */
	void (*done)(void *data, int seq);
	/* The core's error: res is -errno; id PW_ID_CORE with -EPIPE is the server gone. */
	void (*error)(void *data, uint32_t id, int seq, int res, const char *message);
	/* The server's version, from the core's info. */
	void (*server)(void *data, const char *version);
	/* A bound node's properties (first info, and every change of them). */
	void (*node_props)(void *data, uint32_t id, const struct spa_dict *props);
	/* A bound node's state changed: 1 when it is running now, 0 otherwise. */
	void (*node_running)(void *data, uint32_t id, int running);
	/* A bound device's properties (first info, and every change of them). */
	void (*device_props)(void *data, uint32_t id, const struct spa_dict *props);
	/* A bound device's params changed: the caller enumerates its profiles (arpw_device_enum_profiles). */
	void (*device_params)(void *data, uint32_t id);
	/* One profile of the request `seq` (arpw_device_enum_profiles): active 0 for EnumProfile's, 1 for the Profile param. */
	void (*device_profile)(void *data, uint32_t id, int seq, int active, const struct arpw_profile *profile);
};

/* Connects to the user's PipeWire (PIPEWIRE_REMOTE, else pipewire-0 in XDG_RUNTIME_DIR) and
 * listens to its registry. NULL with *error set (-errno) when it cannot. */
struct arpw_client *arpw_client_new(const struct arpw_callbacks *callbacks, void *data, int *error);
/* The descriptor to poll for reading: when it is ready, arpw_client_iterate. */
int arpw_client_fd(struct arpw_client *c);
/* Dispatches what is ready without waiting: the callbacks run in here. */
int arpw_client_iterate(struct arpw_client *c);
/* Asks the server for a `done` once it has handled everything sent before; the sequence number. */
int arpw_client_sync(struct arpw_client *c);
/* Binds the metadata global `id` (the one named "default") for writing. */
int arpw_client_bind_metadata(struct arpw_client *c, uint32_t id);
/* Forgets the bound metadata (its global went away). */
void arpw_client_unbind_metadata(struct arpw_client *c);
uint32_t arpw_client_metadata_id(struct arpw_client *c);
/* Sets (value non-NULL) or removes (NULL) `key` on subject 0 of the bound metadata. */
int arpw_client_set_metadata(struct arpw_client *c, const char *key, const char *type, const char *value);
/* Binds node `id` for its properties (node_props follows). NULL with *error set. */
struct arpw_node *arpw_node_bind(struct arpw_client *c, uint32_t id, int *error);
void arpw_node_free(struct arpw_node *n);
/* Sends the node its Pause command: a client's stream stops where it is (its state stays
 * running); arpw_node_start resumes it. 0 or -errno. */
int arpw_node_pause(struct arpw_node *n);
int arpw_node_start(struct arpw_node *n);
/* Sets the node's Props volume, the scalar the server multiplies with the node's
 * channelVolumes (which it leaves alone). 0 or -errno. */
int arpw_node_set_volume(struct arpw_node *n, float volume);
/* Binds device `id` for its properties and profiles (device_props and device_params follow).
 * NULL with *error set. */
struct arpw_device *arpw_device_bind(struct arpw_client *c, uint32_t id, int *error);
void arpw_device_free(struct arpw_device *d);
/* The device's proxy id: what the core's error names when the server refuses a request on it. */
uint32_t arpw_device_proxy_id(struct arpw_device *d);
/* Asks for the device's EnumProfile and Profile params, answered through device_profile with the
 * sequence numbers set in *enum_seq and *active_seq (libpipewire numbers the requests itself); an
 * arpw_client_sync after it is done once all are in. 0 or -errno. */
int arpw_device_enum_profiles(struct arpw_device *d, int *enum_seq, int *active_seq);
/* Sets the device's Profile param to the profile of `index`, saved as a user's choice (as pactl
 * set-card-profile and wpctl set-profile do). 0 or -errno. */
int arpw_device_set_profile(struct arpw_device *d, int32_t index);
/* Disconnects and frees everything the client made (nodes and devices first: arpw_node_free, arpw_device_free). */
void arpw_client_free(struct arpw_client *c);
/* A dictionary's entries, for Swift (spa_dict's items are an inline array of structs). */
uint32_t arpw_dict_count(const struct spa_dict *dict);
const char *arpw_dict_key(const struct spa_dict *dict, uint32_t index);
const char *arpw_dict_value(const struct spa_dict *dict, uint32_t index);
const char *arpw_dict_lookup(const struct spa_dict *dict, const char *key);
/* The version of libpipewire this process runs with. */
const char *arpw_library_version(void);

#endif
