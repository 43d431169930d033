/* What a libpipewire client costs: pw_main_loop, a context and core connected, the registry
 * listened to, the `default` metadata bound (default sink and source), then idle. Prints
 * READY once the registry's first round is done, then each global and metadata change. */
#include <pipewire/pipewire.h>
#include <pipewire/extensions/metadata.h>
#include <spa/utils/string.h>
#include <stdio.h>
#include <string.h>

struct probe {
    struct pw_main_loop *loop;
    struct pw_core *core;
    struct pw_registry *registry;
    struct pw_metadata *metadata;
    struct spa_hook core_listener, registry_listener, metadata_listener;
    int sync;
    int ready;
};

static int property(void *data, uint32_t subject, const char *key, const char *type, const char *value) {
    (void)data; (void)type;
    printf("metadata %u %s = %s\n", subject, key ? key : "-", value ? value : "-");
    fflush(stdout);
    return 0;
}

static const struct pw_metadata_events metadata_events = {PW_VERSION_METADATA_EVENTS, .property = property};

static void global(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version, const struct spa_dict *props) {
    struct probe *p = data;
    (void)permissions; (void)version;
    const char *name = props ? spa_dict_lookup(props, PW_KEY_METADATA_NAME) : NULL;
    if (p->ready) { printf("global %u %s\n", id, type); fflush(stdout); }
    if (p->metadata == NULL && spa_streq(type, PW_TYPE_INTERFACE_Metadata) && spa_streq(name, "default")) {
        p->metadata = pw_registry_bind(p->registry, id, type, PW_VERSION_METADATA, 0);
        pw_metadata_add_listener(p->metadata, &p->metadata_listener, &metadata_events, p);
        p->sync = pw_core_sync(p->core, PW_ID_CORE, p->sync);
    }
}

static void global_remove(void *data, uint32_t id) {
    struct probe *p = data;
    if (p->ready) { printf("global-remove %u\n", id); fflush(stdout); }
}

static const struct pw_registry_events registry_events = {PW_VERSION_REGISTRY_EVENTS, .global = global, .global_remove = global_remove};

static void done(void *data, uint32_t id, int seq) {
    struct probe *p = data;
    if (id == PW_ID_CORE && seq == p->sync && !p->ready) {
        p->ready = 1;
        printf("%s\nREADY\n", p->metadata ? "default metadata bound" : "no default metadata");
        fflush(stdout);
    }
}

static void error(void *data, uint32_t id, int seq, int res, const char *message) {
    struct probe *p = data;
    (void)seq;
    fprintf(stderr, "error %u %d %s\n", id, res, message);
    if (id == PW_ID_CORE) pw_main_loop_quit(p->loop);
}

static const struct pw_core_events core_events = {PW_VERSION_CORE_EVENTS, .done = done, .error = error};

int main(int argc, char **argv) {
    struct probe p = {0};
    pw_init(&argc, &argv);
    p.loop = pw_main_loop_new(NULL);
    struct pw_context *context = pw_context_new(pw_main_loop_get_loop(p.loop), NULL, 0);
    p.core = pw_context_connect(context, NULL, 0);
    if (p.core == NULL) { perror("pw_context_connect"); return 1; }
    pw_core_add_listener(p.core, &p.core_listener, &core_events, &p);
    p.registry = pw_core_get_registry(p.core, PW_VERSION_REGISTRY, 0);
    pw_registry_add_listener(p.registry, &p.registry_listener, &registry_events, &p);
    p.sync = pw_core_sync(p.core, PW_ID_CORE, 0);
    pw_main_loop_run(p.loop);
    return 1;
}
