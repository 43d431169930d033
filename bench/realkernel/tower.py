"""The tower's decisions on the plugin's streams: duck, silent mode, call, the tower lost."""
from dataclasses import dataclass

from .analysis import goertzel, heard, left, levels_between
from .common import Failure, median
from .events import Mark
from .reports import Alive, Exited, capture_reports
from .signals import AMBIENT_HZ, CALL_HZ, MUSIC_HZ, PROMPT_HZ, RATE, WINDOW
from .ucm import ucm_capture

# The phases' guest parts (bench/guest/): duck, silent mode and call; the tower lost, after the UCM phase.
GUEST_SCRIPT = "kernel/tower.sh"
LOST_GUEST_SCRIPT = "kernel/lost.sh"


# Duck: music, then a duckOthers prompt over it.
class DuckBefore(Mark):
    """`duck-before`: the music has played alone for 1.5 s."""
    words, script = "duck-before", GUEST_SCRIPT


class DuckPrompt(Mark):
    """`duck-prompt`: the prompt starts."""
    words, script = "duck-prompt", GUEST_SCRIPT


class DuckAfter(Exited):
    """`duck-after STATUS LAST-LINES`: 1 s after the prompt's aplay ended."""
    words, script = "duck-after", GUEST_SCRIPT


class DuckEnd(Alive):
    """`duck-end alive|exited`: the music's aplay, 1.5 s later."""
    words, script = "duck-end", GUEST_SCRIPT


# Silent mode: a soloAmbient stream, silent mode on, then off.
class SilentBefore(Mark):
    """`silent-before`: the soloAmbient stream has played for 1.5 s."""
    words, script = "silent-before", GUEST_SCRIPT


class SilentSwitch(Mark):
    """`silent-switch`: silent mode goes on."""
    words, script = "silent-switch", GUEST_SCRIPT


class SilentOn(Mark):
    """`silent-on`: 0.7 s after `audioroute silent on` returned."""
    words, script = "silent-on", GUEST_SCRIPT


class SilentOnEnd(Alive):
    """`silent-on-end alive|exited`: the stream's aplay, silenced for 1.5 s."""
    words, script = "silent-on-end", GUEST_SCRIPT


class SilentOff(Mark):
    """`silent-off`: 0.7 s after `audioroute silent off` returned."""
    words, script = "silent-off", GUEST_SCRIPT


class SilentEnd(Alive):
    """`silent-end alive|exited`: the stream's aplay, 1.5 s later."""
    words, script = "silent-end", GUEST_SCRIPT


# A call: music, interrupted by a playAndRecord stream, resumed after it.
class CallBefore(Mark):
    """`call-before`: the music has played alone for 1.5 s."""
    words, script = "call-before", GUEST_SCRIPT


class CallStart(Mark):
    """`call-start`: the call's aplay starts."""
    words, script = "call-start", GUEST_SCRIPT


class CallDuring(Alive):
    """`call-during alive|exited`: the music's aplay, 1.5 s into the call."""
    words, script = "call-during", GUEST_SCRIPT


class CallAfter(Exited):
    """`call-after STATUS LAST-LINES`: 1.5 s after the call's aplay ended."""
    words, script = "call-after", GUEST_SCRIPT


class CallEnd(Alive):
    """`call-end alive|exited`: the music's aplay, 1.5 s later."""
    words, script = "call-end", GUEST_SCRIPT


# The tower lost: music held by a call, then the daemon killed.
class LostBefore(Mark):
    """`lost-before`: the music has played alone for 1.5 s."""
    words, script = "lost-before", LOST_GUEST_SCRIPT


class LostCall(Mark):
    """`lost-call`: the call's aplay starts."""
    words, script = "lost-call", LOST_GUEST_SCRIPT


class LostHeld(Alive):
    """`lost-held alive|exited`: the music's aplay, 2.5 s into the call, just before the daemon's kill."""
    words, script = "lost-held", LOST_GUEST_SCRIPT


class LostAfter(Exited):
    """`lost-after STATUS`: 1 s after the call's aplay ended."""
    words, script = "lost-after", LOST_GUEST_SCRIPT


@dataclass(frozen=True)
class LostEnd(Alive):
    """`lost-end alive|exited music-said=N call-said=N`: the music's aplay, 1.5 s later, and how
    many times each stream said that the tower went away."""
    words, script = "lost-end", LOST_GUEST_SCRIPT
    said: dict

    @classmethod
    def parse(cls, line):
        fields = cls.fields(line)
        return cls(line, fields[:1] == ["alive"], dict(w.split("=", 1) for w in fields[1:] if "=" in w))


EVENTS = (DuckBefore, DuckPrompt, DuckAfter, DuckEnd, SilentBefore, SilentSwitch, SilentOn, SilentOnEnd, SilentOff, SilentEnd,
          CallBefore, CallStart, CallDuring, CallAfter, CallEnd, LostBefore, LostCall, LostHeld, LostAfter, LostEnd)


def tower_capture(guest, events):
    """The HDA card's file's left channel over a phase's reports, each report's place and its event."""
    data, marks, reports = capture_reports(guest, events)
    return left(data), marks, reports


def check_heard(what, during, loud, ended, why=""):
    """The stream over the music (the prompt, the call) heard for 1 s (`during`: its windows; `loud`:
    its level), its aplay exited 0 (`ended`)."""
    if not ended.ok or len(during) * WINDOW < RATE:
        raise Failure(f"{what} was not heard for 1 s ({len(during) * WINDOW / RATE:.2f} s, level {loud:.0f}; its aplay "
                      f"exited {ended.exited}){why}")


# Each check reads its phase's reports through these classes (their words name the marks); the
# sound-server bench passes its own, said by its guest script.
DUCK_EVENTS = (DuckBefore, DuckPrompt, DuckAfter, DuckEnd)
SILENT_EVENTS = (SilentBefore, SilentSwitch, SilentOn, SilentOnEnd, SilentOff, SilentEnd)
CALL_EVENTS = (CallBefore, CallStart, CallDuring, CallAfter, CallEnd)


def check_duck(guest, events=DUCK_EVENTS):
    samples, marks, reports = tower_capture(guest, events)
    DuckAfter, DuckEnd = events[2], events[3]
    before = median(levels_between(samples, marks, "duck-before", "duck-prompt", MUSIC_HZ) or [0])
    loud, during = heard(samples, marks["duck-prompt"], marks["duck-after"], PROMPT_HZ)
    music = goertzel(samples, marks["duck-prompt"], marks["duck-after"], MUSIC_HZ)
    ducked = median([music[i] for i in during]) if during else 0.0
    after = median(levels_between(samples, marks, "duck-after", "duck-end", MUSIC_HZ) or [0])
    print(f"    music (500 Hz) {before:.0f} alone; {ducked:.0f} under the prompt ({ducked / max(before, 1):.2f}x) over "
          f"{len(during) * WINDOW / RATE:.2f} s; {after:.0f} after ({after / max(before, 1):.2f}x); prompt (1250 Hz) {loud:.0f}")
    if before < 100:
        raise Failure(f"duck: the music's tone is not in the HDA card's file before the prompt (level {before:.0f})")
    check_heard("duck: the prompt", during, loud, reports[DuckAfter], ": two streams on one card need a mixing device (dmix)")
    if loud < before / 2:
        raise Failure(f"duck: the prompt's level {loud:.0f} is under half the music's {before:.0f}")
    if not 0.2 <= ducked / before <= 0.4:
        raise Failure(f"duck: under the prompt the music is at {ducked / before:.2f}x, expected the duck gain 0.3")
    if not 0.8 <= after / before <= 1.25:
        raise Failure(f"duck: after the prompt the music is at {after / before:.2f}x, expected back to full")
    if not reports[DuckEnd].alive:
        raise Failure(f"duck: the music's aplay did not play on: {reports[DuckEnd].report}")


def check_silent(guest, events=SILENT_EVENTS):
    samples, marks, reports = tower_capture(guest, events)
    SilentOnEnd = events[3]
    before = median(levels_between(samples, marks, "silent-before", "silent-switch", AMBIENT_HZ) or [0])
    silenced = max(levels_between(samples, marks, "silent-on", "silent-on-end", AMBIENT_HZ) or [0])
    after = median(levels_between(samples, marks, "silent-off", "silent-end", AMBIENT_HZ) or [0])
    print(f"    soloAmbient tone (700 Hz) {before:.0f}; with silent mode on, at most {silenced:.0f}; after {after:.0f}")
    if before < 100:
        raise Failure(f"silent mode: the soloAmbient stream's tone is not in the HDA card's file before (level {before:.0f})")
    if silenced > before * 0.02:
        raise Failure(f"silent mode: the soloAmbient stream's tone is still there with silent mode on ({silenced:.0f} against {before:.0f})")
    if not reports[SilentOnEnd].alive:
        raise Failure(f"silent mode: aplay should run on, silenced: {reports[SilentOnEnd].report}")
    if after < before * 0.8:
        raise Failure(f"silent mode: the tone did not come back with silent mode off ({after:.0f} against {before:.0f})")


def check_call(guest, events=CALL_EVENTS):
    samples, marks, reports = tower_capture(guest, events)
    CallDuring, CallAfter, CallEnd = events[2], events[3], events[4]
    before = median(levels_between(samples, marks, "call-before", "call-start", MUSIC_HZ) or [0])
    loud, during = heard(samples, marks["call-start"], marks["call-after"], CALL_HZ)
    music = goertzel(samples, marks["call-start"], marks["call-after"], MUSIC_HZ)
    # What the music's device already held when its writer was stopped still plays: allowed,
    # up to aplay's buffer (0.5 s), at the call's start. At its end, the window that holds the
    # call's last frames may hold the resumed music's first: 0.1 s allowed there. A window counts
    # as music from a tenth of its level: a glitch in the call's tone (a dmix underrun on a
    # loaded machine) leaks a few % into the music's bin.
    playing = [i for i in during if music[i] > before * 0.1]
    held = [i for i in playing if during[0] + RATE // 2 // WINDOW < i < during[-1] - RATE // 10 // WINDOW] if during else []
    after = median(levels_between(samples, marks, "call-after", "call-end", MUSIC_HZ) or [0])
    print(f"    music (500 Hz) {before:.0f}; during the call (900 Hz, {loud:.0f}, {len(during) * WINDOW / RATE:.2f} s) heard "
          f"{len(playing) * WINDOW * 1000 // RATE} ms ({len(held) * WINDOW * 1000 // RATE} ms after the first 0.5 s); after {after:.0f}")
    if before < 100:
        raise Failure(f"call: the music's tone is not in the HDA card's file before the call (level {before:.0f})")
    check_heard("call: the call", during, loud, reports[CallAfter])
    if held:
        raise Failure(f"call: the music plays on during the call ({len(held) * WINDOW * 1000 // RATE} ms of it after the "
                      f"call's first 0.5 s): not interrupted")
    if not reports[CallDuring].alive or not reports[CallEnd].alive:
        raise Failure(f"call: the music's aplay should be held during the call and play on after: "
                      f"{reports[CallDuring].report}; {reports[CallEnd].report}")
    if after < before * 0.8:
        raise Failure(f"call: the music did not resume after the call ({after:.0f} against {before:.0f}): "
                      f"no end of interruption with shouldResume")


def check_tower_lost(guest):
    """The daemon killed while a call holds the music: the music's aplay is released and plays on
    (heard again after the call's aplay ends), and each stream said so once. Both channels: with
    the UCM phase before, the card stays on the call's Earpiece (right, half volume)."""
    channels, marks, reports = ucm_capture(guest, (LostBefore, LostCall, LostHeld, LostAfter, LostEnd))
    def level(start, end):
        return max(median(levels_between(c, marks, start, end, MUSIC_HZ) or [0]) for c in channels)
    before, held = level("lost-before", "lost-call"), level("lost-call", "lost-held")
    released, after = level("lost-held", "lost-after"), level("lost-after", "lost-end")
    end = reports[LostEnd].said
    print(f"    music (500 Hz) {before:.0f} before the call; {held:.0f} during the call, the daemon alive; {released:.0f} "
          f"from the daemon's kill to the call's end; {after:.0f} after; said once: music {end.get('music-said')}, call {end.get('call-said')}")
    if held > before * 0.3:
        raise Failure(f"tower lost: the call did not hold the music before the daemon was killed ({held:.0f} against {before:.0f})")
    if not reports[LostHeld].alive or not reports[LostEnd].alive:
        raise Failure(f"tower lost: the music's aplay should live on: {reports[LostHeld].report}; {reports[LostEnd].report}")
    if not reports[LostAfter].ok:
        raise Failure(f"tower lost: the call's aplay exited {reports[LostAfter].exited.split()} after the daemon was killed")
    if before < 100 or released < before * 0.3 or after < before * 0.3:
        raise Failure(f"tower lost: the music was not heard again after the daemon was killed ({released:.0f} while the call "
                      f"plays out, {after:.0f} after, against {before:.0f} before the call): still held")
    if end.get("music-said") != "1" or end.get("call-said") != "1":
        raise Failure(f"tower lost: each stream should say once that the tower went away: {reports[LostEnd].report}")
