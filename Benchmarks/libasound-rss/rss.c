// What loading libasound costs a process, for docs/decisions.md ("Jack controls through
// ioctls, not libasound"). Mode 0: nothing; 1: dlopen libasound; 2: and parse the ALSA
// configuration (what snd_ctl_open does first); 3: and snd_ctl_open("hw:0").
// Prints the process's maximum RSS. Build: cc -O2 -o rss rss.c -ldl (libasound headers).
#include <alsa/asoundlib.h>
#include <dlfcn.h>
#include <stdio.h>
#include <sys/resource.h>

int main(int argc, char **argv) {
    int mode = argc > 1 ? argv[1][0] - '0' : 0;
    if (mode >= 1) {
        void *library = dlopen("libasound.so.2", RTLD_NOW);
        if (!library) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 1; }
        if (mode >= 2) {
            int (*update)(void) = (int (*)(void))dlsym(library, "snd_config_update");
            if (update() < 0) return 1;
        }
        if (mode >= 3) {
            int (*open)(snd_ctl_t **, const char *, int) = (int (*)(snd_ctl_t **, const char *, int))dlsym(library, "snd_ctl_open");
            snd_ctl_t *control;
            printf("snd_ctl_open hw:0: %d\n", open(&control, "hw:0", SND_CTL_NONBLOCK));
        }
    }
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    printf("mode %d maxrss %ld kB\n", mode, usage.ru_maxrss);
    return 0;
}
