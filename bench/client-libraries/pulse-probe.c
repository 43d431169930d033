/* What a libpulse client costs: connected, subscribed to sink, source, card, sink-input and
 * server events, the server's info read, then idle. `plain` runs pa_mainloop on the main
 * thread (a daemon's own loop would), `threaded` pa_threaded_mainloop. Prints READY and each
 * event; bench/client-libraries/measure reads its RSS and wake-ups. */
#include <pulse/pulseaudio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void server_info(pa_context *c, const pa_server_info *i, void *u) {
    (void)c; (void)u;
    printf("server %s %s default-sink %s default-source %s\nREADY\n", i->server_name, i->server_version,
           i->default_sink_name ? i->default_sink_name : "-", i->default_source_name ? i->default_source_name : "-");
    fflush(stdout);
}

static void event(pa_context *c, pa_subscription_event_type_t t, uint32_t index, void *u) {
    (void)c; (void)u;
    printf("event facility %d type %d index %u\n", t & PA_SUBSCRIPTION_EVENT_FACILITY_MASK, t & PA_SUBSCRIPTION_EVENT_TYPE_MASK, index);
    fflush(stdout);
}

static void state(pa_context *c, void *u) {
    (void)u;
    switch (pa_context_get_state(c)) {
    case PA_CONTEXT_READY:
        pa_context_set_subscribe_callback(c, event, NULL);
        pa_operation_unref(pa_context_subscribe(c, PA_SUBSCRIPTION_MASK_SINK | PA_SUBSCRIPTION_MASK_SOURCE | PA_SUBSCRIPTION_MASK_CARD |
            PA_SUBSCRIPTION_MASK_SINK_INPUT | PA_SUBSCRIPTION_MASK_SERVER, NULL, NULL));
        pa_operation_unref(pa_context_get_server_info(c, server_info, NULL));
        break;
    case PA_CONTEXT_FAILED:
    case PA_CONTEXT_TERMINATED:
        fprintf(stderr, "context: %s\n", pa_strerror(pa_context_errno(c)));
        _exit(1);
    default:
        break;
    }
}

int main(int argc, char **argv) {
    int threaded = argc > 1 && strcmp(argv[1], "threaded") == 0;
    pa_mainloop *plain = NULL;
    pa_threaded_mainloop *thread = NULL;
    pa_mainloop_api *api;
    if (threaded) {
        thread = pa_threaded_mainloop_new();
        api = pa_threaded_mainloop_get_api(thread);
    } else {
        plain = pa_mainloop_new();
        api = pa_mainloop_get_api(plain);
    }
    pa_context *c = pa_context_new(api, "audioroute-probe");
    pa_context_set_state_callback(c, state, NULL);
    if (threaded) pa_threaded_mainloop_lock(thread);
    if (pa_context_connect(c, NULL, PA_CONTEXT_NOAUTOSPAWN, NULL) < 0) {
        fprintf(stderr, "connect: %s\n", pa_strerror(pa_context_errno(c)));
        return 1;
    }
    if (threaded) {
        pa_threaded_mainloop_start(thread);
        pa_threaded_mainloop_unlock(thread);
        for (;;) pause();
    }
    int ret = 0;
    pa_mainloop_run(plain, &ret);
    return ret;
}
