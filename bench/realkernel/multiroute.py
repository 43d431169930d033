"""The multiRoute phase: one aplay of a multiRoute session plays to the HDA card's headphones and the
USB card at once, each its own device; both files get the music, and the host measures their drift."""
import json
from dataclasses import dataclass

from .analysis import goertzel, left, locate
from .common import Failure
from .events import Mark, Report
from .harness import plug_usb
from .reports import route_uids
from .signals import MULTIROUTE_FILE_SECONDS, MULTIROUTE_MARK_FRAMES, MULTIROUTE_PLACES, MULTIROUTE_TONE, MUSIC_HZ, RATE, SIGNAL_LEVEL

# The phase's guest part (bench/guest/).
GUEST_SCRIPT = "kernel/multiroute.sh"


@dataclass(frozen=True)
class MultirouteBegin(Report):
    """`multiroute-begin LINES`: the phase starts; the monitor's log had LINES lines (the route
    changes from there to multiroute-end's count are the phase's own)."""
    words, script = "multiroute-begin", GUEST_SCRIPT
    monitor_lines: int

    @classmethod
    def parse(cls, line):
        try:
            return cls(line, int(cls.fields(line)[0]))
        except (IndexError, ValueError):
            raise Failure(f"'{cls.words}': no count of the monitor's lines: {line[:300]}")


class MultirouteReady(Mark):
    """`multiroute-ready`: the headphones are plugged; the host hot-adds the USB card."""
    words, script = "multiroute-ready", GUEST_SCRIPT


@dataclass(frozen=True)
class MultiroutePlaying(Report):
    """`multiroute-playing alive|exited ROUTE-FILE STATUS`: 3 s into the stream, the route file's
    output definitions (lines joined by |) and `audioroute status --json`."""
    words, script = "multiroute-playing", GUEST_SCRIPT
    alive: str
    route_file: str
    status: dict

    @classmethod
    def parse(cls, line):
        rest = line[len(cls.words):].strip()
        alive, _, rest = rest.partition(" ")
        start = rest.find('{"')  # the route file's own braces are followed by its lines' `|`
        if start < 0:
            raise Failure(f"'{cls.words}': no `audioroute status --json` after the route file: {line[:300]}")
        try:
            status = json.loads(rest[start:])
        except ValueError:
            raise Failure(f"'{cls.words}': `audioroute status --json` printed no JSON: {rest[start:start + 300]}")
        return cls(line, alive, rest[:start].strip(), status)


@dataclass(frozen=True)
class MultirouteDone(Report):
    """`multiroute-done STATUS DROPS REPEATS NOTES`: aplay's exit status, how many corrections the
    plugin made to the further output (frames dropped, repeated: AUDIOROUTE_DEBUG's lines), and its
    last other lines about further outputs or errors."""
    words, script = "multiroute-done", GUEST_SCRIPT
    status: int
    drops: int
    repeats: int
    notes: str

    @classmethod
    def parse(cls, line):
        fields = cls.fields(line)
        try:
            return cls(line, int(fields[0]), int(fields[1]), int(fields[2]), " ".join(fields[3:]))
        except (IndexError, ValueError):
            raise Failure(f"'{cls.words}': expected a status and two counts: {line[:300]}")


@dataclass(frozen=True)
class MultirouteEnd(Report):
    """`multiroute-end LINES STATUS`: the USB card removed and the jack off; the monitor's log
    lines then, and `audioroute status --json`."""
    words, script = "multiroute-end", GUEST_SCRIPT
    monitor_lines: int
    status: dict

    @classmethod
    def parse(cls, line):
        count, _, text = line[len(cls.words):].strip().partition(" ")
        try:
            return cls(line, int(count), json.loads(text))
        except ValueError:
            raise Failure(f"'{cls.words}': expected the monitor's lines and `audioroute status --json`: {line[:300]}")


EVENTS = (MultirouteBegin, MultirouteReady, MultiroutePlaying, MultirouteDone, MultirouteEnd)


def find_marks(samples, bits):
    """The markers in a card's file (its left channel), in order: the frame where each starts and
    its number in the file (MULTIROUTE_PLACES' index). A marker is the only part of the music past
    half its loudest sample; locate() places it to the frame from the sequence it carries (its
    first run of 32 frames or more: a frame the plugin dropped or repeated inside a marker breaks
    the run, and the run after places it from its own place)."""
    if not samples:
        return []
    loudest = max(abs(x) for x in samples[::97]) or 1
    loud = loudest // 2
    marks, i, n = [], 0, len(samples)
    while i < n:
        if abs(samples[i]) <= loud:
            i += 600
            continue
        # The marker's first frame: every frame of it is loud, none of the music is (at most a
        # marker's length back: anything longer and loud is not a marker).
        probe, first = i, max(0, i - MULTIROUTE_MARK_FRAMES)
        while i > first and abs(samples[i - 1]) > loud:
            i -= 1
        found = None
        for index, place, _ in locate(samples[i:i + MULTIROUTE_MARK_FRAMES], bits, misses=4):
            k = next((k for k, p in enumerate(MULTIROUTE_PLACES) if p <= place < p + MULTIROUTE_MARK_FRAMES), None)
            start = i + index - (place - MULTIROUTE_PLACES[k]) if k is not None else -1
            # The music before it: a marker's place inside a longer loud signal (the cycles'
            # sequence, in the same file) is no marker.
            if k is not None and (start <= 0 or abs(samples[start - 1]) <= loud):
                found = (start, k)
                break
        if found is None:
            i = probe + MULTIROUTE_MARK_FRAMES
            continue
        marks.append(found)
        i = found[0] + MULTIROUTE_MARK_FRAMES + RATE
    return marks


def music_levels(samples, marks):
    """The tone's amplitude 2 s after each marker (the loudest 20 ms in 0.5 s), against the marker's level (MULTIROUTE_TONE of
    SIGNAL_LEVEL as played): the music, at the ratio it was played, whatever the card's gain."""
    levels = []
    for start, _ in marks:
        marker = sum(abs(x) for x in samples[start + 100:start + 1100]) / 1000
        # The loudest of 25 windows (0.5 s): a window with a frame the plugin repeated or dropped
        # on the way breaks the tone's phase, and reads low.
        windows = goertzel(samples, start + 2 * RATE, start + 2 * RATE + 25 * 960, MUSIC_HZ)
        levels.append(max(windows, default=0.0) / marker * SIGNAL_LEVEL / MULTIROUTE_TONE if marker else 0.0)
    return levels


# The largest net change of the cards' offset from the first marker to the last that passes: the
# files' times are read to about 25 ms each (Files); uncorrected, the emulated cards parted by 2.5%
# to 23% (the HDA card takes more frames: docs/benchmarks.md), seconds in a minute.
MOST_DRIFT_MS = 100


def drift(hda, usb):
    """Per marker (in order), the USB card's position less the HDA card's, less the first's: the
    frames one card played between them that the other did not (> 0: the USB card played more):
    what the plugin dropped or repeated to keep them in step, on top of the cards' own gaps."""
    offsets = [u - h for (h, _), (u, _) in zip(hda, usb)]
    return [o - offsets[0] for o in offsets]


def played_at(growth, frame):
    """When a card played `frame` of its capture, on the host's clock: the first read of its file
    that held it (Files' growth: host seconds, bytes), less the frames after it in that read at
    the card's rate (QEMU writes each card's output as it plays it). None when no read held it."""
    for seconds, size in growth:
        if size // 4 > frame:
            return seconds - (size // 4 - frame) / RATE
    return None


def offsets_ms(hda, usb, hda_growth, usb_growth):
    """Per marker, when the USB card played it less when the HDA card did (ms, the host's clock)."""
    times = [(played_at(usb_growth, u), played_at(hda_growth, h)) for (h, _), (u, _) in zip(hda, usb)]
    return [None if u is None or h is None else (u - h) * 1000 for u, h in times]


def check_multiroute(guest, bits, repeats, speaker, headphones):
    """The multiRoute session's route is the headphones and the USB card; both cards' files get
    every marker of the music in order, with the music between; the drift between them is
    printed (frames and ms from the first marker to the last, and the largest)."""
    MultirouteBegin.wait(guest, 600)
    MultirouteReady.wait(guest, 120)
    guest.files.capture("hda")
    guest.files.capture("usb")
    plug_usb(guest)
    playing = MultiroutePlaying.wait(guest, 180)
    outputs = route_uids(playing.status, "outputs")
    print(f"    the multiRoute session's outputs: {outputs}")
    print(f"    the route file: {playing.route_file}")
    faults = []
    if playing.alive != "alive":
        faults.append(f"aplay did not play (guest log multiroute-aplay.log): {playing.alive}")
    if len(outputs) != 2 or (headphones is not None and headphones not in outputs) or any(u in speaker for u in outputs):
        faults.append(f"the multiRoute route's outputs are {outputs}, expected the headphones {headphones} and the USB card")
    if "audioroute_route_output_1" not in playing.route_file:
        faults.append(f"the route file names no further output: {playing.route_file}")
    done = MultirouteDone.wait(guest, repeats * MULTIROUTE_FILE_SECONDS * 3 + 120)
    print(f"    aplay exited {done.status}; the plugin dropped frames on the USB card {done.drops} times, "
          f"repeated {done.repeats} times; {done.notes}")
    if done.status != 0:
        faults.append(f"aplay exited {done.status}: {done.notes}")
    growth = {name: guest.files.take_growth(name) for name in ("hda", "usb")}
    files = {name: left(guest.files.take(name)) for name in ("hda", "usb")}
    guest.command("device_del", id="usbcard")
    end = MultirouteEnd.wait(guest, 180)
    if route_uids(end.status, "outputs") != speaker:
        faults.append(f"after the phase the route's outputs are {route_uids(end.status, 'outputs')}, expected the speaker {speaker}")
    expected = [k for _ in range(repeats) for k in range(len(MULTIROUTE_PLACES))]
    marks = {name: find_marks(samples, bits) for name, samples in files.items()}
    for name, found in marks.items():
        levels = music_levels(files[name], found)
        # At least a quarter: on the emulated bench the further output is corrected in most pieces
        # (its card takes about 9% more frames), each correction breaking the tone's phase (0.35 seen).
        low = [round(x, 2) for x in levels if not 0.25 <= x <= 1.5]
        print(f"    the {name} card's file: {len(files[name]) / RATE:.1f} s, {len(found)} markers of {len(expected)}; "
              f"the music between them at {min(levels, default=0):.2f}-{max(levels, default=0):.2f} of its level as played")
        if [k for _, k in found] != expected:
            faults.append(f"the {name} card's file has the markers {[k for _, k in found]}, expected {expected}")
        if low:
            faults.append(f"the {name} card's file: the music after some markers is at {low} of its level as played")
    if [k for _, k in marks["hda"]] == expected == [k for _, k in marks["usb"]]:  # printed whatever else failed
        apart = drift(marks["hda"], marks["usb"])
        span = (marks["usb"][-1][0] - marks["usb"][0][0]) / RATE
        print(f"    frames the USB card played less the HDA card's, from the first marker to each (the plugin's "
              f"drops and repeats on the further output): {apart[-1]} over {span:.0f} s "
              f"({apart[-1] * 100 / max(1, span * RATE):.2f}%); per marker: {apart}")
        offsets = offsets_ms(marks["hda"], marks["usb"], growth["hda"], growth["usb"])
        if None in offsets:
            faults.append(f"a marker's time could not be read from the files' growth: {offsets}")
        else:
            moved = [o - offsets[0] for o in offsets]
            worst = max(moved, key=abs)
            print(f"    drift between the cards as played (the host's clock, each marker to about 25 ms): "
                  f"{moved[-1]:+.1f} ms from the first marker to the last, over {span:.0f} s; the largest {worst:+.1f} ms; "
                  f"the USB card {offsets[0]:+.1f} ms after the HDA card at the first; per marker (ms): "
                  f"{[round(m, 1) for m in moved]}")
            # The net drift, first marker to last: on the emulated bench the HDA card's pace swings
            # past what the correction takes at times (150 ms apart seen, back within 30 ms after).
            if abs(moved[-1]) > MOST_DRIFT_MS:
                faults.append(f"the cards drifted {moved[-1]:+.1f} ms apart (at most {MOST_DRIFT_MS} ms passes)")
    if faults:
        raise Failure("multiRoute: " + "; ".join(faults))
