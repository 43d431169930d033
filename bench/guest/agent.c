// The bench's Bluetooth agent: accepts every pairing and authorization (a headset that pairs with
// Just Works), and discovers on an adapter until it finds the device with the given address.
//   guest-agent ADAPTER_PATH ADDRESS
#include <systemd/sd-bus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int accept_call(sd_bus_message *m, void *data, sd_bus_error *error) {
    (void)data; (void)error;
    fprintf(stderr, "guest-agent: %s accepted\n", sd_bus_message_get_member(m));
    return sd_bus_reply_method_return(m, "");
}
static int pin_code(sd_bus_message *m, void *data, sd_bus_error *error) {
    (void)data; (void)error;
    return sd_bus_reply_method_return(m, "s", "0000");
}
static int passkey(sd_bus_message *m, void *data, sd_bus_error *error) {
    (void)data; (void)error;
    return sd_bus_reply_method_return(m, "u", 0);
}
static const sd_bus_vtable agent[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("Release", "", "", accept_call, 0),
    SD_BUS_METHOD("RequestPinCode", "o", "s", pin_code, 0),
    SD_BUS_METHOD("DisplayPinCode", "os", "", accept_call, 0),
    SD_BUS_METHOD("RequestPasskey", "o", "u", passkey, 0),
    SD_BUS_METHOD("DisplayPasskey", "ouq", "", accept_call, 0),
    SD_BUS_METHOD("RequestConfirmation", "ou", "", accept_call, 0),
    SD_BUS_METHOD("RequestAuthorization", "o", "", accept_call, 0),
    SD_BUS_METHOD("AuthorizeService", "os", "", accept_call, 0),
    SD_BUS_METHOD("Cancel", "", "", accept_call, 0),
    SD_BUS_VTABLE_END
};

static int call(sd_bus *bus, const char *path, const char *interface, const char *member, const char *types, const char *a, const char *b) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    int r = types ? sd_bus_call_method(bus, "org.bluez", path, interface, member, &error, NULL, types, a, b)
                  : sd_bus_call_method(bus, "org.bluez", path, interface, member, &error, NULL, "");
    if (r < 0)
        fprintf(stderr, "guest-agent: %s %s: %s\n", path, member, error.message ? error.message : strerror(-r));
    sd_bus_error_free(&error);
    return r;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: guest-agent ADAPTER_PATH ADDRESS\n"); return 2; }
    sd_bus *bus = NULL;
    int r = sd_bus_open_system(&bus);
    if (r < 0) { fprintf(stderr, "guest-agent: system bus: %s\n", strerror(-r)); return 1; }
    if ((r = sd_bus_add_object_vtable(bus, NULL, "/audioroute/agent", "org.bluez.Agent1", agent, NULL)) < 0) return 1;
    if (call(bus, "/org/bluez", "org.bluez.AgentManager1", "RegisterAgent", "os", "/audioroute/agent", "DisplayYesNo") < 0 ||
        call(bus, "/org/bluez", "org.bluez.AgentManager1", "RequestDefaultAgent", "o", "/audioroute/agent", NULL) < 0)
        return 1;
    char device[128], address[32];
    snprintf(address, sizeof address, "%s", argv[2]);
    for (char *c = address; *c; c++) if (*c == ':') *c = '_';
    snprintf(device, sizeof device, "%s/dev_%s", argv[1], address);
    int discovering = call(bus, argv[1], "org.bluez.Adapter1", "StartDiscovery", NULL, NULL, NULL) >= 0;
    printf("agent ready\n");
    fflush(stdout);
    struct timespec last = {0, 0};
    for (;;) {
        while ((r = sd_bus_process(bus, NULL)) > 0) {}
        if (r < 0) { fprintf(stderr, "guest-agent: bus: %s\n", strerror(-r)); return 1; }
        if (discovering) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (now.tv_sec * 10 + now.tv_nsec / 100000000 != last.tv_sec * 10 + last.tv_nsec / 100000000) {
                last = now;
                // Found in this discovery (RSSI is only set by an inquiry result): a device
                // bluetoothd merely remembers from its storage does not count.
                int16_t rssi = 0;
                sd_bus_error error = SD_BUS_ERROR_NULL;
                if (sd_bus_get_property_trivial(bus, "org.bluez", device, "org.bluez.Device1", "RSSI", &error, 'n', &rssi) >= 0) {
                    call(bus, argv[1], "org.bluez.Adapter1", "StopDiscovery", NULL, NULL, NULL);
                    discovering = 0;
                    printf("agent discovered %s\n", argv[2]);
                    fflush(stdout);
                }
                sd_bus_error_free(&error);
            }
        }
        sd_bus_wait(bus, discovering ? 100000 : (uint64_t)-1);
    }
}
