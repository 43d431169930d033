/* libpipewire for audioroute-pipewire: what include/audioroute_pipewire.h declares. */
#include "audioroute_pipewire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <pipewire/pipewire.h>
#include <pipewire/extensions/metadata.h>
#include <spa/utils/string.h>
#include <spa/node/command.h>
#include <spa/param/props.h>
#include <spa/param/profile.h>
#include <spa/pod/iter.h>
#include <spa/pod/parser.h>
#include <spa/pod/builder.h>


struct arpw_client {
	struct pw_loop *loop;
	struct pw_context *context;
	struct pw_core *core;
	struct pw_registry *registry;
	struct pw_metadata *metadata;
	uint32_t metadata_id;
	struct spa_hook core_listener, registry_listener, metadata_listener;
	struct arpw_callbacks callbacks;
	void *data;
	int entered;
};

/* A node bound for its full properties (the registry shows only a few). */
struct arpw_node {
	struct arpw_client *client;
	struct pw_node *proxy;
	struct spa_hook listener;
	uint32_t id;
};

/* A device bound for its properties and profiles. */
struct arpw_device {
	struct arpw_client *client;
	struct pw_device *proxy;
	struct spa_hook listener;
	uint32_t id;
};

static void arpw_core_info(void *data, const struct pw_core_info *info)
{
	struct arpw_client *c = data;
	if (c->callbacks.server && info && info->version)
		c->callbacks.server(c->data, info->version);
}

static void arpw_core_done(void *data, uint32_t id, int seq)
{
	struct arpw_client *c = data;
	if (id == PW_ID_CORE && c->callbacks.done)
		c->callbacks.done(c->data, seq);
}

static void arpw_core_error(void *data, uint32_t id, int seq, int res, const char *message)
{
	struct arpw_client *c = data;
	if (c->callbacks.error)
		c->callbacks.error(c->data, id, seq, res, message ? message : "");
}

static const struct pw_core_events arpw_core_events = {
	PW_VERSION_CORE_EVENTS, .info = arpw_core_info, .done = arpw_core_done, .error = arpw_core_error,
};

static void arpw_registry_global(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version, const struct spa_dict *props)
{
	struct arpw_client *c = data;
	(void)permissions; (void)version;
	if (c->callbacks.global)
		c->callbacks.global(c->data, id, type ? type : "", props);
}

static void arpw_registry_global_remove(void *data, uint32_t id)
{
	struct arpw_client *c = data;
	if (c->callbacks.global_remove)
		c->callbacks.global_remove(c->data, id);
}

static const struct pw_registry_events arpw_registry_events = {
	PW_VERSION_REGISTRY_EVENTS, .global = arpw_registry_global, .global_remove = arpw_registry_global_remove,
};

/* Connects to the user's PipeWire (PIPEWIRE_REMOTE, else pipewire-0 in XDG_RUNTIME_DIR) and
 * listens to its registry. NULL with *error set (-errno) when it cannot. */
struct arpw_client *arpw_client_new(const struct arpw_callbacks *callbacks, void *data, int *error)
{
	pw_init(NULL, NULL);
	struct arpw_client *c = calloc(1, sizeof(*c));
	if (c == NULL) { *error = -ENOMEM; return NULL; }
	c->callbacks = *callbacks;
	c->data = data;
	c->metadata_id = SPA_ID_INVALID;
	c->loop = pw_loop_new(NULL);
	if (c->loop == NULL) { *error = -errno; free(c); return NULL; }
	c->context = pw_context_new(c->loop, NULL, 0);
	if (c->context == NULL) { *error = -errno; pw_loop_destroy(c->loop); free(c); return NULL; }
	pw_loop_enter(c->loop);
	c->entered = 1;
	c->core = pw_context_connect(c->context, NULL, 0);
	if (c->core == NULL) {
		*error = errno ? -errno : -ECONNREFUSED;
		pw_loop_leave(c->loop);
		pw_context_destroy(c->context);
		pw_loop_destroy(c->loop);
		free(c);
		return NULL;
	}
	pw_core_add_listener(c->core, &c->core_listener, &arpw_core_events, c);
	c->registry = pw_core_get_registry(c->core, PW_VERSION_REGISTRY, 0);
	pw_registry_add_listener(c->registry, &c->registry_listener, &arpw_registry_events, c);
	return c;
}

/* The descriptor to poll for reading: when it is ready, arpw_client_iterate. */
int arpw_client_fd(struct arpw_client *c) { return pw_loop_get_fd(c->loop); }

/* Dispatches what is ready without waiting: the callbacks run in here. */
int arpw_client_iterate(struct arpw_client *c) { return pw_loop_iterate(c->loop, 0); }

/* Asks the server for a `done` once it has handled everything sent before; the sequence number. */
int arpw_client_sync(struct arpw_client *c) { return pw_core_sync(c->core, PW_ID_CORE, 0); }

static const struct pw_metadata_events arpw_metadata_events = {PW_VERSION_METADATA_EVENTS};

/* Binds the metadata global `id` (the one named "default") for writing. */
int arpw_client_bind_metadata(struct arpw_client *c, uint32_t id)
{
	if (c->metadata != NULL) return -EALREADY;
	c->metadata = pw_registry_bind(c->registry, id, PW_TYPE_INTERFACE_Metadata, PW_VERSION_METADATA, 0);
	if (c->metadata == NULL) return errno ? -errno : -ENOMEM;
	c->metadata_id = id;
	pw_metadata_add_listener(c->metadata, &c->metadata_listener, &arpw_metadata_events, c);
	return 0;
}

/* Forgets the bound metadata (its global went away). */
void arpw_client_unbind_metadata(struct arpw_client *c)
{
	if (c->metadata == NULL) return;
	spa_hook_remove(&c->metadata_listener);
	pw_proxy_destroy((struct pw_proxy *)c->metadata);
	c->metadata = NULL;
	c->metadata_id = SPA_ID_INVALID;
}

uint32_t arpw_client_metadata_id(struct arpw_client *c) { return c->metadata_id; }

/* Sets (value non-NULL) or removes (NULL) `key` on subject 0 of the bound metadata. */
int arpw_client_set_metadata(struct arpw_client *c, const char *key, const char *type, const char *value)
{
	if (c->metadata == NULL) return -ENOENT;
	return pw_metadata_set_property(c->metadata, PW_ID_CORE, key, value ? type : NULL, value);
}

static void arpw_node_info(void *data, const struct pw_node_info *info)
{
	struct arpw_node *n = data;
	if (info && info->props && (info->change_mask & PW_NODE_CHANGE_MASK_PROPS) && n->client->callbacks.node_props)
		n->client->callbacks.node_props(n->client->data, n->id, info->props);
	if (info && (info->change_mask & PW_NODE_CHANGE_MASK_STATE) && n->client->callbacks.node_running)
		n->client->callbacks.node_running(n->client->data, n->id, info->state == PW_NODE_STATE_RUNNING);
}

static const struct pw_node_events arpw_node_events = {PW_VERSION_NODE_EVENTS, .info = arpw_node_info};

/* Binds node `id` for its properties (node_props follows). NULL with *error set. */
struct arpw_node *arpw_node_bind(struct arpw_client *c, uint32_t id, int *error)
{
	struct arpw_node *n = calloc(1, sizeof(*n));
	if (n == NULL) { *error = -ENOMEM; return NULL; }
	n->client = c;
	n->id = id;
	n->proxy = pw_registry_bind(c->registry, id, PW_TYPE_INTERFACE_Node, PW_VERSION_NODE, 0);
	if (n->proxy == NULL) { *error = errno ? -errno : -ENOMEM; free(n); return NULL; }
	pw_node_add_listener(n->proxy, &n->listener, &arpw_node_events, n);
	return n;
}

void arpw_node_free(struct arpw_node *n)
{
	if (n == NULL) return;
	spa_hook_remove(&n->listener);
	pw_proxy_destroy((struct pw_proxy *)n->proxy);
	free(n);
}

static int arpw_node_command(struct arpw_node *n, enum spa_node_command command)
{
	struct spa_command cmd = SPA_NODE_COMMAND_INIT(command);
	int res = pw_node_send_command(n->proxy, &cmd);
	return res < 0 ? res : 0;
}

/* Sends the node its Pause command: a client's stream stops where it is; arpw_node_start resumes it. */
int arpw_node_pause(struct arpw_node *n) { return arpw_node_command(n, SPA_NODE_COMMAND_Pause); }
int arpw_node_start(struct arpw_node *n) { return arpw_node_command(n, SPA_NODE_COMMAND_Start); }

/* Sets the node's Props volume (the scalar; channelVolumes are left as they are). */
int arpw_node_set_volume(struct arpw_node *n, float volume)
{
	uint8_t buffer[256];
	struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, sizeof(buffer));
	struct spa_pod *props = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_Props, SPA_PARAM_Props,
		SPA_PROP_volume, SPA_POD_Float(volume));
	if (props == NULL) return -ENOSPC;
	int res = pw_node_set_param(n->proxy, SPA_PARAM_Props, 0, props);
	return res < 0 ? res : 0;
}

static void arpw_device_info(void *data, const struct pw_device_info *info)
{
	struct arpw_device *d = data;
	struct arpw_callbacks *cb = &d->client->callbacks;
	if (info && info->props && (info->change_mask & PW_DEVICE_CHANGE_MASK_PROPS) && cb->device_props)
		cb->device_props(d->client->data, d->id, info->props);
	if (info && (info->change_mask & PW_DEVICE_CHANGE_MASK_PARAMS) && cb->device_params)
		cb->device_params(d->client->data, d->id);
}

/* The Audio/Sink and Audio/Source counts of a profile's `classes`: Struct(Int n,
 * Struct(String class, Int count, ...)*). */
static void arpw_profile_classes(const struct spa_pod *classes, struct arpw_profile *p)
{
	const struct spa_pod *entry, *field;
	if (classes == NULL || !spa_pod_is_struct(classes)) return;
	SPA_POD_STRUCT_FOREACH(classes, entry) {
		const char *name = NULL;
		int32_t count = 0;
		int n = 0;
		if (!spa_pod_is_struct(entry)) continue;
		SPA_POD_STRUCT_FOREACH(entry, field) {
			if (n == 0 && spa_pod_get_string(field, &name) < 0) break;
			if (n == 1) { spa_pod_get_int(field, &count); break; }
			n++;
		}
		if (name == NULL || count < 0) continue;
		if (strcmp(name, "Audio/Sink") == 0) p->sinks += (uint32_t)count;
		else if (strcmp(name, "Audio/Source") == 0) p->sources += (uint32_t)count;
	}
}

static void arpw_device_param(void *data, int seq, uint32_t id, uint32_t index, uint32_t next, const struct spa_pod *param)
{
	struct arpw_device *d = data;
	struct arpw_profile p = {.available = SPA_PARAM_AVAILABILITY_unknown};
	const char *name = NULL, *description = NULL;
	const struct spa_pod *classes = NULL;
	(void)index; (void)next;
	if ((id != SPA_PARAM_EnumProfile && id != SPA_PARAM_Profile) || param == NULL || d->client->callbacks.device_profile == NULL) return;
	if (spa_pod_parse_object(param, SPA_TYPE_OBJECT_ParamProfile, NULL,
			SPA_PARAM_PROFILE_index, SPA_POD_Int(&p.index),
			SPA_PARAM_PROFILE_name, SPA_POD_OPT_String(&name),
			SPA_PARAM_PROFILE_description, SPA_POD_OPT_String(&description),
			SPA_PARAM_PROFILE_priority, SPA_POD_OPT_Int(&p.priority),
			SPA_PARAM_PROFILE_available, SPA_POD_OPT_Id(&p.available),
			SPA_PARAM_PROFILE_classes, SPA_POD_OPT_Pod(&classes)) < 0)
		return;
	arpw_profile_classes(classes, &p);
	p.name = name ? name : "";
	p.description = description ? description : "";
	d->client->callbacks.device_profile(d->client->data, d->id, seq, id == SPA_PARAM_Profile, &p);
}

static const struct pw_device_events arpw_device_events = {PW_VERSION_DEVICE_EVENTS, .info = arpw_device_info, .param = arpw_device_param};

/* Binds device `id` for its properties and profiles. NULL with *error set. */
struct arpw_device *arpw_device_bind(struct arpw_client *c, uint32_t id, int *error)
{
	struct arpw_device *d = calloc(1, sizeof(*d));
	if (d == NULL) { *error = -ENOMEM; return NULL; }
	d->client = c;
	d->id = id;
	d->proxy = pw_registry_bind(c->registry, id, PW_TYPE_INTERFACE_Device, PW_VERSION_DEVICE, 0);
	if (d->proxy == NULL) { *error = errno ? -errno : -ENOMEM; free(d); return NULL; }
	pw_device_add_listener(d->proxy, &d->listener, &arpw_device_events, d);
	return d;
}

void arpw_device_free(struct arpw_device *d)
{
	if (d == NULL) return;
	spa_hook_remove(&d->listener);
	pw_proxy_destroy((struct pw_proxy *)d->proxy);
	free(d);
}

uint32_t arpw_device_proxy_id(struct arpw_device *d) { return pw_proxy_get_id((struct pw_proxy *)d->proxy); }

/* Asks for the EnumProfile and Profile params; the replies carry the sequence numbers that
 * pw_device_enum_params returns (its marshal numbers the request itself, whatever seq is given). */
int arpw_device_enum_profiles(struct arpw_device *d, int *enum_seq, int *active_seq)
{
	int res = pw_device_enum_params(d->proxy, 0, SPA_PARAM_EnumProfile, 0, 0, NULL);
	if (res < 0) return res;
	*enum_seq = res;
	res = pw_device_enum_params(d->proxy, 0, SPA_PARAM_Profile, 0, 0, NULL);
	if (res < 0) return res;
	*active_seq = res;
	return 0;
}

/* Sets the Profile param to `index`, saved (the user's choice, as pactl and wpctl set it). */
int arpw_device_set_profile(struct arpw_device *d, int32_t index)
{
	uint8_t buffer[256];
	struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, sizeof(buffer));
	struct spa_pod *param = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamProfile, SPA_PARAM_Profile,
		SPA_PARAM_PROFILE_index, SPA_POD_Int(index),
		SPA_PARAM_PROFILE_save, SPA_POD_Bool(true));
	if (param == NULL) return -ENOSPC;
	int res = pw_device_set_param(d->proxy, SPA_PARAM_Profile, 0, param);
	return res < 0 ? res : 0;
}

/* Disconnects and frees everything the client made (nodes and devices first, by arpw_node_free and arpw_device_free). */
void arpw_client_free(struct arpw_client *c)
{
	if (c == NULL) return;
	arpw_client_unbind_metadata(c);
	spa_hook_remove(&c->registry_listener);
	pw_proxy_destroy((struct pw_proxy *)c->registry);
	spa_hook_remove(&c->core_listener);
	pw_core_disconnect(c->core);
	if (c->entered) pw_loop_leave(c->loop);
	pw_context_destroy(c->context);
	pw_loop_destroy(c->loop);
	free(c);
}

/* A dictionary's entries, for Swift (spa_dict's items are an inline array of structs). */
uint32_t arpw_dict_count(const struct spa_dict *dict) { return dict ? dict->n_items : 0; }
const char *arpw_dict_key(const struct spa_dict *dict, uint32_t index) { return dict->items[index].key; }
const char *arpw_dict_value(const struct spa_dict *dict, uint32_t index) { return dict->items[index].value; }
const char *arpw_dict_lookup(const struct spa_dict *dict, const char *key) { return dict ? spa_dict_lookup(dict, key) : NULL; }

/* The version of libpipewire this process runs with. */
const char *arpw_library_version(void) { return pw_get_library_version(); }
