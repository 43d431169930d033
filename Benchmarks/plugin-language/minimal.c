// The measuring stick for docs/decisions.md ("The ALSA plugin's language"): the smallest
// ioplug that opens and takes frames (it discards them), in C. minimal.swift is the same in Swift.
#include <alsa/asoundlib.h>
#include <alsa/pcm_external.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct sink {
	snd_pcm_ioplug_t io;
	snd_pcm_uframes_t hw;
};

static int sink_start(snd_pcm_ioplug_t *io) { (void)io; return 0; }
static int sink_stop(snd_pcm_ioplug_t *io) { (void)io; return 0; }

static snd_pcm_sframes_t sink_pointer(snd_pcm_ioplug_t *io) {
	struct sink *s = io->private_data;
	return s->hw % io->buffer_size;
}

static snd_pcm_sframes_t sink_transfer(snd_pcm_ioplug_t *io, const snd_pcm_channel_area_t *areas,
		snd_pcm_uframes_t offset, snd_pcm_uframes_t size) {
	(void)areas; (void)offset;
	struct sink *s = io->private_data;
	s->hw += size;
	return size;
}

static int sink_close(snd_pcm_ioplug_t *io) {
	struct sink *s = io->private_data;
	close(io->poll_fd);
	free(s);
	return 0;
}

static const snd_pcm_ioplug_callback_t callbacks = {
	.start = sink_start, .stop = sink_stop, .pointer = sink_pointer,
	.transfer = sink_transfer, .close = sink_close,
};

SND_PCM_PLUGIN_DEFINE_FUNC(audioroute) {
	(void)root; (void)conf;
	struct sink *s = calloc(1, sizeof(*s));
	if (s == NULL) return -ENOMEM;
	s->io.version = SND_PCM_IOPLUG_VERSION;
	s->io.name = "audioroute (minimal C)";
	s->io.poll_fd = eventfd(0, EFD_CLOEXEC);
	s->io.poll_events = POLLOUT;
	s->io.callback = &callbacks;
	s->io.private_data = s;
	int err = snd_pcm_ioplug_create(&s->io, name, stream, mode);
	if (err < 0) { close(s->io.poll_fd); free(s); return err; }
	static const unsigned int access[] = { SND_PCM_ACCESS_RW_INTERLEAVED };
	static const unsigned int formats[] = { SND_PCM_FORMAT_S16_LE };
	snd_pcm_ioplug_set_param_list(&s->io, SND_PCM_IOPLUG_HW_ACCESS, 1, access);
	snd_pcm_ioplug_set_param_list(&s->io, SND_PCM_IOPLUG_HW_FORMAT, 1, formats);
	snd_pcm_ioplug_set_param_minmax(&s->io, SND_PCM_IOPLUG_HW_CHANNELS, 1, 8);
	snd_pcm_ioplug_set_param_minmax(&s->io, SND_PCM_IOPLUG_HW_RATE, 8000, 192000);
	*pcmp = s->io.pcm;
	return 0;
}
SND_PCM_PLUGIN_SYMBOL(audioroute);
