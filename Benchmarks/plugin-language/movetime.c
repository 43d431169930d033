// What a live move costs the plugin: plays through `audioroute` into a route of `null` PCMs,
// rewrites the route file (as audiorouted does: temporary file, then rename) to the other one,
// and times the next snd_pcm_writei of one period, which closes the old device, reads the
// route, opens the new one and writes. null does not pace, so the time is the move's own cost;
// on a real card the move also waits for the period boundary (at most one period).
// Usage: movetime ROUTE_FILE CYCLES   (ROUTE_FILE: the one the plugin reads; pcm.move_a and
// pcm.move_b must be defined, e.g. as "null" wrappers, in the configuration).
#include <alsa/asoundlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void route(const char *file, const char *pcm) {
	char temporary[4096];
	snprintf(temporary, sizeof(temporary), "%s.new", file);
	FILE *f = fopen(temporary, "w");
	if (f == NULL) { perror(temporary); exit(1); }
	fprintf(f, "pcm.!audioroute_route {\n    type plug\n    slave.pcm \"%s\"\n}\n", pcm);
	fclose(f);
	if (rename(temporary, file) != 0) { perror("rename"); exit(1); }
}

int main(int argc, char **argv) {
	if (argc < 3) { fprintf(stderr, "usage: movetime ROUTE_FILE CYCLES\n"); return 2; }
	int cycles = atoi(argv[2]);
	route(argv[1], "move_a");
	snd_pcm_t *pcm;
	int err = snd_pcm_open(&pcm, "audioroute", SND_PCM_STREAM_PLAYBACK, 0);
	if (err >= 0) err = snd_pcm_set_params(pcm, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, 2, 48000, 1, 40000);
	if (err < 0) { fprintf(stderr, "audioroute: %s\n", snd_strerror(err)); return 1; }
	static short period[480 * 2];
	double *times = calloc(cycles, sizeof(double));
	for (int i = 0; i < cycles; i++) {
		snd_pcm_writei(pcm, period, 480);
		route(argv[1], i % 2 == 0 ? "move_b" : "move_a");
		double start = now_us();
		snd_pcm_sframes_t n = snd_pcm_writei(pcm, period, 480);
		times[i] = now_us() - start;
		if (n != 480) { fprintf(stderr, "write after the move: %s\n", snd_strerror((int)n)); return 1; }
	}
	snd_pcm_close(pcm);
	for (int i = 1; i < cycles; i++)
		for (int j = i; j > 0 && times[j - 1] > times[j]; j--) { double t = times[j]; times[j] = times[j - 1]; times[j - 1] = t; }
	printf("move + one period written: median %.0f us, worst %.0f us (%d moves)\n", times[cycles / 2], times[cycles - 1], cycles);
	return 0;
}
