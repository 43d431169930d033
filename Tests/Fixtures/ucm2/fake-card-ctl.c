/* A control device with no hardware behind it, for the UCM tests
 * (docs/ucm.md): libasound's external control plugin API (snd_ctl_ext)
 * answers only the card's identity, with no controls. UCM needs that
 * identity: ${CardId}, ${CardDriver} and ${CardLongName} come from
 * snd_ctl_card_info, and "hw:" names are the only way to hand
 * snd_use_case_mgr_open a card that the kernel does not have.
 *
 * Built by the tests: cc -DPIC -shared -fPIC -o libasound_module_ctl_audioroute_fakecard.so fake-card-ctl.c -lasound
 * Used as:  ctl.!hw { @args [ CARD ] @args.CARD { type string } type audioroute_fakecard id $CARD }
 * The identity of card <id> is read from the configuration's
 * audioroute_fakecard.<id> { driver "…" name "…" longname "…" } (each defaults to <id>). */
#include <alsa/asoundlib.h>
#include <alsa/control_external.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int elem_count(snd_ctl_ext_t *ext) { (void)ext; return 0; }
static int elem_list(snd_ctl_ext_t *ext, unsigned int offset, snd_ctl_elem_id_t *id)
{ (void)ext; (void)offset; (void)id; return -EINVAL; }
static snd_ctl_ext_key_t find_elem(snd_ctl_ext_t *ext, const snd_ctl_elem_id_t *id)
{ (void)ext; (void)id; return SND_CTL_EXT_KEY_NOT_FOUND; }
static int get_attribute(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, int *type, unsigned int *acc, unsigned int *count)
{ (void)ext; (void)key; (void)type; (void)acc; (void)count; return -EINVAL; }
static void close_ext(snd_ctl_ext_t *ext) { free(ext); }

static const snd_ctl_ext_callback_t callbacks = {
	.elem_count = elem_count, .elem_list = elem_list, .find_elem = find_elem,
	.get_attribute = get_attribute, .close = close_ext,
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
	snd_ctl_ext_t *ext = calloc(1, sizeof *ext);
	if (ext == NULL)
		return -ENOMEM;
	ext->version = SND_CTL_EXT_VERSION;
	ext->card_idx = 0;
	snprintf(ext->id, sizeof ext->id, "%s", id);
	snprintf(ext->driver, sizeof ext->driver, "%s", identity(root, id, "driver", id));
	snprintf(ext->name, sizeof ext->name, "%s", identity(root, id, "name", id));
	snprintf(ext->longname, sizeof ext->longname, "%s", identity(root, id, "longname", id));
	ext->callback = &callbacks;
	int err = snd_ctl_ext_create(ext, name, mode);
	if (err < 0) {
		free(ext);
		return err;
	}
	*handlep = ext->handle;
	return 0;
}
SND_CTL_PLUGIN_SYMBOL(audioroute_fakecard);
