// The Linux and glibc interfaces Swift's Glibc module does not export, or cannot import
// (function-like ioctl macros, variadic prctl, _GNU_SOURCE-only declarations). Only
// AudioRouteSystem imports this module.
#ifndef AUDIOROUTE_CLINUX_SHIM_H
#define AUDIOROUTE_CLINUX_SHIM_H

#include <poll.h>
#include <spawn.h>
#include <malloc.h>
#include <linux/input.h>
#include <sound/asound.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>

/// glibc 2.34+; <spawn.h> declares it only under _GNU_SOURCE. A child spawned while another
/// thread holds a descriptor opened without O_CLOEXEC (libasound's popen for a `file "|cmd"`
/// PCM) must not keep a copy: that pipe would never reach its end.
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);

/// eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK). The flags are used here, not in Swift: in a release
/// build clang may give the header's EFD_* enum to another module that includes it.
static inline int clinux_eventfd_cloexec_nonblock(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

/// EVIOCGBIT(ev, len): the event codes of type `ev` the device supports (ev 0: the types).
static inline int clinux_eviocgbit(int fd, unsigned int ev, void *buf, unsigned int len) {
    return ioctl(fd, EVIOCGBIT(ev, len), buf);
}

/// EVIOCGSW(len): the current state of every switch.
static inline int clinux_eviocgsw(int fd, void *buf, unsigned int len) {
    return ioctl(fd, EVIOCGSW(len), buf);
}

/// EVIOCGNAME(len): the device's name.
static inline int clinux_eviocgname(int fd, char *buf, unsigned int len) {
    return ioctl(fd, EVIOCGNAME(len), buf);
}

/// Names the calling thread (prctl is variadic, so it does not import).
static inline int clinux_set_thread_name(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

/// SNDRV_CTL_IOCTL_ELEM_LIST: up to `space` element ids from `offset` into `pids`; the
/// kernel sets `list->used` (how many it wrote) and `list->count` (how many there are).
static inline int clinux_ctl_elem_list(int fd, struct snd_ctl_elem_list *list) {
    return ioctl(fd, SNDRV_CTL_IOCTL_ELEM_LIST, list);
}

/// SNDRV_CTL_IOCTL_ELEM_INFO: an element's type, access and value count (by `info->id`).
static inline int clinux_ctl_elem_info(int fd, struct snd_ctl_elem_info *info) {
    return ioctl(fd, SNDRV_CTL_IOCTL_ELEM_INFO, info);
}

/// SNDRV_CTL_IOCTL_ELEM_READ: an element's values (by `value->id`).
static inline int clinux_ctl_elem_read(int fd, struct snd_ctl_elem_value *value) {
    return ioctl(fd, SNDRV_CTL_IOCTL_ELEM_READ, value);
}

/// SNDRV_CTL_IOCTL_SUBSCRIBE_EVENTS: 1 to queue `struct snd_ctl_event`s for read(2), 0 to stop.
static inline int clinux_ctl_subscribe_events(int fd, int on) {
    return ioctl(fd, SNDRV_CTL_IOCTL_SUBSCRIBE_EVENTS, &on);
}

/// SNDRV_CTL_IOCTL_ELEM_ADD: a user-space element (tests drive a jack control with one).
static inline int clinux_ctl_elem_add(int fd, struct snd_ctl_elem_info *info) {
    return ioctl(fd, SNDRV_CTL_IOCTL_ELEM_ADD, info);
}

/// SNDRV_CTL_IOCTL_ELEM_REMOVE: removes a user-space element (by `id->numid`).
static inline int clinux_ctl_elem_remove(int fd, struct snd_ctl_elem_id *id) {
    return ioctl(fd, SNDRV_CTL_IOCTL_ELEM_REMOVE, id);
}

/// SNDRV_CTL_IOCTL_ELEM_WRITE: sets an element's values (by `value->id`).
static inline int clinux_ctl_elem_write(int fd, struct snd_ctl_elem_value *value) {
    return ioctl(fd, SNDRV_CTL_IOCTL_ELEM_WRITE, value);
}

/// SNDRV_CTL_IOCTL_PVERSION: the control protocol's version (SNDRV_PROTOCOL_VERSION(2, 0, x)).
static inline int clinux_ctl_pversion(int fd, int *version) {
    return ioctl(fd, SNDRV_CTL_IOCTL_PVERSION, version);
}

/// SNDRV_CTL_IOCTL_CARD_INFO: the card's id, driver, names, mixer name and components.
static inline int clinux_ctl_card_info(int fd, struct snd_ctl_card_info *info) {
    return ioctl(fd, SNDRV_CTL_IOCTL_CARD_INFO, info);
}

/// SNDRV_CTL_IOCTL_PCM_NEXT_DEVICE: the first PCM device number above `*device` (-1: from the
/// start), or -1 when there is none.
static inline int clinux_ctl_pcm_next_device(int fd, int *device) {
    return ioctl(fd, SNDRV_CTL_IOCTL_PCM_NEXT_DEVICE, device);
}

/// SNDRV_CTL_IOCTL_PCM_INFO: one PCM stream's id, name and class (by `info->device`,
/// `info->subdevice` and `info->stream`); ENOENT when the device has no such stream.
static inline int clinux_ctl_pcm_info(int fd, struct snd_pcm_info *info) {
    return ioctl(fd, SNDRV_CTL_IOCTL_PCM_INFO, info);
}

/// The <sound/asound.h> constants that are casts, which Swift does not import.
static const int clinux_ctl_elem_type_boolean = (int)SNDRV_CTL_ELEM_TYPE_BOOLEAN;
static const int clinux_ctl_elem_iface_card = (int)SNDRV_CTL_ELEM_IFACE_CARD;
static const int clinux_ctl_elem_iface_mixer = (int)SNDRV_CTL_ELEM_IFACE_MIXER;
static const int clinux_ctl_elem_iface_pcm = (int)SNDRV_CTL_ELEM_IFACE_PCM;
static const int clinux_pcm_stream_playback = (int)SNDRV_PCM_STREAM_PLAYBACK;
static const int clinux_pcm_stream_capture = (int)SNDRV_PCM_STREAM_CAPTURE;

static const unsigned int clinux_epollin = EPOLLIN;
static const unsigned int clinux_epollerr = EPOLLERR;
static const unsigned int clinux_epollhup = EPOLLHUP;

#endif
