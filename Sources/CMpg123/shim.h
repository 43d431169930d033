#ifndef AUDIOROUTE_CMPG123_SHIM_H
#define AUDIOROUTE_CMPG123_SHIM_H
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <mpg123.h>

/* Output as 32-bit float, mono or stereo, at any rate libmpg123 decodes. */
static inline int audioroute_mpg123_float_output(mpg123_handle *handle)
{
	const long *rates;
	size_t count;
	int result = mpg123_format_none(handle);
	if (result != MPG123_OK)
		return result;
	mpg123_rates(&rates, &count);
	for (size_t i = 0; i < count; i++) {
		result = mpg123_format(handle, rates[i], MPG123_MONO | MPG123_STEREO, MPG123_ENC_FLOAT_32);
		if (result != MPG123_OK)
			return result;
	}
	return MPG123_OK;
}

/* Bytes in memory as libmpg123's input (MP3s from data); the caller owns both the bytes and
 * this struct, and keeps them until mpg123_close. 0 <= position <= length always. */
struct audioroute_mpg123_memory {
	const unsigned char *bytes;
	off_t length;
	off_t position;
};

/* Copies min(count, length - position) bytes. Computed unsigned, from what is left, so that no
 * sum can overflow: libmpg123 may ask any count up to SIZE_MAX (its own buffer decides), and a
 * count past SSIZE_MAX compared as a signed number would be negative and pass unclamped. The
 * result stays <= SSIZE_MAX so that the signed return value is never negative. */
static inline ssize_t audioroute_mpg123_memory_read(void *user, void *out, size_t count)
{
	struct audioroute_mpg123_memory *memory = user;
	if (memory->position < 0 || memory->position >= memory->length)
		return 0;
	size_t left = (size_t)(memory->length - memory->position);
	size_t n = count < left ? count : left;
	if (n > (size_t)SSIZE_MAX)
		n = (size_t)SSIZE_MAX;
	const unsigned char *from = memory->bytes + memory->position;
	unsigned char *to = out;
	for (size_t i = 0; i < n; i++)
		to[i] = from[i];
	memory->position += (off_t)n;
	return (ssize_t)n;
}

/* Moves within [0, length]; anything else (an unknown whence, a target outside, an offset whose
 * sum would overflow) is -1 and leaves the position. */
static inline off_t audioroute_mpg123_memory_seek(void *user, off_t offset, int whence)
{
	struct audioroute_mpg123_memory *memory = user;
	off_t base;
	switch (whence) {
	case SEEK_SET: base = 0; break;
	case SEEK_CUR: base = memory->position; break;
	case SEEK_END: base = memory->length; break;
	default: return -1;
	}
	/* base is in [0, length]: length - base and -base cannot overflow. */
	if (offset > memory->length - base || offset < -base)
		return -1;
	memory->position = base + offset;
	return memory->position;
}

/* Opens `memory` on `handle`. */
static inline int audioroute_mpg123_open_memory(mpg123_handle *handle, struct audioroute_mpg123_memory *memory)
{
	int result = mpg123_replace_reader_handle(handle, audioroute_mpg123_memory_read, audioroute_mpg123_memory_seek, NULL);
	if (result != MPG123_OK)
		return result;
	return mpg123_open_handle(handle, memory);
}

static const int audioroute_mpg123_seek_set = SEEK_SET;
#endif
