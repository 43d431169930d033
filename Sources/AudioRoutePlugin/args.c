// The PCM's arguments: category, mode and options, by the names of the spec (AudioRouteCore's).
#include "audioroute_contract.h"
#include "audioroute_plugin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The names and bits come from the contract (audioroute_contract.h, generated from Swift).
static const char *const ar_category_names[] = { AR_CATEGORY_NAMES };
static const char *const ar_mode_names[] = { AR_MODE_NAMES };
static const char *const ar_option_names[] = { AR_OPTION_NAMES };
static const unsigned long ar_option_values[] = { AR_OPTION_VALUES };

const char *ar_name(enum ar_names kind, int index, unsigned long *value) {
	const char *const *names = kind == AR_CATEGORIES ? ar_category_names : kind == AR_MODES ? ar_mode_names : ar_option_names;
	for (int i = 0; i < index; i++)
		if (names[i] == NULL)
			return NULL;
	if (value != NULL)
		*value = kind == AR_OPTIONS ? ar_option_values[index] : 0;
	return names[index];
}

static int known(const char *const names[], const char *name, size_t length) {
	for (int i = 0; names[i] != NULL; i++)
		if (strlen(names[i]) == length && strncmp(names[i], name, length) == 0)
			return i;
	return -1;
}

static int given(const char *value) { return value != NULL && value[0] != '\0'; }

static int pick(char *into, size_t size, const char *const names[], const char *value, const char *what,
		struct ar_args *out) {
	if (known(names, value, strlen(value)) < 0) {
		snprintf(out->error, sizeof(out->error), "unknown %s \"%.60s\"", what, value);
		return -EINVAL;
	}
	snprintf(into, size, "%s", value);
	return 0;
}

int ar_args_resolve(struct ar_args *out, const char *category, const char *mode, const char *options,
		const char *env_category, int capture) {
	memset(out, 0, sizeof(*out));
	const char *chosen = given(category) ? category : given(env_category) ? env_category : capture ? "record" : "playback";
	const char *source = given(category) ? "category" : given(env_category) ? "category (AUDIOROUTE_CATEGORY)" : "category";
	if (pick(out->category, sizeof(out->category), ar_category_names, chosen, source, out) < 0)
		return -EINVAL;
	if (pick(out->mode, sizeof(out->mode), ar_mode_names, given(mode) ? mode : "default", "mode", out) < 0)
		return -EINVAL;
	for (const char *p = given(options) ? options : ""; *p != '\0';) {
		size_t length = strcspn(p, ",+| ");
		if (length > 0) {
			int index = known(ar_option_names, p, length);
			if (index < 0) {
				snprintf(out->error, sizeof(out->error), "unknown option \"%.*s\"", (int)(length > 60 ? 60 : length), p);
				return -EINVAL;
			}
			out->options |= ar_option_values[index];
			out->option_names |= 1UL << index;
		}
		p += length;
		if (*p != '\0')
			p++;
	}
	return 0;
}

int ar_route_file_path(char *buffer, size_t size, const char *configured, const char *xdg_runtime_dir,
		int (*user_exists)(const char *path)) {
	int n;
	if (given(configured)) {
		n = snprintf(buffer, size, "%s", configured);
	} else {
		n = -1;
		if (given(xdg_runtime_dir)) {
			n = snprintf(buffer, size, "%s/" AR_ROUTE_FILE_IN_RUNTIME_DIRECTORY, xdg_runtime_dir);
			if (n >= 0 && (size_t)n < size && !user_exists(buffer))
				n = -1;
		}
		if (n < 0)
			n = snprintf(buffer, size, "%s", AR_ROUTE_FILE_SYSTEM);
	}
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int ar_io_sizes(unsigned int rate, unsigned long buffer_size, const char *duration_us, unsigned long *piece, unsigned long *ahead,
		char *error, size_t error_size) {
	// 10 ms pieces and ten of them ahead, unless the app's session asked for another I/O buffer.
	unsigned long long us = AR_IO_PIECE_DEFAULT_US;
	int status = 0;
	if (given(duration_us)) {
		char *end = NULL;
		errno = 0;
		unsigned long long asked = strtoull(duration_us, &end, 10);
		if (errno != 0 || end == duration_us || *end != '\0' || duration_us[0] == '-' || asked < AR_IO_PIECE_MIN_US || asked > AR_IO_PIECE_MAX_US) {
			snprintf(error, error_size, "AUDIOROUTE_IO_BUFFER_DURATION \"%.40s\" is not a duration of %d to %d microseconds: 10 ms is used",
					duration_us, AR_IO_PIECE_MIN_US, AR_IO_PIECE_MAX_US);
			status = -EINVAL;
		} else {
			us = asked;
		}
	}
	unsigned long frames = (unsigned long)((unsigned long long)rate * us / 1000000ULL);
	if (frames == 0)
		frames = 1;
	unsigned long queue = frames * AR_IO_PIECES_AHEAD;
	*ahead = buffer_size > 0 && queue > buffer_size ? buffer_size : queue;
	*piece = frames > *ahead ? *ahead : frames;
	return status;
}

int ar_preference(const char *name, const char *value, unsigned long minimum, unsigned long maximum, unsigned int *out,
		char *error, size_t error_size) {
	*out = 0;
	if (!given(value))
		return 0;
	char *end = NULL;
	errno = 0;
	unsigned long long asked = strtoull(value, &end, 10);
	if (errno != 0 || end == value || *end != '\0' || value[0] == '-' || (asked != 0 && (asked < minimum || asked > maximum))) {
		snprintf(error, error_size, "%s \"%.40s\" is not a number of %lu to %lu (0 for none): the route's own is used",
				name, value, minimum, maximum);
		return -EINVAL;
	}
	*out = (unsigned int)asked;
	return 0;
}
