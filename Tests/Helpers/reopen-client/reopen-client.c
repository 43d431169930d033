// An ALSA client that opens the same PCM several times in one process, as an app that plays one
// sound after another: each time 0.1 s of silence, S16_LE stereo 48 kHz, then drain and close.
// Prints each stream's result ("stream N: 0" or the error) on standard output. Used by the
// plugin's tests (PreferredFormatTests), built by them with cc.
//
//   reopen-client DEVICE COUNT
#include <alsa/asoundlib.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: reopen-client DEVICE COUNT\n");
		return 2;
	}
	static short frames[4800 * 2];
	int failed = 0;
	for (int i = 0, count = atoi(argv[2]); i < count; i++) {
		snd_pcm_t *pcm;
		int err = snd_pcm_open(&pcm, argv[1], SND_PCM_STREAM_PLAYBACK, 0);
		if (err >= 0) {
			if ((err = snd_pcm_set_params(pcm, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, 2, 48000, 1, 100000)) >= 0 &&
					(err = (int)snd_pcm_writei(pcm, frames, 4800)) >= 0)
				err = snd_pcm_drain(pcm);
			snd_pcm_close(pcm);
		}
		printf("stream %d: %s\n", i + 1, err < 0 ? snd_strerror(err) : "0");
		failed |= err < 0;
	}
	return failed;
}
