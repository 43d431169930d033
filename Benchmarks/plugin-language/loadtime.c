// Opens a PCM once in a fresh process and prints the microseconds snd_pcm_open took (the first open
// of a plugin PCM includes alsa-lib's dlopen of the plugin), then plays 0.1 s of silence and closes.
// Usage: loadtime PCM  (run it many times; compare with PCM "null" for what the configuration costs).
//        loadtime PCM CYCLES: open, play, close and free alsa-lib's configuration (which dlcloses the
//        plugin) CYCLES times in one process, then print the resident set in kB (a plugin that cannot
//        be unloaded cleanly leaks or crashes here).
#include <alsa/asoundlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static long rss_kb(void) {
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f) { if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0; fclose(f); }
	return resident * 4;
}

static int cycle(const char *name) {
	snd_pcm_t *pcm;
	int err = snd_pcm_open(&pcm, name, SND_PCM_STREAM_PLAYBACK, 0);
	if (err < 0) return err;
	err = snd_pcm_set_params(pcm, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, 2, 48000, 1, 100000);
	static short frames[480 * 2];
	for (int i = 0; err == 0 && i < 10; i++) snd_pcm_writei(pcm, frames, 480);
	snd_pcm_close(pcm);
	snd_config_update_free_global();
	return err;
}

int main(int argc, char **argv) {
	if (argc > 2) {
		int cycles = atoi(argv[2]);
		long first = 0;
		for (int i = 0; i < cycles; i++) {
			int err = cycle(argv[1]);
			if (err < 0) { fprintf(stderr, "cycle %d: %s\n", i, snd_strerror(err)); return 1; }
			if (i == 0) first = rss_kb();
		}
		printf("rss after 1 cycle %ld kB, after %d cycles %ld kB\n", first, cycles, rss_kb());
		return 0;
	}
	snd_pcm_t *pcm;
	double start = now_us();
	int err = snd_pcm_open(&pcm, argc > 1 ? argv[1] : "audioroute", SND_PCM_STREAM_PLAYBACK, 0);
	double opened = now_us();
	if (err < 0) { fprintf(stderr, "open: %s\n", snd_strerror(err)); return 1; }
	err = snd_pcm_set_params(pcm, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, 2, 48000, 1, 100000);
	if (err < 0) { fprintf(stderr, "params: %s\n", snd_strerror(err)); return 1; }
	static short frames[480 * 2];
	for (int i = 0; i < 10; i++) snd_pcm_writei(pcm, frames, 480);
	snd_pcm_close(pcm);
	printf("%.0f\n", opened - start);
	return 0;
}
