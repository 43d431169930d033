// libudev. Nothing else: the kernel interfaces around it are in CLinux.
#ifndef AUDIOROUTE_CUDEV_SHIM_H
#define AUDIOROUTE_CUDEV_SHIM_H
#include <libudev.h>
#endif
