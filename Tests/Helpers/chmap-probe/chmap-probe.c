// What a PCM says of its channel maps, as a player asks before and after choosing its layout
// (mpv, GStreamer, PipeWire's ALSA source): snd_pcm_query_chmaps after the open, then
// snd_pcm_get_chmap after setting CHANNELS channels. One line each on standard output:
//   query <type> <map>      for each map offered ("query none" if none)
//   get <map>               the map in use ("get none" if none)
// Used by the plugin's tests (AplayTests), built by them with cc.
//
//   chmap-probe DEVICE CHANNELS
#include <alsa/asoundlib.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: chmap-probe DEVICE CHANNELS\n");
		return 2;
	}
	snd_pcm_t *pcm;
	int err = snd_pcm_open(&pcm, argv[1], SND_PCM_STREAM_PLAYBACK, 0);
	if (err < 0) {
		fprintf(stderr, "chmap-probe: %s: %s\n", argv[1], snd_strerror(err));
		return 1;
	}
	char text[256];
	snd_pcm_chmap_query_t **maps = snd_pcm_query_chmaps(pcm);
	if (maps == NULL)
		printf("query none\n");
	for (int i = 0; maps != NULL && maps[i] != NULL; i++) {
		snd_pcm_chmap_print(&maps[i]->map, sizeof(text), text);
		printf("query %s %s\n", snd_pcm_chmap_type_name(maps[i]->type), text);
	}
	snd_pcm_free_chmaps(maps);
	err = snd_pcm_set_params(pcm, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, (unsigned int)atoi(argv[2]), 48000, 1, 100000);
	if (err < 0) {
		fprintf(stderr, "chmap-probe: set_params: %s\n", snd_strerror(err));
		return 1;
	}
	snd_pcm_chmap_t *map = snd_pcm_get_chmap(pcm);
	if (map == NULL) {
		printf("get none\n");
	} else {
		snd_pcm_chmap_print(map, sizeof(text), text);
		printf("get %s\n", text);
		free(map);
	}
	snd_pcm_close(pcm);
	return 0;
}
