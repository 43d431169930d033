/* A control device with no hardware behind it (docs/ucm.md, "Opening the files
 * without the hardware"): `audioroute ports --alsa-info` opens a report's cards'
 * UCM profiles with it (docs/alsa-info.md), and the UCM tests and benches run
 * profiles on machines' cards with it. libasound's external control plugin API
 * (snd_ctl_ext) answers the card's identity and, when the configuration lists
 * them, the card's controls. Built by scripts/build-alsa-plugin beside the
 * audioroute PCM plugin (and by scripts/ucm-fake-cards); not a SwiftPM target. UCM needs that identity: ${CardId}, ${CardDriver} and
 * ${CardLongName} come from snd_ctl_card_info, and "hw:" names are the only
 * way to hand snd_use_case_mgr_open a card that the kernel does not have.
 * The controls let UCM's sequences run (cset reads, then writes, each
 * control it names) and let a test see what they wrote.
 *
 * Built as: cc -DPIC -shared -fPIC -o libasound_module_ctl_audioroute_fakecard.so fake-card-ctl.c -lasound
 * Used as:  ctl.!hw { @args [ CARD ] @args.CARD { type string } type audioroute_fakecard id $CARD }
 * Card <id> is described by the configuration's audioroute_fakecard.<id>:
 *
 *   audioroute_fakecard.<id> {
 *       driver "…" name "…" longname "…"    # each defaults to <id>
 *       mixername "…" components "…"        # default empty (components: see below)
 *       number 0                             # the card index it reports (${CardNumber}); hw:<number>
 *                                            # opens it too when no card is described as <number>
 *       state "/dir"                         # optional, see below
 *       controls [                           # optional; none by default
 *           { name "Line Out Playback Switch" type boolean }          # iface mixer, index 0, count 1
 *           { name "Line Out Playback Volume" type integer min 0 max 31 value [ 20 20 ] count 2 }
 *           { name "AIF1 DA0 Stereo Playback Route" type enumerated items [ "Stereo" "Mix Mono" ] value "Mix Mono" }
 *           { name "IEC958 Playback Switch" index 1 value on }
 *           { name "Headphone Jack" iface card type boolean jack true }
 *       ]
 *   }
 *
 * Controls are a list (a card may have two controls of one name, told apart by iface or
 * index), or, as older files have them, a compound keyed by name. iface is card, mixer or
 * pcm; value gives the initial values (booleans on/off, integers, enumerated item names),
 * one for every channel or one for all; they start at 0 (off, the first item) otherwise.
 *
 * Components: snd_ctl_ext_t has no components field (alsa-lib fills the card info's from
 * id, driver, name, longname and mixername only), and UCM profiles test
 * ${CardComponents} (sof-soundwire's "spk:rt1308", sof-hda-dsp's "cfg-dmics:2", USB ids).
 * So the plugin wraps the handle's card_info operation: it copies alsa-lib's table of
 * operations (private, src/control/control_local.h: 29 entries up to 1.2.9, 32 since
 * 1.2.10), replaces card_info with one that calls the original and then writes the
 * components, and checks the result through the public accessors. An alsa-lib whose layout
 * it does not know, or a check that fails, makes a card with components fail to open with
 * a message, rather than answer without them.
 *
 * The state directory is shared by every handle on the card, in every process:
 * - every write to a control appends "<name>=<value>" to <dir>/writes (a
 *   boolean's values as on/off, an integer's as numbers, an enumerated one's
 *   as item names; several values joined by ","), whether it changed or not;
 * - a "jack" control's value is the file <dir>/<name>: "1" is plugged,
 *   anything else (or no file) unplugged (a card without a state directory
 *   keeps its jacks' configured values: a report's card, as it was). The plugin watches the directory
 *   (inotify, its poll descriptor): each time such a file is written (closed
 *   after writing, or renamed into place), an event with
 *   SND_CTL_EVENT_MASK_VALUE names the control, whether the value changed or
 *   not. (The kernel signals changes only; this is harsher, so that a test
 *   sees the reader tell a change itself.)
 * - a control named by a line of <dir>/refuse refuses writes (EIO), for the
 *   tests of a failing UCM step.
 * Other controls keep their values in the handle (starting at 0). */
#include <alsa/asoundlib.h>
#include <alsa/control_external.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#define MAX_VALUES 16

struct control {
	char name[44]; /* SNDRV_CTL_ELEM_ID_NAME_MAXLEN */
	snd_ctl_elem_iface_t iface;
	unsigned int index;
	int type; /* SND_CTL_ELEM_TYPE_BOOLEAN, _INTEGER or _ENUMERATED */
	unsigned int count;
	long min, max;
	char **items;
	unsigned int item_count;
	int jack;
	long values[MAX_VALUES];
	int pending; /* a jack whose file was written since its last event */
};

struct fake_card {
	snd_ctl_ext_t ext;
	struct control *controls;
	unsigned int count;
	char state[PATH_MAX];
	char components[128];
	/* The handle's operations with card_info wrapped (see "Components" above). */
	void *ops[32];
	int (*card_info)(snd_ctl_t *handle, snd_ctl_card_info_t *info);
};

static struct fake_card *card_of(snd_ctl_ext_t *ext) { return ext->private_data; }

static struct control *control_of(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key)
{
	struct fake_card *card = card_of(ext);
	return key < card->count ? &card->controls[key] : NULL;
}

/* A jack's value from its file in the state directory. */
static int jack_value(struct fake_card *card, const struct control *c)
{
	char path[PATH_MAX + 64], text[8] = "";
	if (card->state[0] == '\0')
		return 0;
	snprintf(path, sizeof path, "%s/%s", card->state, c->name);
	FILE *file = fopen(path, "r");
	if (file == NULL)
		return 0;
	size_t n = fread(text, 1, sizeof text - 1, file);
	fclose(file);
	text[n] = '\0';
	return text[0] == '1';
}

/* Appends "<name>=<values>" to <state>/writes in one write(2) (O_APPEND: the
 * lines of several handles and processes interleave whole). */
static void record_write(struct fake_card *card, const struct control *c)
{
	char line[1024];
	size_t used;
	if (card->state[0] == '\0')
		return;
	used = (size_t)snprintf(line, sizeof line, "%s=", c->name);
	for (unsigned int i = 0; i < c->count && used < sizeof line; i++) {
		const char *separator = i ? "," : "";
		long v = c->values[i];
		if (c->type == SND_CTL_ELEM_TYPE_BOOLEAN)
			used += (size_t)snprintf(line + used, sizeof line - used, "%s%s", separator, v ? "on" : "off");
		else if (c->type == SND_CTL_ELEM_TYPE_ENUMERATED && v >= 0 && (unsigned long)v < c->item_count)
			used += (size_t)snprintf(line + used, sizeof line - used, "%s%s", separator, c->items[v]);
		else
			used += (size_t)snprintf(line + used, sizeof line - used, "%s%ld", separator, v);
	}
	if (used >= sizeof line - 1)
		used = sizeof line - 2;
	line[used++] = '\n';
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/writes", card->state);
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, used) < 0)
		SNDERR("audioroute_fakecard: cannot write %s", path);
	close(fd);
}

static int elem_count(snd_ctl_ext_t *ext) { return (int)card_of(ext)->count; }

static int elem_list(snd_ctl_ext_t *ext, unsigned int offset, snd_ctl_elem_id_t *id)
{
	struct control *c = control_of(ext, offset);
	if (c == NULL)
		return -EINVAL;
	snd_ctl_elem_id_set_interface(id, c->iface);
	snd_ctl_elem_id_set_name(id, c->name);
	snd_ctl_elem_id_set_index(id, c->index);
	return 0;
}

static snd_ctl_ext_key_t find_elem(snd_ctl_ext_t *ext, const snd_ctl_elem_id_t *id)
{
	struct fake_card *card = card_of(ext);
	const char *name = snd_ctl_elem_id_get_name(id);
	unsigned int numid = snd_ctl_elem_id_get_numid(id);
	if (numid > 0 && numid <= card->count)
		return numid - 1;
	for (unsigned int i = 0; i < card->count; i++)
		if (card->controls[i].iface == snd_ctl_elem_id_get_interface(id) && card->controls[i].index == snd_ctl_elem_id_get_index(id)
		    && !strcmp(card->controls[i].name, name))
			return i;
	return SND_CTL_EXT_KEY_NOT_FOUND;
}

static int get_attribute(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, int *type, unsigned int *acc, unsigned int *count)
{
	struct control *c = control_of(ext, key);
	if (c == NULL)
		return -EINVAL;
	*type = c->type;
	*acc = c->jack ? SND_CTL_EXT_ACCESS_READ : SND_CTL_EXT_ACCESS_READWRITE;
	*count = c->count;
	return 0;
}

static int get_integer_info(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, long *imin, long *imax, long *istep)
{
	struct control *c = control_of(ext, key);
	if (c == NULL)
		return -EINVAL;
	*imin = c->min;
	*imax = c->max;
	*istep = 1;
	return 0;
}

static int get_enumerated_info(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, unsigned int *items)
{
	struct control *c = control_of(ext, key);
	if (c == NULL)
		return -EINVAL;
	*items = c->item_count;
	return 0;
}

static int get_enumerated_name(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, unsigned int item, char *name, size_t max)
{
	struct control *c = control_of(ext, key);
	if (c == NULL || item >= c->item_count)
		return -EINVAL;
	snprintf(name, max, "%s", c->items[item]);
	return 0;
}

static int read_integer(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, long *value)
{
	struct control *c = control_of(ext, key);
	if (c == NULL)
		return -EINVAL;
	if (c->jack && card_of(ext)->state[0] != '\0')
		c->values[0] = jack_value(card_of(ext), c);
	for (unsigned int i = 0; i < c->count; i++)
		value[i] = c->values[i];
	return 0;
}

static int read_enumerated(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, unsigned int *items)
{
	struct control *c = control_of(ext, key);
	if (c == NULL)
		return -EINVAL;
	for (unsigned int i = 0; i < c->count; i++)
		items[i] = (unsigned int)c->values[i];
	return 0;
}

/* Whether <state>/refuse names the control. */
static int refused(struct fake_card *card, const struct control *c)
{
	char path[PATH_MAX + 16], line[256];
	int found = 0;
	if (card->state[0] == '\0')
		return 0;
	snprintf(path, sizeof path, "%s/refuse", card->state);
	FILE *file = fopen(path, "r");
	if (file == NULL)
		return 0;
	while (!found && fgets(line, sizeof line, file) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		found = !strcmp(line, c->name);
	}
	fclose(file);
	return found;
}

/* Stores and records a write; 1 when a value changed, as the kernel answers. */
static int store(snd_ctl_ext_t *ext, struct control *c, const long *values)
{
	int changed = 0;
	if (refused(card_of(ext), c))
		return -EIO;
	for (unsigned int i = 0; i < c->count; i++) {
		changed |= c->values[i] != values[i];
		c->values[i] = values[i];
	}
	record_write(card_of(ext), c);
	return changed;
}

static int write_integer(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, long *value)
{
	struct control *c = control_of(ext, key);
	if (c == NULL || c->jack)
		return -EINVAL;
	for (unsigned int i = 0; i < c->count; i++)
		if (value[i] < c->min || value[i] > c->max)
			return -EINVAL;
	return store(ext, c, value);
}

static int write_enumerated(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, unsigned int *items)
{
	struct control *c = control_of(ext, key);
	long values[MAX_VALUES];
	if (c == NULL)
		return -EINVAL;
	for (unsigned int i = 0; i < c->count; i++) {
		if (items[i] >= c->item_count)
			return -EINVAL;
		values[i] = items[i];
	}
	return store(ext, c, values);
}

/* One written jack per call, after draining the inotify descriptor. */
static int read_event(snd_ctl_ext_t *ext, snd_ctl_elem_id_t *id, unsigned int *event_mask)
{
	struct fake_card *card = card_of(ext);
	char buffer[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;
	while (ext->poll_fd >= 0 && (n = read(ext->poll_fd, buffer, sizeof buffer)) > 0) {
		for (char *p = buffer; p < buffer + n;) {
			const struct inotify_event *event = (const struct inotify_event *)p;
			for (unsigned int i = 0; event->len > 0 && i < card->count; i++)
				if (card->controls[i].jack && !strcmp(card->controls[i].name, event->name))
					card->controls[i].pending = 1;
			p += sizeof *event + event->len;
		}
	}
	for (unsigned int i = 0; i < card->count; i++) {
		struct control *c = &card->controls[i];
		if (!c->pending)
			continue;
		c->pending = 0;
		snd_ctl_elem_id_set_numid(id, i + 1);
		snd_ctl_elem_id_set_interface(id, c->iface);
		snd_ctl_elem_id_set_name(id, c->name);
		snd_ctl_elem_id_set_index(id, c->index);
		*event_mask = SND_CTL_EVENT_MASK_VALUE;
		return 1;
	}
	return -EAGAIN;
}

static void close_ext(snd_ctl_ext_t *ext)
{
	struct fake_card *card = card_of(ext);
	if (ext->poll_fd >= 0)
		close(ext->poll_fd);
	for (unsigned int i = 0; i < card->count; i++) {
		for (unsigned int j = 0; j < card->controls[i].item_count; j++)
			free(card->controls[i].items[j]);
		free(card->controls[i].items);
	}
	free(card->controls);
	free(card);
}

static const snd_ctl_ext_callback_t callbacks = {
	.elem_count = elem_count, .elem_list = elem_list, .find_elem = find_elem,
	.get_attribute = get_attribute, .get_integer_info = get_integer_info,
	.get_enumerated_info = get_enumerated_info, .get_enumerated_name = get_enumerated_name,
	.read_integer = read_integer, .read_enumerated = read_enumerated,
	.write_integer = write_integer, .write_enumerated = write_enumerated,
	.read_event = read_event, .close = close_ext,
};

/* The string at audioroute_fakecard.<id>.<key>, or fallback. */
static const char *identity(snd_config_t *root, const char *id, const char *key, const char *fallback)
{
	char path[128];
	snd_config_t *node;
	const char *value;
	snprintf(path, sizeof path, "audioroute_fakecard.%s.%s", id, key);
	if (snd_config_search(root, path, &node) < 0 || snd_config_get_string(node, &value) < 0)
		return fallback;
	return value;
}

/* A value of a control as the configuration gives it: on/off (or a boolean), a number, an item. */
static int parse_value(const struct control *c, snd_config_t *n, long *value)
{
	const char *text;
	long number;
	if (snd_config_get_integer(n, &number) >= 0) {
		*value = number;
		return 0;
	}
	if (snd_config_get_string(n, &text) < 0)
		return -EINVAL;
	if (c->type == SND_CTL_ELEM_TYPE_ENUMERATED) {
		for (unsigned int i = 0; i < c->item_count; i++)
			if (!strcmp(c->items[i], text)) {
				*value = i;
				return 0;
			}
		return -EINVAL;
	}
	if (c->type == SND_CTL_ELEM_TYPE_BOOLEAN) {
		int on = snd_config_get_bool_ascii(text);
		if (on < 0)
			return -EINVAL;
		*value = on;
		return 0;
	}
	char *end;
	*value = strtol(text, &end, 10);
	return *end == '\0' && end != text ? 0 : -EINVAL;
}

/* One control: an entry of audioroute_fakecard.<id>.controls, named by its "name" field or,
 * in a compound keyed by name, by its id. Values are read after the rest (they need the
 * type and the items). */
static int parse_control(snd_config_t *node, struct control *c, int named_by_id)
{
	snd_config_iterator_t i, next;
	const char *name = NULL;
	snd_config_t *values = NULL;
	memset(c, 0, sizeof *c);
	if (named_by_id && snd_config_get_id(node, &name) < 0)
		return -EINVAL;
	c->iface = SND_CTL_ELEM_IFACE_MIXER;
	c->type = SND_CTL_ELEM_TYPE_BOOLEAN;
	c->count = 1;
	c->max = 1;
	snd_config_for_each(i, next, node) {
		snd_config_t *n = snd_config_iterator_entry(i);
		const char *key, *text;
		long number;
		if (snd_config_get_id(n, &key) < 0)
			continue;
		if (!strcmp(key, "name") && snd_config_get_string(n, &text) >= 0) {
			name = text;
		} else if (!strcmp(key, "iface") && snd_config_get_string(n, &text) >= 0) {
			c->iface = !strcmp(text, "card") ? SND_CTL_ELEM_IFACE_CARD : !strcmp(text, "pcm") ? SND_CTL_ELEM_IFACE_PCM
				: SND_CTL_ELEM_IFACE_MIXER;
		} else if (!strcmp(key, "index") && snd_config_get_integer(n, &number) >= 0 && number >= 0) {
			c->index = (unsigned int)number;
		} else if (!strcmp(key, "type") && snd_config_get_string(n, &text) >= 0) {
			c->type = !strcmp(text, "integer") ? SND_CTL_ELEM_TYPE_INTEGER
				: !strcmp(text, "enumerated") ? SND_CTL_ELEM_TYPE_ENUMERATED : SND_CTL_ELEM_TYPE_BOOLEAN;
		} else if (!strcmp(key, "count") && snd_config_get_integer(n, &number) >= 0) {
			if (number < 1 || number > MAX_VALUES) {
				SNDERR("audioroute_fakecard: control %s: count %ld out of range (1 to %d)", name ? name : "?", number, MAX_VALUES);
				return -EINVAL;
			}
			c->count = (unsigned int)number;
		} else if (!strcmp(key, "min") && snd_config_get_integer(n, &number) >= 0) {
			c->min = number;
		} else if (!strcmp(key, "max") && snd_config_get_integer(n, &number) >= 0) {
			c->max = number;
		} else if (!strcmp(key, "jack")) {
			c->jack = snd_config_get_bool(n) > 0;
		} else if (!strcmp(key, "value")) {
			values = n;
		} else if (!strcmp(key, "items")) {
			snd_config_iterator_t j, jnext;
			snd_config_for_each(j, jnext, n) {
				if (snd_config_get_string(snd_config_iterator_entry(j), &text) < 0)
					return -EINVAL;
				char **items = realloc(c->items, (c->item_count + 1) * sizeof *items);
				if (items == NULL)
					return -ENOMEM;
				c->items = items;
				if ((c->items[c->item_count] = strdup(text)) == NULL)
					return -ENOMEM;
				c->item_count++;
			}
		} else {
			SNDERR("audioroute_fakecard: control %s: unknown field %s", name ? name : "?", key);
			return -EINVAL;
		}
	}
	if (name == NULL || strlen(name) >= sizeof c->name) {
		SNDERR("audioroute_fakecard: a control without a name, or a name over %zu bytes", sizeof c->name - 1);
		return -EINVAL;
	}
	snprintf(c->name, sizeof c->name, "%s", name);
	if (c->type == SND_CTL_ELEM_TYPE_BOOLEAN) {
		c->min = 0;
		c->max = 1;
	}
	if (values != NULL) {
		long value = 0;
		unsigned int given = 0;
		if (snd_config_get_type(values) == SND_CONFIG_TYPE_COMPOUND) {
			snd_config_iterator_t j, jnext;
			snd_config_for_each(j, jnext, values) {
				if (given >= c->count || parse_value(c, snd_config_iterator_entry(j), &c->values[given]) < 0)
					goto bad_value;
				given++;
			}
		} else {
			if (parse_value(c, values, &value) < 0)
				goto bad_value;
			for (unsigned int k = 0; k < c->count; k++)
				c->values[k] = value;
			given = c->count;
		}
		if (given != c->count && given != 1)
			goto bad_value;
		for (unsigned int k = given; k < c->count; k++)
			c->values[k] = c->values[0];
	}
	return 0;
bad_value:
	SNDERR("audioroute_fakecard: control %s: a value that is not one for each of its %u channels, or not of its type", c->name, c->count);
	return -EINVAL;
}

static int parse_controls(snd_config_t *root, const char *id, struct fake_card *card)
{
	char path[128];
	snd_config_t *list;
	snd_config_iterator_t i, next;
	snprintf(path, sizeof path, "audioroute_fakecard.%s.controls", id);
	if (snd_config_search(root, path, &list) < 0)
		return 0;
	/* A list ([ { name ... } ]) or, as the older files, a compound keyed by name. */
	int named_by_id = !snd_config_is_array(list);
	snd_config_for_each(i, next, list) {
		struct control *controls = realloc(card->controls, (card->count + 1) * sizeof *controls);
		if (controls == NULL)
			return -ENOMEM;
		card->controls = controls;
		int err = parse_control(snd_config_iterator_entry(i), &card->controls[card->count], named_by_id);
		if (err < 0) {
			/* The control half-read: its items are its own (the card's close frees the others). */
			for (unsigned int j = 0; j < card->controls[card->count].item_count; j++)
				free(card->controls[card->count].items[j]);
			free(card->controls[card->count].items);
			return err;
		}
		card->count++;
	}
	return 0;
}

/* The kernel's struct snd_ctl_card_info (include/uapi/sound/asound.h), which alsa-lib's
 * snd_ctl_card_info_t is: a fixed ABI. */
struct kernel_card_info {
	int card;
	int pad;
	unsigned char id[16];
	unsigned char driver[16];
	unsigned char name[32];
	unsigned char longname[80];
	unsigned char reserved_[16];
	unsigned char mixername[80];
	unsigned char components[128];
};

/* The beginning of alsa-lib's private struct _snd_ctl (src/control/control_local.h), the
 * same from 1.2.4 to 1.2.16. */
struct ctl_head {
	void *open_func;
	char *name;
	snd_ctl_type_t type;
	void **ops;
	void *private_data;
};

static int card_info_with_components(snd_ctl_t *handle, snd_ctl_card_info_t *info)
{
	struct ctl_head *head = (struct ctl_head *)handle;
	struct fake_card *card = card_of(head->private_data);
	int err = card->card_info(handle, info);
	if (err < 0)
		return err;
	memcpy(((struct kernel_card_info *)info)->components, card->components, sizeof card->components);
	return 0;
}

/* The number of operations in alsa-lib's table, by version; 0 for one not known. */
static unsigned int operation_count(void)
{
	int major, minor, subminor;
	if (sscanf(snd_asoundlib_version(), "%d.%d.%d", &major, &minor, &subminor) != 3 || major != 1 || minor != 2)
		return 0;
	if (subminor >= 4 && subminor <= 9)
		return 29;
	if (subminor >= 10 && subminor <= 16)
		return 32;
	return 0;
}

/* Wraps the handle's card_info (see "Components" in the header) and checks it took. */
static int install_components(struct fake_card *card)
{
	struct ctl_head *head = (struct ctl_head *)card->ext.handle;
	unsigned int count = operation_count();
	if (count == 0 || sizeof(struct kernel_card_info) != snd_ctl_card_info_sizeof() || head->type != SND_CTL_TYPE_EXT
	    || head->private_data != &card->ext) {
		SNDERR("audioroute_fakecard: cannot give card %s components with alsa-lib %s", card->ext.id, snd_asoundlib_version());
		return -ENOTSUP;
	}
	memcpy(card->ops, head->ops, count * sizeof(void *));
	card->card_info = (int (*)(snd_ctl_t *, snd_ctl_card_info_t *))card->ops[4];
	card->ops[4] = (void *)card_info_with_components;
	head->ops = card->ops;
	snd_ctl_card_info_t *info;
	snd_ctl_card_info_alloca(&info);
	int err = snd_ctl_card_info(card->ext.handle, info);
	if (err < 0 || strcmp(snd_ctl_card_info_get_components(info), card->components) || strcmp(snd_ctl_card_info_get_id(info), card->ext.id)) {
		SNDERR("audioroute_fakecard: card %s: the components did not take", card->ext.id);
		return -ENOTSUP;
	}
	return 0;
}

/* The card opened as hw:<number> (as UCM users open cards: the daemon, PipeWire): when no card is
 * described under that name and it is a number, the card whose "number" it is; else the name. */
static const char *by_number(snd_config_t *root, const char *name)
{
	char path[128];
	snd_config_t *cards, *node;
	snd_config_iterator_t i, next;
	char *end;
	long wanted = strtol(name, &end, 10);
	snprintf(path, sizeof path, "audioroute_fakecard.%s", name);
	if (*end != '\0' || end == name || snd_config_search(root, path, &node) >= 0 || snd_config_search(root, "audioroute_fakecard", &cards) < 0)
		return name;
	snd_config_for_each(i, next, cards) {
		snd_config_t *card = snd_config_iterator_entry(i);
		const char *key;
		long number;
		if (snd_config_get_id(card, &key) >= 0 && snd_config_search(card, "number", &node) >= 0
		    && snd_config_get_integer(node, &number) >= 0 && number == wanted)
			return key;
	}
	return name;
}

SND_CTL_PLUGIN_DEFINE_FUNC(audioroute_fakecard)
{
	snd_config_iterator_t i, next;
	const char *id = NULL;
	snd_config_for_each(i, next, conf) {
		snd_config_t *n = snd_config_iterator_entry(i);
		const char *key;
		if (snd_config_get_id(n, &key) < 0)
			continue;
		if (!strcmp(key, "comment") || !strcmp(key, "type") || !strcmp(key, "hint"))
			continue;
		if (!strcmp(key, "id") && snd_config_get_string(n, &id) >= 0)
			continue;
		SNDERR("audioroute_fakecard: unknown field %s", key);
		return -EINVAL;
	}
	if (id == NULL || id[0] == '\0')
		return -EINVAL;
	id = by_number(root, id);
	struct fake_card *card = calloc(1, sizeof *card);
	if (card == NULL)
		return -ENOMEM;
	snd_ctl_ext_t *ext = &card->ext;
	ext->poll_fd = -1;
	ext->private_data = card;
	ext->callback = &callbacks;
	int err = parse_controls(root, id, card);
	if (err < 0) {
		close_ext(ext);
		return err;
	}
	snprintf(card->state, sizeof card->state, "%s", identity(root, id, "state", ""));
	if (card->state[0] != '\0') {
		ext->poll_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (ext->poll_fd < 0 || inotify_add_watch(ext->poll_fd, card->state, IN_CLOSE_WRITE | IN_MOVED_TO) < 0) {
			err = -errno;
			SNDERR("audioroute_fakecard: cannot watch %s", card->state);
			close_ext(ext);
			return err;
		}
	}
	ext->version = SND_CTL_EXT_VERSION;
	ext->card_idx = 0;
	snprintf(ext->id, sizeof ext->id, "%s", id);
	snprintf(ext->driver, sizeof ext->driver, "%s", identity(root, id, "driver", id));
	snprintf(ext->name, sizeof ext->name, "%s", identity(root, id, "name", id));
	snprintf(ext->longname, sizeof ext->longname, "%s", identity(root, id, "longname", id));
	snprintf(ext->mixername, sizeof ext->mixername, "%s", identity(root, id, "mixername", ""));
	snprintf(card->components, sizeof card->components, "%s", identity(root, id, "components", ""));
	char path[128];
	snd_config_t *node;
	long number;
	snprintf(path, sizeof path, "audioroute_fakecard.%s.number", id);
	if (snd_config_search(root, path, &node) >= 0 && snd_config_get_integer(node, &number) >= 0 && number >= 0 && number < 32)
		ext->card_idx = (int)number;
	err = snd_ctl_ext_create(ext, name, mode);
	if (err < 0) {
		close_ext(ext);
		return err;
	}
	if (card->components[0] != '\0' && (err = install_components(card)) < 0) {
		snd_ctl_close(ext->handle);
		return err;
	}
	*handlep = ext->handle;
	return 0;
}
SND_CTL_PLUGIN_SYMBOL(audioroute_fakecard);
