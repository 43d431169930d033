// The stream's states around a route change (audioroute_plugin.h): a pure function, so the
// tests run it without a kernel.
#include "audioroute_plugin.h"

#include <errno.h>

enum ar_action ar_step(enum ar_state *state, enum ar_event event) {
	switch (event) {
	case AR_EVENT_OPENED:
		*state = AR_FORWARDING;
		return AR_ACTION_NONE;
	case AR_EVENT_CLOSED:
		*state = AR_IDLE;
		return AR_ACTION_NONE;
	case AR_EVENT_ROUTE_CHANGED:
		// Not now: the change is seen between transfers or while one is held; the move is made
		// where the transfer begins, with the frames it carries.
		if (*state == AR_FORWARDING || *state == AR_HELD)
			*state = AR_MOVE_PENDING;
		return AR_ACTION_NONE;
	case AR_EVENT_BOUNDARY:
		if (*state == AR_MOVE_PENDING) {
			*state = AR_FORWARDING;
			return AR_ACTION_MOVE;
		}
		return *state == AR_HELD ? AR_ACTION_WAIT_FOR_ROUTE : AR_ACTION_NONE;
	case AR_EVENT_DEVICE_GONE:
		if (*state == AR_IDLE)
			return AR_ACTION_NONE;
		*state = AR_HELD;
		return AR_ACTION_WAIT_FOR_ROUTE;
	}
	return AR_ACTION_NONE;
}

int ar_is_device_gone(int err) {
	return err == -ENODEV || err == -EBADFD || err == -ESHUTDOWN;
}
