#ifndef AUDIOROUTE_CMPG123_SHIM_H
#define AUDIOROUTE_CMPG123_SHIM_H
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

/* Bytes in memory as libmpg123's input (AudioPlayer(data:)); the caller owns both the bytes
 * and this struct, and keeps them until mpg123_close. */
struct audioroute_mpg123_memory {
	const unsigned char *bytes;
	off_t length;
	off_t position;
};

static inline ssize_t audioroute_mpg123_memory_read(void *user, void *out, size_t count)
{
	struct audioroute_mpg123_memory *memory = user;
	off_t left = memory->length - memory->position;
	if ((off_t)count > left)
		count = (size_t)left;
	const unsigned char *from = memory->bytes + memory->position;
	unsigned char *to = out;
	for (size_t i = 0; i < count; i++)
		to[i] = from[i];
	memory->position += (off_t)count;
	return (ssize_t)count;
}

static inline off_t audioroute_mpg123_memory_seek(void *user, off_t offset, int whence)
{
	struct audioroute_mpg123_memory *memory = user;
	off_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? memory->position : memory->length;
	off_t target = base + offset;
	if (target < 0 || target > memory->length)
		return -1;
	memory->position = target;
	return target;
}

/* Opens `memory` on `handle`. */
static inline int audioroute_mpg123_open_memory(mpg123_handle *handle, struct audioroute_mpg123_memory *memory)
{
	int result = mpg123_replace_reader_handle(handle, audioroute_mpg123_memory_read, audioroute_mpg123_memory_seek, NULL);
	if (result != MPG123_OK)
		return result;
	return mpg123_open_handle(handle, memory);
}

static const int audioroute_seek_set = SEEK_SET;
#endif
