"""The tower's decisions on the plugin's streams: duck, silent mode, call, the tower lost."""
from .analysis import goertzel, heard, left, levels_between
from .common import Failure, median
from .signals import AMBIENT_HZ, CALL_HZ, MUSIC_HZ, PROMPT_HZ, RATE, WINDOW
from .ucm import ucm_capture

# The phases' guest parts (bench/guest/): duck, silent mode and call; the tower lost, after the UCM phase.
GUEST_SCRIPT = "kernel/tower.sh"
LOST_GUEST_SCRIPT = "kernel/lost.sh"


def capture_reports(guest, words, seconds=60):
    """Captures the HDA card's file over a phase's reports: the samples, each report's line
    and place."""
    files = guest.files
    files.capture("hda")
    marks, lines = {}, {}
    for w in words:
        lines[w] = guest.wait_for(w, seconds)
        marks[w] = files.mark("hda")
    return left(files.take("hda")), marks, lines


def check_duck(guest):
    samples, marks, lines = capture_reports(guest, ["duck-before", "duck-prompt", "duck-after", "duck-end"])
    before = median(levels_between(samples, marks, "duck-before", "duck-prompt", MUSIC_HZ) or [0])
    loud, during = heard(samples, marks["duck-prompt"], marks["duck-after"], PROMPT_HZ)
    music = goertzel(samples, marks["duck-prompt"], marks["duck-after"], MUSIC_HZ)
    ducked = median([music[i] for i in during]) if during else 0.0
    after = median(levels_between(samples, marks, "duck-after", "duck-end", MUSIC_HZ) or [0])
    print(f"    music (500 Hz) {before:.0f} alone; {ducked:.0f} under the prompt ({ducked / max(before, 1):.2f}x) over "
          f"{len(during) * WINDOW / RATE:.2f} s; {after:.0f} after ({after / max(before, 1):.2f}x); prompt (1250 Hz) {loud:.0f}")
    if before < 100:
        raise Failure(f"duck: the music's tone is not in the HDA card's file before the prompt (level {before:.0f})")
    if lines["duck-after"].split()[1:2] != ["0"] or len(during) * WINDOW < RATE:
        raise Failure(f"duck: the prompt was not heard for 1 s ({len(during) * WINDOW / RATE:.2f} s, level {loud:.0f}; its aplay "
                      f"exited {' '.join(lines['duck-after'].split()[1:])}): two streams on one card need a mixing device (dmix)")
    if loud < before / 2:
        raise Failure(f"duck: the prompt's level {loud:.0f} is under half the music's {before:.0f}")
    if not 0.2 <= ducked / before <= 0.4:
        raise Failure(f"duck: under the prompt the music is at {ducked / before:.2f}x, expected the duck gain 0.3")
    if not 0.8 <= after / before <= 1.25:
        raise Failure(f"duck: after the prompt the music is at {after / before:.2f}x, expected back to full")
    if lines["duck-end"].split()[1:2] != ["alive"]:
        raise Failure(f"duck: the music's aplay did not play on: {lines['duck-end']}")


def check_silent(guest):
    samples, marks, lines = capture_reports(guest, ["silent-before", "silent-switch", "silent-on", "silent-on-end",
                                                    "silent-off", "silent-end"])
    before = median(levels_between(samples, marks, "silent-before", "silent-switch", AMBIENT_HZ) or [0])
    silenced = max(levels_between(samples, marks, "silent-on", "silent-on-end", AMBIENT_HZ) or [0])
    after = median(levels_between(samples, marks, "silent-off", "silent-end", AMBIENT_HZ) or [0])
    print(f"    soloAmbient tone (700 Hz) {before:.0f}; with silent mode on, at most {silenced:.0f}; after {after:.0f}")
    if before < 100:
        raise Failure(f"silent mode: the soloAmbient stream's tone is not in the HDA card's file before (level {before:.0f})")
    if silenced > before * 0.02:
        raise Failure(f"silent mode: the soloAmbient stream's tone is still there with silent mode on ({silenced:.0f} against {before:.0f})")
    if lines["silent-on-end"].split()[1:2] != ["alive"]:
        raise Failure(f"silent mode: aplay should run on, silenced: {lines['silent-on-end']}")
    if after < before * 0.8:
        raise Failure(f"silent mode: the tone did not come back with silent mode off ({after:.0f} against {before:.0f})")


def check_call(guest):
    samples, marks, lines = capture_reports(guest, ["call-before", "call-start", "call-during", "call-after", "call-end"])
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
    if lines["call-after"].split()[1:2] != ["0"] or len(during) * WINDOW < RATE:
        raise Failure(f"call: the call was not heard for 1 s ({len(during) * WINDOW / RATE:.2f} s, level {loud:.0f}; its aplay "
                      f"exited {' '.join(lines['call-after'].split()[1:])})")
    if held:
        raise Failure(f"call: the music plays on during the call ({len(held) * WINDOW * 1000 // RATE} ms of it after the "
                      f"call's first 0.5 s): not interrupted")
    if lines["call-during"].split()[1:2] != ["alive"] or lines["call-end"].split()[1:2] != ["alive"]:
        raise Failure(f"call: the music's aplay should be held during the call and play on after: "
                      f"{lines['call-during']}; {lines['call-end']}")
    if after < before * 0.8:
        raise Failure(f"call: the music did not resume after the call ({after:.0f} against {before:.0f}): "
                      f"no end of interruption with shouldResume")


def check_tower_lost(guest):
    """The daemon killed while a call holds the music: the music's aplay is released and plays on
    (heard again after the call's aplay ends), and each stream said so once. Both channels: with
    the UCM phase before, the card stays on the call's Earpiece (right, half volume)."""
    channels, marks, lines = ucm_capture(guest, ["lost-before", "lost-call", "lost-held", "lost-after", "lost-end"])
    def level(start, end):
        return max(median(levels_between(c, marks, start, end, MUSIC_HZ) or [0]) for c in channels)
    before, held = level("lost-before", "lost-call"), level("lost-call", "lost-held")
    released, after = level("lost-held", "lost-after"), level("lost-after", "lost-end")
    end = dict(w.split("=", 1) for w in lines["lost-end"].split()[2:] if "=" in w)
    print(f"    music (500 Hz) {before:.0f} before the call; {held:.0f} during the call, the daemon alive; {released:.0f} "
          f"from the daemon's kill to the call's end; {after:.0f} after; said once: music {end.get('music-said')}, call {end.get('call-said')}")
    if held > before * 0.3:
        raise Failure(f"tower lost: the call did not hold the music before the daemon was killed ({held:.0f} against {before:.0f})")
    if lines["lost-held"].split()[1:2] != ["alive"] or lines["lost-end"].split()[1:2] != ["alive"]:
        raise Failure(f"tower lost: the music's aplay should live on: {lines['lost-held']}; {lines['lost-end']}")
    if lines["lost-after"].split()[1:2] != ["0"]:
        raise Failure(f"tower lost: the call's aplay exited {lines['lost-after'].split()[1:]} after the daemon was killed")
    if before < 100 or released < before * 0.3 or after < before * 0.3:
        raise Failure(f"tower lost: the music was not heard again after the daemon was killed ({released:.0f} while the call "
                      f"plays out, {after:.0f} after, against {before:.0f} before the call): still held")
    if end.get("music-said") != "1" or end.get("call-said") != "1":
        raise Failure(f"tower lost: each stream should say once that the tower went away: {lines['lost-end']}")
