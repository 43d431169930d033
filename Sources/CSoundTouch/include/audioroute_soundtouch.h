// SoundTouch (C++ only) behind a C ABI, so that Swift calls C and never C++ (docs/decisions.md,
// "Rate keeps the pitch: SoundTouch"). Interleaved float frames; every function that can fail
// returns a negative errno and never lets a C++ exception out.
#ifndef AUDIOROUTE_SOUNDTOUCH_H
#define AUDIOROUTE_SOUNDTOUCH_H

#ifdef __cplusplus
extern "C" {
#endif

/// One SoundTouch instance.
typedef struct ar_soundtouch ar_soundtouch;

/// The sample rates accepted: SoundTouch sizes its windows in milliseconds of the rate (too
/// short below 8 kHz), and libSoundTouch 2.3.2 throws "Excessive samplerate" above 192 kHz.
#define AR_SOUNDTOUCH_MIN_RATE 8000
#define AR_SOUNDTOUCH_MAX_RATE 192000
/// The channels accepted (SoundTouch's own limit is 16; the player stretches stereo).
#define AR_SOUNDTOUCH_MAX_CHANNELS 16
/// The tempos accepted: SoundTouch's own range is wider, the player's is 0.5…2.
#define AR_SOUNDTOUCH_MIN_TEMPO 0.1
#define AR_SOUNDTOUCH_MAX_TEMPO 10.0

/// Creates an instance into `*out`: 0, -EINVAL (a rate, channel count or tempo outside the
/// ranges above), -ENOMEM.
int ar_soundtouch_create(unsigned sample_rate, unsigned channels, double tempo, ar_soundtouch **out);
/// Frees an instance (NULL is ignored).
void ar_soundtouch_destroy(ar_soundtouch *st);
/// Source frames per output frame, from the next frames put: 0 or -EINVAL.
int ar_soundtouch_set_tempo(ar_soundtouch *st, double tempo);
/// Feeds `frames` interleaved frames: 0, -EINVAL (too many at once), -ENOMEM.
int ar_soundtouch_put(ar_soundtouch *st, const float *interleaved, unsigned frames);
/// Moves up to `max_frames` output frames into `interleaved`: the frames moved (≥ 0).
int ar_soundtouch_receive(ar_soundtouch *st, float *interleaved, unsigned max_frames);
/// Output frames ready to receive.
int ar_soundtouch_available(const ar_soundtouch *st);
/// Source frames one processing step takes (SoundTouch's nominal input sequence).
int ar_soundtouch_required(ar_soundtouch *st);
/// Pushes out what the source's last frames still make, trimmed to the source's length at the
/// tempos it was stretched at: 0 or -ENOMEM. Put nothing after it but after a clear.
int ar_soundtouch_flush(ar_soundtouch *st);
/// Forgets every frame it holds, input and output (a seek).
void ar_soundtouch_clear(ar_soundtouch *st);

#ifdef __cplusplus
}
#endif

#endif
