// The guest's clock for the host: CLOCK_MONOTONIC in nanoseconds on the console every 20 ms.
// The host notes when it reads each line; the smallest (host time - guest time) near an event
// is the offset between the two clocks, late by at most the console's latency.
#include <stdio.h>
#include <time.h>
int main(void) {
    struct timespec now, pause = {0, 20000000};
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        printf("AUDIOROUTE-GUEST tick %lld\n", (long long)now.tv_sec * 1000000000LL + now.tv_nsec);
        fflush(stdout);
        nanosleep(&pause, NULL);
    }
}
