// The headset's ear: what bluealsa-aplay wrote to the file PCMs (S16, the rate and channels in the
// file's name), read every 10 ms; a report on the console at most every 50 ms per file:
//   ear NAME GUEST_NS FRAMES_SO_FAR LOUD_FRAMES_SO_FAR
// A file that shrinks (bluealsa-aplay reopened its PCM) is read again from its start; the counts go on.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define MAX 8
int main(int argc, char **argv) {
    if (argc < 2 || argc > MAX + 1) { fprintf(stderr, "usage: guest-ear FILE-RATE-CHANNELS.raw...\n"); return 2; }
    long offset[MAX] = {0}, frames[MAX] = {0}, loud[MAX] = {0}, reported[MAX] = {0};
    long long last[MAX] = {0};
    static short buffer[65536];
    struct timespec pause = {0, 10000000}, now, real;
    // Both clocks once: the host maps dbus-monitor's wall-clock stamps onto CLOCK_MONOTONIC.
    clock_gettime(CLOCK_REALTIME, &real);
    clock_gettime(CLOCK_MONOTONIC, &now);
    printf("AUDIOROUTE-GUEST clocks %lld %lld\n", (long long)real.tv_sec * 1000000000LL + real.tv_nsec,
           (long long)now.tv_sec * 1000000000LL + now.tv_nsec);
    fflush(stdout);
    for (;;) {
        for (int i = 1; i < argc; i++) {
            const char *dash = strrchr(argv[i], '-');
            int channels = dash ? atoi(dash + 1) : 1;
            if (channels < 1) channels = 1;
            FILE *f = fopen(argv[i], "rb");
            if (!f) continue;
            fseek(f, 0, SEEK_END);
            if (ftell(f) < offset[i - 1]) offset[i - 1] = 0;
            fseek(f, offset[i - 1], SEEK_SET);
            size_t got;
            while ((got = fread(buffer, 2 * channels, sizeof buffer / 2 / channels, f)) > 0) {
                offset[i - 1] += (long)got * 2 * channels;
                for (size_t n = 0; n < got; n++) {
                    int any = 0;
                    for (int c = 0; c < channels; c++) if (abs(buffer[n * channels + c]) > 1000) any = 1;
                    loud[i - 1] += any;
                }
                frames[i - 1] += (long)got;
            }
            fclose(f);
            clock_gettime(CLOCK_MONOTONIC, &now);
            long long ns = (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
            if (frames[i - 1] != reported[i - 1] && ns - last[i - 1] >= 50000000LL) {
                printf("AUDIOROUTE-GUEST ear %s %lld %ld %ld\n", argv[i], ns, frames[i - 1], loud[i - 1]);
                fflush(stdout);
                reported[i - 1] = frames[i - 1];
                last[i - 1] = ns;
            }
        }
        nanosleep(&pause, NULL);
    }
}
