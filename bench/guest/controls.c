// The UCM phase's view of the HDA card's controls: every change of the Master amp's switches
// (the Speaker is its left channel, the Earpiece its right: Tests/Fixtures/ucm2-bench), its
// volume (the verb) and the capture switch (the Mic), read at each control event, one line per
// state with CLOCK_MONOTONIC, so that a moment with both outputs on shows even between two
// checks. The kernel merges the events of one control not yet read: a state that lasts less
// than the time to read it can be missed (docs/ucm.md).
//   guest-controls CARD    lines "controls NS switch=L,R volume=V capture=L,R"
#include <alsa/asoundlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
static int get(snd_ctl_t *ctl, const char *name, long values[2]) {
    snd_ctl_elem_value_t *value;
    snd_ctl_elem_value_alloca(&value);
    snd_ctl_elem_value_set_interface(value, SND_CTL_ELEM_IFACE_MIXER);
    snd_ctl_elem_value_set_name(value, name);
    int err = snd_ctl_elem_read(ctl, value);
    if (err < 0) return err;
    values[0] = snd_ctl_elem_value_get_integer(value, 0);
    values[1] = snd_ctl_elem_value_get_integer(value, 1);
    return 0;
}
int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: guest-controls CARD\n"); return 2; }
    char device[32], last[128] = "", line[128];
    snprintf(device, sizeof device, "hw:%s", argv[1]);
    snd_ctl_t *ctl;
    /* Non-blocking: snd_ctl_read drains the pending events and then says EAGAIN. */
    int err = snd_ctl_open(&ctl, device, SND_CTL_NONBLOCK);
    if (err < 0 || (err = snd_ctl_subscribe_events(ctl, 1)) < 0) { fprintf(stderr, "guest-controls: %s: %s\n", device, snd_strerror(err)); return 1; }
    snd_ctl_event_t *event;
    snd_ctl_event_alloca(&event);
    for (;;) {
        long sw[2], vol[2], cap[2];
        if (get(ctl, "Master Playback Switch", sw) < 0 || get(ctl, "Master Playback Volume", vol) < 0
            || get(ctl, "Capture Switch", cap) < 0) { fprintf(stderr, "guest-controls: no Master or Capture control\n"); return 1; }
        snprintf(line, sizeof line, "switch=%s,%s volume=%ld capture=%s,%s", sw[0] ? "on" : "off", sw[1] ? "on" : "off",
                 vol[0], cap[0] ? "on" : "off", cap[1] ? "on" : "off");
        if (strcmp(line, last) != 0) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            printf("controls %lld %s\n", (long long)now.tv_sec * 1000000000LL + now.tv_nsec, line);
            fflush(stdout);
            strcpy(last, line);
        }
        if (snd_ctl_wait(ctl, -1) < 0) return 1;
        while (snd_ctl_read(ctl, event) > 0) {}  /* all pending events; the state is read above */
    }
}
