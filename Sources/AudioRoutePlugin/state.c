// The stream's states around a route change, the tower's word and the hold (audioroute_plugin.h):
// pure functions, so the tests run them without a kernel.
#include "audioroute_contract.h"
#include "audioroute_plugin.h"

#include <errno.h>
#include <string.h>

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

enum ar_tower_action ar_tower_signal(struct ar_tower *tower, const char *member, const char *kind, const char *reason,
		int should_resume) {
	if (strcmp(member, AR_SIGNAL_INTERRUPTION) == 0) {
		if (strcmp(kind, AR_INTERRUPTION_BEGAN) == 0) {
			// The tower has made the session inactive already (spec section 7).
			tower->active = 0;
			tower->interrupted = 1;
			tower->disconnected = strcmp(reason, AR_REASON_ROUTE_DISCONNECTED) == 0;
			return AR_TOWER_HOLD;
		}
		// An `ended` without shouldResume leaves the app paused: a plain app has no play button,
		// so its writer stays held, as an AVAudioPlayer stays paused.
		if (strcmp(kind, AR_INTERRUPTION_ENDED) == 0 && should_resume && tower->interrupted) {
			tower->interrupted = 0;
			tower->disconnected = 0;
			return AR_TOWER_RESUME;
		}
	} else if (strcmp(member, AR_SIGNAL_DUCKED) == 0) {
		tower->ducked = 1;
	} else if (strcmp(member, AR_SIGNAL_UNDUCKED) == 0) {
		tower->ducked = 0;
	} else if (strcmp(member, AR_SIGNAL_SILENCED) == 0) {
		tower->silenced = 1;
	} else if (strcmp(member, AR_SIGNAL_UNSILENCED) == 0) {
		tower->silenced = 0;
	} else if (strcmp(member, AR_SIGNAL_ROUTE_CHANGED) == 0) {
		tower->route_changed = 1;
	}
	return AR_TOWER_NONE;
}

void ar_tower_lost(struct ar_tower *tower) {
	tower->ducked = 0;
	tower->silenced = 0;
	tower->active = 0;
	tower->interrupted = 0;
	tower->disconnected = 0;
	// The route file is the route from now on: read it again.
	tower->route_changed = 1;
}

int ar_tower_restart(struct ar_tower *tower) {
	if (!tower->interrupted)
		return 0;
	tower->interrupted = 0;
	tower->disconnected = 0;
	return 1;
}

int ar_tower_device_back(struct ar_tower *tower) {
	return tower->disconnected ? ar_tower_restart(tower) : 0;
}

enum ar_busy_action ar_busy_step(int err, int connected, const struct ar_tower *tower, int activated, int expired) {
	if (!activated)
		// An active session's device is busy for reasons the tower cannot change; an interrupted
		// one is not to activate itself (it is held until the tower resumes it).
		return err == -EBUSY && connected && !tower->active && !tower->interrupted ? AR_BUSY_ACTIVATE : AR_BUSY_DONE;
	if (err >= 0)
		return AR_BUSY_DONE;  // the session stays active: the first frames do not activate it again
	if (err != -EBUSY || !connected || !tower->active || expired)
		return AR_BUSY_GIVE_UP;
	return AR_BUSY_RETRY;
}

int ar_hold_begin(struct ar_hold *hold, long delay) {
	if (hold->holding)
		return 0;
	hold->holding = 1;
	hold->replay = delay > 0 ? delay : 0;
	return 1;
}

long ar_hold_end(struct ar_hold *hold) {
	hold->holding = 0;
	return hold->replay;
}

void ar_hold_restarted(struct ar_hold *hold) {
	hold->resuming_by_itself = 1;
	hold->activation_failed = 0;
	hold->holding = 0;
	hold->replay = 0;
}

void ar_hold_device_back(struct ar_hold *hold) {
	hold->resuming_by_itself = 1;
	hold->activation_failed = 0;
}

int ar_hold_activation(struct ar_hold *hold, int ok) {
	int again = !ok && hold->resuming_by_itself;
	if (!ok && !again)
		hold->activation_failed = 1;
	hold->resuming_by_itself = 0;
	return again;
}

unsigned long ar_hold_stash(struct ar_hold *hold, unsigned long size) {
	unsigned long room = hold->capacity > hold->stashed ? hold->capacity - hold->stashed : 0;
	unsigned long taken = size < room ? size : room;
	hold->stashed += taken;
	return taken;
}

void ar_hold_unstash(struct ar_hold *hold, unsigned long count) {
	hold->stashed = count < hold->stashed ? hold->stashed - count : 0;
}

long ar_drift_step(struct ar_drift *drift, long difference, long threshold, long max_step) {
	if (!drift->measured) {
		drift->sum16 = 16LL * difference;
		drift->measured = 1;
	} else {
		drift->sum16 += difference - drift->sum16 / 16;
	}
	long long smoothed = drift->sum16 / 16;
	long long size = smoothed < 0 ? -smoothed : smoothed;
	if (size > threshold)
		drift->correcting = 1;
	else if (size <= threshold / 4)
		drift->correcting = 0;
	if (!drift->correcting || size == 0)
		return 0;
	long step = size < max_step ? (long)size : max_step;
	long correction = smoothed > 0 ? step : -step;
	// What is dropped (repeated) changes the difference at once: the average follows, so that the
	// next measurements are not corrected for again.
	drift->sum16 -= 16LL * correction;
	return correction;
}

long ar_output_lead(int first_running, long first_delay, int output_started) {
	return first_running && !output_started && first_delay > 0 ? first_delay : 0;
}
