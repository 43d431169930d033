// What the tower's decisions do to a stream's samples, once for the `audioroute` ALSA plugin
// (C, built into its .so by scripts/build-alsa-plugin) and the Swift player (AudioPlayer, through
// PlaybackEngine): the session's gain (1, ducked, silenced) and applying it to samples. No
// libasound: the formats are this header's own, named as ALSA names them.
#ifndef AUDIOROUTE_MIX_H
#define AUDIOROUTE_MIX_H

#include <stddef.h>

// None of this is exported from the plugin: in an arbitrary process, only alsa-lib's two symbols are.
#pragma GCC visibility push(hidden)

/// Interleaved sample formats, little-endian whatever the host.
enum ar_mix_format {
	/// Unsigned 8 bits; its zero (silence) is 0x80.
	AR_MIX_U8,
	AR_MIX_S16_LE,
	/// 24 bits in the low three bytes of 32 (ALSA's S24_LE); the top byte is written as the sign's.
	AR_MIX_S24_LE,
	/// 24 bits in three bytes.
	AR_MIX_S24_3LE,
	AR_MIX_S32_LE,
	/// IEEE 754 single precision.
	AR_MIX_FLOAT_LE,
	/// IEEE 754 double precision (a WAV file the player plays as it is).
	AR_MIX_FLOAT64_LE,
};

/// The gain a session's stream plays at: 0 while silenced (silent mode on an ambient or
/// soloAmbient session), else the duck gain 0.3 while ducked (the value AVAudioSession's
/// documentation suggests; the one place it is set), else 1.
float ar_mix_gain(int ducked, int silenced);

/// Bytes of one sample of `format`; 0 for a value that is not a format.
size_t ar_mix_sample_bytes(enum ar_mix_format format);

/// Scales `count` samples (frames × channels) at `samples` by `gain`, in place.
///
/// - 1 leaves the bytes as they are; 0 (or less, or NaN) writes the format's zero (0x80 for U8).
/// - Integer samples are scaled as values in −1…1 (divided by 2^(bits−1), U8 around 0x80) in
///   double precision, rounded to nearest (ties to even) and clipped to the format's range, so a
///   gain above 1 saturates rather than wrapping. AudioRouteCore's renderer does the same, bit for bit.
/// - Float samples are multiplied (in double precision, then rounded once to the format) and not
///   clipped: a float stream keeps its headroom, and what converts it for the device clips.
/// - `samples` needs no alignment; a format that is not one leaves the bytes alone.
void ar_mix_apply(enum ar_mix_format format, void *samples, size_t count, float gain);

#pragma GCC visibility pop

#endif
