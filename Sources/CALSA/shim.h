#ifndef AUDIOROUTE_CALSA_SHIM_H
#define AUDIOROUTE_CALSA_SHIM_H
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <alsa/asoundlib.h>
/* The UCM API (snd_use_case_*): asoundlib.h does not include it. */
#include <alsa/use-case.h>

/* snd_use_case_get hands back a malloc'd string the caller frees with free();
 * AudioRouteALSA does not import Glibc (only AudioRouteSystem does). */
static inline void audioroute_ucm_free_string(const char *value) { free((void *)value); }

/* The mixer's perceptual scale (AudioRouteALSA's ALSAMixerVolume): the cube root of the amplitude
 * of a gain in hundredths of a dB, and back. libm's, which AudioRouteALSA cannot import. */
static inline double audioroute_cube_root_amplitude(double hundredths) { return pow(10.0, hundredths / 6000.0); }
static inline double audioroute_hundredths_of_cube_root_amplitude(double level) { return 6000.0 * log10(level); }

/* An open PCM's channel map as positions (SND_CHMAP_*): snd_pcm_get_chmap hands back a malloc'd
 * map the caller frees. Fills up to `space` positions; returns the channel count (which may be
 * more than `space`), 0 when the PCM has no map. */
static inline int audioroute_pcm_chmap_positions(snd_pcm_t *pcm, unsigned int *positions, unsigned int space)
{
	snd_pcm_chmap_t *map = snd_pcm_get_chmap(pcm);
	if (map == NULL)
		return 0;
	int count = (int)map->channels;
	for (unsigned int i = 0; i < map->channels && i < space; i++)
		positions[i] = map->pos[i];
	free(map);
	return count;
}

/* The shared halves of the two poll-descriptor functions below: the count clamped to the
 * 8 they hold and the caller's space, and the struct pollfd copied out as plain numbers. */
static inline int audioroute_poll_fds_copy(const struct pollfd *pfds, int count, int *fds, short *events)
{
	for (int i = 0; i < count; i++) {
		fds[i] = pfds[i].fd;
		events[i] = pfds[i].events;
	}
	return count;
}

static inline int audioroute_poll_fds_limit(int count, unsigned int space)
{
	if (count > 8)
		count = 8;
	if ((unsigned int)count > space)
		count = (int)space;
	return count;
}

/* A control handle's poll descriptors as plain numbers: struct pollfd is Glibc's, which
 * AudioRouteALSA does not import. Fills up to `space` (at most 8) descriptors and the
 * events to wait for; returns how many, or a negative error code. */
static inline int audioroute_ctl_poll_fds(snd_ctl_t *ctl, int *fds, short *events, unsigned int space)
{
	struct pollfd pfds[8];
	int count = snd_ctl_poll_descriptors_count(ctl);
	if (count <= 0)
		return count;
	count = snd_ctl_poll_descriptors(ctl, pfds, (unsigned int)audioroute_poll_fds_limit(count, space));
	return audioroute_poll_fds_copy(pfds, count, fds, events);
}

/* A simple mixer's poll descriptors as plain numbers, as audioroute_ctl_poll_fds. */
static inline int audioroute_mixer_poll_fds(snd_mixer_t *mixer, int *fds, short *events, unsigned int space)
{
	struct pollfd pfds[8];
	int count = snd_mixer_poll_descriptors_count(mixer);
	if (count <= 0)
		return count;
	count = snd_mixer_poll_descriptors(mixer, pfds, (unsigned int)audioroute_poll_fds_limit(count, space));
	return audioroute_poll_fds_copy(pfds, count, fds, events);
}

/* libasound's error messages (snd_lib_error_set_handler) to a function Swift can be: the
 * handler is variadic, which Swift cannot define, so this one formats the message and hands it
 * on. NULL restores libasound's own (stderr). */
typedef void (*audioroute_alsa_message_fn)(int err, const char *message);
/* Where the messages go: a function's static, which Swift's importer emits with the function
 * (a file-scope static in a header it does not). */
static inline audioroute_alsa_message_fn *audioroute_alsa_message_slot(void)
{
	static audioroute_alsa_message_fn target;
	return &target;
}
static inline void audioroute_alsa_error_handler(const char *file, int line, const char *function, int err, const char *fmt, ...)
{
	char text[512];
	va_list arguments;
	(void)file;
	(void)line;
	(void)function;
	va_start(arguments, fmt);
	vsnprintf(text, sizeof text, fmt, arguments);
	va_end(arguments);
	if (*audioroute_alsa_message_slot() != NULL)
		(*audioroute_alsa_message_slot())(err, text);
}
static inline void audioroute_alsa_set_message_target(audioroute_alsa_message_fn target)
{
	*audioroute_alsa_message_slot() = target;
	snd_lib_error_set_handler(target != NULL ? audioroute_alsa_error_handler : NULL);
}

/* SND_CTL_EVENT_MASK_REMOVE is (~0U), which Swift does not import. */
static const unsigned int audioroute_ctl_event_mask_remove = SND_CTL_EVENT_MASK_REMOVE;
#endif
