// Gain and silence on a stream's samples (audioroute_mix.h), shared by the ALSA plugin and the
// player. Bytes are read and written one by one: any alignment, little-endian on any host, and no
// libm (the plugin links libasound only), hence the rounding below.
#include "audioroute_mix.h"

#include <float.h>
#include <stdint.h>
#include <string.h>

/// AVAudioSession's suggested duck gain; the player reads it through ar_mix_gain.
static const float duck_gain = 0.3f;

float ar_mix_gain(int ducked, int silenced) {
	if (silenced)
		return 0.0f;
	return ducked ? duck_gain : 1.0f;
}

size_t ar_mix_sample_bytes(enum ar_mix_format format) {
	switch (format) {
	case AR_MIX_U8:
		return 1;
	case AR_MIX_S16_LE:
		return 2;
	case AR_MIX_S24_3LE:
		return 3;
	case AR_MIX_S24_LE:
	case AR_MIX_S32_LE:
	case AR_MIX_FLOAT_LE:
		return 4;
	case AR_MIX_FLOAT64_LE:
		return 8;
	}
	return 0;
}

/// `value` rounded to nearest, ties to even, and clipped to low…high. `value` is finite (the
/// gain is), and within int64_t once clipped.
static int64_t quantize(double value, int64_t low, int64_t high) {
	// Clipping first is the same as after (low and high are integers) and keeps the cast defined.
	if (value <= (double)low)
		return low;
	if (value >= (double)high)
		return high;
	int64_t whole = (int64_t)value; // toward zero
	double fraction = value - (double)whole; // exact: |value| < 2^52
	if (fraction > 0.5 || (fraction == 0.5 && (whole & 1)))
		whole += 1;
	else if (fraction < -0.5 || (fraction == -0.5 && (whole & 1)))
		whole -= 1;
	return whole;
}

static uint64_t load(const unsigned char *at, size_t bytes) {
	uint64_t raw = 0;
	for (size_t i = 0; i < bytes; i++)
		raw |= (uint64_t)at[i] << (8 * i);
	return raw;
}

static void store(unsigned char *at, size_t bytes, uint64_t raw) {
	for (size_t i = 0; i < bytes; i++)
		at[i] = (unsigned char)(raw >> (8 * i));
}

/// A two's complement value of `bits` bits (in the low bits of `raw`) as a signed integer.
static int64_t sign_extend(uint64_t raw, unsigned bits) {
	uint64_t sign = (uint64_t)1 << (bits - 1);
	raw &= (sign << 1) - 1;
	return (int64_t)(raw ^ sign) - (int64_t)sign;
}

/// Signed samples of `bits` bits, each in `bytes` bytes (24 in 4 for S24_LE).
static void scale_signed(unsigned char *at, size_t count, size_t bytes, unsigned bits, double gain) {
	int64_t high = ((int64_t)1 << (bits - 1)) - 1;
	for (size_t i = 0; i < count; i++, at += bytes) {
		int64_t sample = sign_extend(load(at, bytes), bits);
		int64_t scaled = quantize((double)sample * gain, -high - 1, high);
		// Stored as bytes-wide two's complement: S24_LE's top byte gets the sign.
		store(at, bytes, (uint64_t)scaled);
	}
}

void ar_mix_apply(enum ar_mix_format format, void *samples, size_t count, float gain) {
	size_t bytes = ar_mix_sample_bytes(format);
	if (samples == NULL || bytes == 0 || gain == 1.0f)
		return;
	unsigned char *at = samples;
	if (!(gain > 0.0f)) {
		// Silence: the format's own zero (all bits clear for the others, +0.0 included).
		memset(at, format == AR_MIX_U8 ? 0x80 : 0, count * bytes);
		return;
	}
	// +inf would turn a zero sample into NaN; FLT_MAX already saturates every integer format.
	double g = gain > FLT_MAX ? (double)FLT_MAX : (double)gain;
	switch (format) {
	case AR_MIX_U8:
		for (size_t i = 0; i < count; i++)
			at[i] = (unsigned char)(quantize((double)((int)at[i] - 128) * g, -128, 127) + 128);
		return;
	case AR_MIX_S16_LE:
		scale_signed(at, count, 2, 16, g);
		return;
	case AR_MIX_S24_LE:
		scale_signed(at, count, 4, 24, g);
		return;
	case AR_MIX_S24_3LE:
		scale_signed(at, count, 3, 24, g);
		return;
	case AR_MIX_S32_LE:
		scale_signed(at, count, 4, 32, g);
		return;
	case AR_MIX_FLOAT_LE:
		for (size_t i = 0; i < count; i++, at += 4) {
			uint32_t raw = (uint32_t)load(at, 4);
			float sample;
			memcpy(&sample, &raw, sizeof sample);
			sample = (float)((double)sample * g);
			memcpy(&raw, &sample, sizeof raw);
			store(at, 4, raw);
		}
		return;
	case AR_MIX_FLOAT64_LE:
		for (size_t i = 0; i < count; i++, at += 8) {
			uint64_t raw = load(at, 8);
			double sample;
			memcpy(&sample, &raw, sizeof sample);
			sample *= g;
			memcpy(&raw, &sample, sizeof raw);
			store(at, 8, raw);
		}
		return;
	}
}
