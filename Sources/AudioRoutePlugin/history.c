// The last frames a playback stream forwarded (audioroute_plugin.h): what a move replays on
// the new device of what the old one had not played yet.
#include "audioroute_plugin.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int ar_history_reserve(struct ar_history *h, size_t frames, size_t frame_bytes) {
	size_t bytes = frames * frame_bytes;
	if (frame_bytes != 0 && bytes / frame_bytes != frames)
		return -ENOMEM;
	if (bytes > h->allocated) {
		char *grown = realloc(h->bytes, bytes);
		if (grown == NULL)
			return -ENOMEM;
		h->bytes = grown;
		h->allocated = bytes;
	}
	h->capacity = frames;
	h->frame_bytes = frame_bytes;
	ar_history_clear(h);
	return 0;
}

void ar_history_clear(struct ar_history *h) { h->filled = h->end = 0; }

void ar_history_remember(struct ar_history *h, const void *frames, size_t count) {
	if (h->capacity == 0)
		return;
	const char *from = frames;
	if (count > h->capacity) {
		from += (count - h->capacity) * h->frame_bytes;
		count = h->capacity;
	}
	while (count > 0) {
		size_t chunk = h->capacity - h->end < count ? h->capacity - h->end : count;
		memcpy(h->bytes + h->end * h->frame_bytes, from, chunk * h->frame_bytes);
		h->end = (h->end + chunk) % h->capacity;
		h->filled = h->filled + chunk > h->capacity ? h->capacity : h->filled + chunk;
		from += chunk * h->frame_bytes;
		count -= chunk;
	}
}

size_t ar_history_last(const struct ar_history *h, size_t count, const void **first, size_t *first_count,
		const void **second, size_t *second_count) {
	if (count > h->filled)
		count = h->filled;
	*first = *second = h->bytes;
	*first_count = *second_count = 0;
	if (count == 0)
		return 0;
	size_t start = (h->end + h->capacity - count) % h->capacity;
	*first = h->bytes + start * h->frame_bytes;
	*first_count = h->capacity - start < count ? h->capacity - start : count;
	*second_count = count - *first_count;
	return count;
}

void ar_history_free(struct ar_history *h) {
	free(h->bytes);
	memset(h, 0, sizeof(*h));
}
