// libudev, plus the kernel interfaces the udev watcher needs that Swift cannot
// import directly: function-like ioctl macros (EVIOCG*), variadic ioctl(), and
// epoll/eventfd (not exported by Glibc's module map).
#ifndef AUDIOROUTE_CUDEV_SHIM_H
#define AUDIOROUTE_CUDEV_SHIM_H

#include <libudev.h>
#include <linux/input.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>

/// eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK). The flags are used here, not in Swift:
/// CSystemd's shim includes <sys/eventfd.h> too, and in a release build clang gives
/// the header's EFD_* enum to that module, so Swift cannot see them through CUdev.
static inline int cudev_eventfd_cloexec_nonblock(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

/// EVIOCGBIT(ev, len): the event codes of type `ev` the device supports (ev 0: the types).
static inline int cudev_eviocgbit(int fd, unsigned int ev, void *buf, unsigned int len) {
    return ioctl(fd, EVIOCGBIT(ev, len), buf);
}

/// EVIOCGSW(len): the current state of every switch.
static inline int cudev_eviocgsw(int fd, void *buf, unsigned int len) {
    return ioctl(fd, EVIOCGSW(len), buf);
}

/// EVIOCGNAME(len): the device's name.
static inline int cudev_eviocgname(int fd, char *buf, unsigned int len) {
    return ioctl(fd, EVIOCGNAME(len), buf);
}

/// Names the calling thread (prctl is variadic, so it does not import).
static inline int cudev_set_thread_name(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

static const unsigned int cudev_epollin = EPOLLIN;
static const unsigned int cudev_epollerr = EPOLLERR;
static const unsigned int cudev_epollhup = EPOLLHUP;

#endif
