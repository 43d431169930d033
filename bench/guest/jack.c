// A jack the bench can plug: QEMU's codecs have only phantom jacks, so the guest adds a user
// control named like the kernel's jack controls to the real HDA card and drives its value.
//   guest-jack CARD NAME add      a BOOLEAN card control NAME, value off
//   guest-jack CARD NAME on|off   its value
#include <alsa/asoundlib.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: guest-jack CARD NAME add|on|off\n"); return 2; }
    char device[32];
    snprintf(device, sizeof device, "hw:%s", argv[1]);
    snd_ctl_t *ctl;
    int err = snd_ctl_open(&ctl, device, 0);
    if (err < 0) { fprintf(stderr, "guest-jack: %s: %s\n", device, snd_strerror(err)); return 1; }
    snd_ctl_elem_id_t *id;
    snd_ctl_elem_id_alloca(&id);
    snd_ctl_elem_id_set_interface(id, SND_CTL_ELEM_IFACE_CARD);
    snd_ctl_elem_id_set_name(id, argv[2]);
    if (strcmp(argv[3], "add") == 0) {
        snd_ctl_elem_info_t *info;
        snd_ctl_elem_info_alloca(&info);
        snd_ctl_elem_info_set_id(info, id);
        err = snd_ctl_add_boolean_elem_set(ctl, info, 1, 1);
    } else {
        snd_ctl_elem_value_t *value;
        snd_ctl_elem_value_alloca(&value);
        snd_ctl_elem_value_set_id(value, id);
        snd_ctl_elem_value_set_boolean(value, 0, strcmp(argv[3], "on") == 0);
        err = snd_ctl_elem_write(ctl, value);
    }
    if (err < 0) { fprintf(stderr, "guest-jack: %s %s: %s\n", argv[2], argv[3], snd_strerror(err)); return 1; }
    snd_ctl_close(ctl);
    return 0;
}
