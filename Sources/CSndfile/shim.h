#ifndef AUDIOROUTE_CSNDFILE_SHIM_H
#define AUDIOROUTE_CSNDFILE_SHIM_H
#include <sndfile.h>

/* Bytes in memory as a libsndfile virtual file (AudioPlayer(data:)). The caller owns both the
 * bytes and this struct, and keeps them until sf_close: libsndfile reads through them. The
 * callbacks are here, not in Swift, because sf_open_virtual wants a table of C functions that
 * outlives the call (a static one). */
struct audioroute_sf_memory {
	const unsigned char *bytes;
	sf_count_t length;
	sf_count_t position;
};

static inline sf_count_t audioroute_sf_memory_length(void *user) { return ((struct audioroute_sf_memory *)user)->length; }

static inline sf_count_t audioroute_sf_memory_seek(sf_count_t offset, int whence, void *user)
{
	struct audioroute_sf_memory *memory = user;
	sf_count_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? memory->position : memory->length;
	sf_count_t target = base + offset;
	/* Outside the bytes: refused, the position stays (as lseek does for a negative one). */
	if (target < 0 || target > memory->length)
		return -1;
	memory->position = target;
	return target;
}

static inline sf_count_t audioroute_sf_memory_read(void *out, sf_count_t count, void *user)
{
	struct audioroute_sf_memory *memory = user;
	sf_count_t left = memory->length - memory->position;
	if (count > left)
		count = left;
	if (count <= 0)
		return 0;
	const unsigned char *from = memory->bytes + memory->position;
	unsigned char *to = out;
	for (sf_count_t i = 0; i < count; i++)
		to[i] = from[i];
	memory->position += count;
	return count;
}

/* Read-only: writing is refused. */
static inline sf_count_t audioroute_sf_memory_write(const void *in, sf_count_t count, void *user)
{
	(void)in;
	(void)count;
	(void)user;
	return 0;
}

static inline sf_count_t audioroute_sf_memory_tell(void *user) { return ((struct audioroute_sf_memory *)user)->position; }

/* Opens `memory` for reading; NULL on failure (sf_strerror(NULL) says why). */
static inline SNDFILE *audioroute_sf_open_memory(struct audioroute_sf_memory *memory, SF_INFO *info)
{
	static SF_VIRTUAL_IO io = {
		audioroute_sf_memory_length, audioroute_sf_memory_seek, audioroute_sf_memory_read,
		audioroute_sf_memory_write, audioroute_sf_memory_tell,
	};
	return sf_open_virtual(&io, SFM_READ, info, memory);
}
#endif
