/* libpulse for audioroute-pulse: what include/audioroute_pulse.h declares. */
#include "audioroute_pulse.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <pulse/pulseaudio.h>

_Static_assert(ARPA_CHANNELS_MAX == PA_CHANNELS_MAX, "a volume's channels as libpulse's");

struct arpa_request;

struct arpa_client {
	pa_mainloop *mainloop;
	pa_context *context;
	struct arpa_callbacks callbacks;
	void *data;
	/* The first round: subscribe, the server's info and the five lists; ready when all answered. */
	int first_round_left;
	int ready_sent;
	int failed_sent;
	char *server_name, *server_version;
	/* Our poll's extra descriptor and timeout for this iteration, and what it found. */
	int extra_fd, timeout_ms, extra_ready;
	struct pollfd *fds;
	unsigned long fds_capacity;
	/* Requests waiting for the server, freed with the client if it never answers. */
	struct arpa_request *requests;
};

/* A set-defaults or set-stream request: answered once each of its operations is. */
struct arpa_request {
	struct arpa_client *client;
	struct arpa_request *next;
	uint32_t tag;
	int left;
	int result;
};

/* libpulse's PA_ERR_* as -errno, so that every failure reads the same to the caller. */
static int arpa_errno(int pa_error)
{
	switch (pa_error) {
	case PA_OK: return 0;
	case PA_ERR_ACCESS: case PA_ERR_AUTHKEY: return -EACCES;
	case PA_ERR_INVALID: case PA_ERR_INVALIDSERVER: return -EINVAL;
	case PA_ERR_EXIST: return -EEXIST;
	case PA_ERR_NOENTITY: return -ENOENT;
	case PA_ERR_CONNECTIONREFUSED: return -ECONNREFUSED;
	case PA_ERR_PROTOCOL: case PA_ERR_COMMAND: return -EPROTO;
	case PA_ERR_TIMEOUT: return -ETIMEDOUT;
	case PA_ERR_CONNECTIONTERMINATED: return -EPIPE;
	case PA_ERR_KILLED: return -ECONNRESET;
	case PA_ERR_BADSTATE: return -EBADFD;
	case PA_ERR_NODATA: return -ENODATA;
	case PA_ERR_VERSION: return -EPROTONOSUPPORT;
	case PA_ERR_TOOLARGE: return -E2BIG;
	case PA_ERR_NOTSUPPORTED: return -ENOTSUP;
	case PA_ERR_NOEXTENSION: case PA_ERR_OBSOLETE: case PA_ERR_NOTIMPLEMENTED: return -ENOSYS;
	case PA_ERR_BUSY: return -EBUSY;
	default: return -EIO;
	}
}

static void arpa_fail(struct arpa_client *c, int pa_error)
{
	if (c->failed_sent) return;
	c->failed_sent = 1;
	if (c->callbacks.failed) c->callbacks.failed(c->data, arpa_errno(pa_error) ? arpa_errno(pa_error) : -EPIPE, pa_strerror(pa_error));
}

static void arpa_round_step(struct arpa_client *c)
{
	if (--c->first_round_left > 0 || c->ready_sent) return;
	c->ready_sent = 1;
	if (c->callbacks.ready) c->callbacks.ready(c->data, c->server_name ? c->server_name : "", c->server_version ? c->server_version : "");
}

/* A stream's volume and mute, for the `object` callback. */
static const struct arpa_stream_state *arpa_stream_of(struct arpa_stream_state *state, const pa_cvolume *volume, int muted, int writable)
{
	state->muted = muted != 0;
	state->volume_writable = writable != 0;
	state->channels = volume->channels <= ARPA_CHANNELS_MAX ? volume->channels : 0;
	for (unsigned k = 0; k < state->channels; k++) state->volume[k] = volume->values[k];
	return state;
}

/* Each info callback comes in two kinds: one for the first round's list (its end is a step of
 * the round), one for an object the subscription named (its end is nothing). */
#define ARPA_INFO_CALLBACKS(kind, facility, name_expr, monitor_expr, stream_expr) \
	static void arpa_##kind##_one(pa_context *ctx, const pa_##kind##_info *i, int eol, void *userdata) \
	{ \
		struct arpa_client *c = userdata; \
		struct arpa_stream_state state; \
		(void)ctx; \
		(void)state; \
		if (eol || i == NULL || c->callbacks.object == NULL) return; \
		c->callbacks.object(c->data, facility, i->index, name_expr, monitor_expr, (const struct arpa_proplist *)i->proplist, stream_expr); \
	} \
	static void arpa_##kind##_list(pa_context *ctx, const pa_##kind##_info *i, int eol, void *userdata) \
	{ \
		if (eol) { arpa_round_step(userdata); return; } \
		arpa_##kind##_one(ctx, i, eol, userdata); \
	}

ARPA_INFO_CALLBACKS(sink, ARPA_SINK, i->name, 0, NULL)
ARPA_INFO_CALLBACKS(source, ARPA_SOURCE, i->name, i->monitor_of_sink != PA_INVALID_INDEX, NULL)
ARPA_INFO_CALLBACKS(sink_input, ARPA_SINK_INPUT, NULL, 0, arpa_stream_of(&state, &i->volume, i->mute, i->has_volume && i->volume_writable))
ARPA_INFO_CALLBACKS(source_output, ARPA_SOURCE_OUTPUT, NULL, 0, arpa_stream_of(&state, &i->volume, i->mute, i->has_volume && i->volume_writable))

/* A card, with its first ARPA_PROFILES_MAX profiles: one callback (the end of a list is nothing). */
static void arpa_card_one(pa_context *ctx, const pa_card_info *i, int eol, void *userdata)
{
	struct arpa_client *c = userdata;
	struct arpa_profile profiles[ARPA_PROFILES_MAX];
	unsigned count = 0;
	int active = -1;
	(void)ctx;
	if (eol || i == NULL || c->callbacks.card == NULL) return;
	for (uint32_t k = 0; k < i->n_profiles && count < ARPA_PROFILES_MAX; k++) {
		const pa_card_profile_info2 *p = i->profiles2 ? i->profiles2[k] : NULL;
		if (p == NULL || p->name == NULL) continue;
		if (p == i->active_profile2) active = (int)count;
		profiles[count++] = (struct arpa_profile){
			.name = p->name,
			.description = p->description ? p->description : "",
			.sinks = p->n_sinks,
			.sources = p->n_sources,
			.priority = p->priority,
			.available = p->available != 0,
		};
	}
	c->callbacks.card(c->data, i->index, i->name ? i->name : "", (const struct arpa_proplist *)i->proplist, profiles, count, i->n_profiles, active);
}

static void arpa_card_list(pa_context *ctx, const pa_card_info *i, int eol, void *userdata)
{
	if (eol) { arpa_round_step(userdata); return; }
	arpa_card_one(ctx, i, eol, userdata);
}

static void arpa_server_info(pa_context *ctx, const pa_server_info *i, void *userdata)
{
	struct arpa_client *c = userdata;
	(void)ctx;
	if (i) {
		free(c->server_name);
		free(c->server_version);
		c->server_name = i->server_name ? strdup(i->server_name) : NULL;
		c->server_version = i->server_version ? strdup(i->server_version) : NULL;
	}
	arpa_round_step(c);
}

static void arpa_subscribed(pa_context *ctx, int success, void *userdata)
{
	struct arpa_client *c = userdata;
	if (!success) { arpa_fail(c, pa_context_errno(ctx)); return; }
	arpa_round_step(c);
}

static void arpa_event(pa_context *ctx, pa_subscription_event_type_t t, uint32_t index, void *userdata)
{
	struct arpa_client *c = userdata;
	int facility;
	switch (t & PA_SUBSCRIPTION_EVENT_FACILITY_MASK) {
	case PA_SUBSCRIPTION_EVENT_SINK: facility = ARPA_SINK; break;
	case PA_SUBSCRIPTION_EVENT_SOURCE: facility = ARPA_SOURCE; break;
	case PA_SUBSCRIPTION_EVENT_SINK_INPUT: facility = ARPA_SINK_INPUT; break;
	case PA_SUBSCRIPTION_EVENT_SOURCE_OUTPUT: facility = ARPA_SOURCE_OUTPUT; break;
	case PA_SUBSCRIPTION_EVENT_CARD: facility = ARPA_CARD; break;
	default: return;
	}
	if ((t & PA_SUBSCRIPTION_EVENT_TYPE_MASK) == PA_SUBSCRIPTION_EVENT_REMOVE) {
		if (c->callbacks.removed) c->callbacks.removed(c->data, facility, index);
		return;
	}
	pa_operation *o = NULL;
	switch (facility) {
	case ARPA_SINK: o = pa_context_get_sink_info_by_index(ctx, index, arpa_sink_one, c); break;
	case ARPA_SOURCE: o = pa_context_get_source_info_by_index(ctx, index, arpa_source_one, c); break;
	case ARPA_SINK_INPUT: o = pa_context_get_sink_input_info(ctx, index, arpa_sink_input_one, c); break;
	case ARPA_SOURCE_OUTPUT: o = pa_context_get_source_output_info(ctx, index, arpa_source_output_one, c); break;
	case ARPA_CARD: o = pa_context_get_card_info_by_index(ctx, index, arpa_card_one, c); break;
	}
	if (o) pa_operation_unref(o);
}

/* Starts the first round: every query's answer is one step; `ready` after the last. */
static void arpa_first_round(struct arpa_client *c)
{
	pa_operation *o[7];
	int n = 0;
	pa_context_set_subscribe_callback(c->context, arpa_event, c);
	o[n++] = pa_context_subscribe(c->context,
		PA_SUBSCRIPTION_MASK_SINK | PA_SUBSCRIPTION_MASK_SOURCE | PA_SUBSCRIPTION_MASK_SINK_INPUT | PA_SUBSCRIPTION_MASK_SOURCE_OUTPUT
			| PA_SUBSCRIPTION_MASK_CARD,
		arpa_subscribed, c);
	o[n++] = pa_context_get_server_info(c->context, arpa_server_info, c);
	o[n++] = pa_context_get_sink_info_list(c->context, arpa_sink_list, c);
	o[n++] = pa_context_get_source_info_list(c->context, arpa_source_list, c);
	o[n++] = pa_context_get_sink_input_info_list(c->context, arpa_sink_input_list, c);
	o[n++] = pa_context_get_source_output_info_list(c->context, arpa_source_output_list, c);
	o[n++] = pa_context_get_card_info_list(c->context, arpa_card_list, c);
	c->first_round_left = n;
	for (int k = 0; k < n; k++) {
		if (o[k] == NULL) { arpa_fail(c, pa_context_errno(c->context)); return; }
		pa_operation_unref(o[k]);
	}
}

static void arpa_state(pa_context *ctx, void *userdata)
{
	struct arpa_client *c = userdata;
	switch (pa_context_get_state(ctx)) {
	case PA_CONTEXT_READY: arpa_first_round(c); break;
	case PA_CONTEXT_FAILED: arpa_fail(c, pa_context_errno(ctx)); break;
	case PA_CONTEXT_TERMINATED: arpa_fail(c, PA_ERR_CONNECTIONTERMINATED); break;
	default: break;
	}
}

/* The mainloop's poll: its descriptors and the caller's, one poll(2), the sooner timeout. */
static int arpa_poll(struct pollfd *ufds, unsigned long nfds, int timeout, void *userdata)
{
	struct arpa_client *c = userdata;
	if (nfds + 1 > c->fds_capacity) {
		struct pollfd *grown = realloc(c->fds, (nfds + 1) * sizeof(*grown));
		if (grown == NULL) { errno = ENOMEM; return -1; }
		c->fds = grown;
		c->fds_capacity = nfds + 1;
	}
	memcpy(c->fds, ufds, nfds * sizeof(*ufds));
	c->fds[nfds] = (struct pollfd){.fd = c->extra_fd, .events = POLLIN};
	if (c->timeout_ms >= 0 && (timeout < 0 || c->timeout_ms < timeout)) timeout = c->timeout_ms;
	int result = poll(c->fds, nfds + 1, timeout);
	if (result < 0) return result;
	for (unsigned long k = 0; k < nfds; k++) ufds[k].revents = c->fds[k].revents;
	if (c->extra_fd >= 0 && c->fds[nfds].revents) {
		c->extra_ready = 1;
		result--;
	}
	return result;
}

struct arpa_client *arpa_client_new(const struct arpa_callbacks *callbacks, void *data, const char *client_name, int *error)
{
	struct arpa_client *c = calloc(1, sizeof(*c));
	if (c == NULL) { *error = -ENOMEM; return NULL; }
	c->callbacks = *callbacks;
	c->data = data;
	c->extra_fd = -1;
	c->timeout_ms = -1;
	c->mainloop = pa_mainloop_new();
	if (c->mainloop == NULL) { *error = -ENOMEM; free(c); return NULL; }
	pa_mainloop_set_poll_func(c->mainloop, arpa_poll, c);
	c->context = pa_context_new(pa_mainloop_get_api(c->mainloop), client_name);
	if (c->context == NULL) { *error = -ENOMEM; pa_mainloop_free(c->mainloop); free(c); return NULL; }
	pa_context_set_state_callback(c->context, arpa_state, c);
	if (pa_context_connect(c->context, NULL, PA_CONTEXT_NOAUTOSPAWN, NULL) < 0) {
		*error = arpa_errno(pa_context_errno(c->context));
		if (*error == 0) *error = -ECONNREFUSED;
		arpa_client_free(c);
		return NULL;
	}
	return c;
}

int arpa_client_iterate(struct arpa_client *c, int fd, int timeout_ms, int *fd_ready)
{
	c->extra_fd = fd;
	c->timeout_ms = timeout_ms;
	c->extra_ready = 0;
	int result = pa_mainloop_iterate(c->mainloop, 1, NULL);
	*fd_ready = c->extra_ready;
	c->extra_fd = -1;
	return result < 0 ? -EIO : 0;
}

static void arpa_request_answered(pa_context *ctx, int success, void *userdata)
{
	struct arpa_request *r = userdata;
	struct arpa_client *c = r->client;
	if (!success && r->result == 0) r->result = arpa_errno(pa_context_errno(ctx)) ? arpa_errno(pa_context_errno(ctx)) : -EIO;
	if (--r->left > 0) return;
	for (struct arpa_request **p = &c->requests; *p; p = &(*p)->next)
		if (*p == r) { *p = r->next; break; }
	if (c->callbacks.done) c->callbacks.done(c->data, r->tag, r->result);
	free(r);
}

/* A request of `tag`, listed with the client until the server answered it. */
static struct arpa_request *arpa_request_new(struct arpa_client *c, uint32_t tag)
{
	struct arpa_request *r = calloc(1, sizeof(*r));
	if (r == NULL) return NULL;
	r->client = c;
	r->tag = tag;
	/* One step of our own, so that `done` cannot run before every operation is sent. */
	r->left = 1;
	r->next = c->requests;
	c->requests = r;
	return r;
}

/* One operation of request `r` sent (NULL: it could not be). */
static void arpa_request_sent(struct arpa_request *r, pa_operation *o)
{
	struct arpa_client *c = r->client;
	if (o == NULL) {
		if (r->result == 0) r->result = arpa_errno(pa_context_errno(c->context)) ? arpa_errno(pa_context_errno(c->context)) : -EIO;
		return;
	}
	r->left++;
	pa_operation_unref(o);
}

int arpa_client_set_defaults(struct arpa_client *c, const char *sink, const char *source, uint32_t tag)
{
	if (pa_context_get_state(c->context) != PA_CONTEXT_READY) return -ENOTCONN;
	struct arpa_request *r = arpa_request_new(c, tag);
	if (r == NULL) return -ENOMEM;
	if (sink) arpa_request_sent(r, pa_context_set_default_sink(c->context, sink, arpa_request_answered, r));
	if (source) arpa_request_sent(r, pa_context_set_default_source(c->context, source, arpa_request_answered, r));
	arpa_request_answered(c->context, 1, r);
	return 0;
}

int arpa_client_set_stream(struct arpa_client *c, int facility, uint32_t index, int mute, const uint32_t *volume, unsigned channels, uint32_t tag)
{
	if (facility != ARPA_SINK_INPUT && facility != ARPA_SOURCE_OUTPUT) return -EINVAL;
	if (pa_context_get_state(c->context) != PA_CONTEXT_READY) return -ENOTCONN;
	pa_cvolume cv;
	if (channels > 0) {
		if (channels > PA_CHANNELS_MAX) return -EINVAL;
		cv.channels = (uint8_t)channels;
		for (unsigned k = 0; k < channels; k++) cv.values[k] = volume[k];
		if (!pa_cvolume_valid(&cv)) return -EINVAL;
	}
	struct arpa_request *r = arpa_request_new(c, tag);
	if (r == NULL) return -ENOMEM;
	int sink_input = facility == ARPA_SINK_INPUT;
	if (mute >= 0)
		arpa_request_sent(r, sink_input ? pa_context_set_sink_input_mute(c->context, index, mute, arpa_request_answered, r)
		                                : pa_context_set_source_output_mute(c->context, index, mute, arpa_request_answered, r));
	if (channels > 0)
		arpa_request_sent(r, sink_input ? pa_context_set_sink_input_volume(c->context, index, &cv, arpa_request_answered, r)
		                                : pa_context_set_source_output_volume(c->context, index, &cv, arpa_request_answered, r));
	arpa_request_answered(c->context, 1, r);
	return 0;
}

int arpa_client_set_card_profile(struct arpa_client *c, uint32_t card, const char *profile, uint32_t tag)
{
	if (profile == NULL) return -EINVAL;
	if (pa_context_get_state(c->context) != PA_CONTEXT_READY) return -ENOTCONN;
	struct arpa_request *r = arpa_request_new(c, tag);
	if (r == NULL) return -ENOMEM;
	arpa_request_sent(r, pa_context_set_card_profile_by_index(c->context, card, profile, arpa_request_answered, r));
	arpa_request_answered(c->context, 1, r);
	return 0;
}

uint32_t arpa_volume_from_linear(double factor) { return pa_sw_volume_from_linear(factor); }

void arpa_client_free(struct arpa_client *c)
{
	if (c == NULL) return;
	if (c->context) {
		pa_context_set_state_callback(c->context, NULL, NULL);
		pa_context_set_subscribe_callback(c->context, NULL, NULL);
		pa_context_disconnect(c->context);
		pa_context_unref(c->context);
	}
	if (c->mainloop) pa_mainloop_free(c->mainloop);
	while (c->requests) {
		struct arpa_request *next = c->requests->next;
		free(c->requests);
		c->requests = next;
	}
	free(c->fds);
	free(c->server_name);
	free(c->server_version);
	free(c);
}

const char *arpa_proplist_gets(const struct arpa_proplist *props, const char *key)
{
	return props ? pa_proplist_gets((const pa_proplist *)props, key) : NULL;
}

const char *arpa_library_version(void) { return pa_get_library_version(); }
