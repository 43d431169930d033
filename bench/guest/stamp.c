// The moment a program starts, on the clock of guest-ear's reports and the monitor's stamps:
//   guest-stamp WORDS... -- PROGRAM ARGS...
// says "WORDS <CLOCK_MONOTONIC ns>" on the console, then becomes PROGRAM (the same process: the
// stamp is its exec, not a shell's fork some milliseconds earlier or later).
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int split = 1;
    while (split < argc && strcmp(argv[split], "--") != 0) split++;
    if (split + 1 >= argc) { fprintf(stderr, "usage: guest-stamp WORDS... -- PROGRAM ARGS...\n"); return 2; }
    FILE *console = fopen("/dev/ttyS0", "w");
    if (!console) { perror("guest-stamp: /dev/ttyS0"); return 1; }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    fprintf(console, "AUDIOROUTE-GUEST");
    for (int i = 1; i < split; i++) fprintf(console, " %s", argv[i]);
    fprintf(console, " %lld\n", (long long)now.tv_sec * 1000000000LL + now.tv_nsec);
    fclose(console);
    execvp(argv[split + 1], argv + split + 1);
    perror("guest-stamp: exec");
    return 127;
}
