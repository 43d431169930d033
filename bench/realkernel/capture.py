"""The capture phase: two readers of the route's input through the plugin while the USB card comes and goes."""
import os, re
from dataclasses import dataclass

from .analysis import check_recording
from .common import Failure
from .harness import CAPTURE_SLOT, plug_usb
from .events import Report
from .reports import Text, capture_report, route_uids
from .signals import RATE

# The phase's guest part (bench/guest/).
GUEST_SCRIPT = "kernel/capture.sh"


class CaptureRoute(Text):
    """`capture-route TEXT`: the route file's input PCM (its lines joined by |)."""
    words, script = "capture-route", GUEST_SCRIPT


class CaptureHw(Text):
    """`capture-hw TEXT`: the first line of each of the card's capture substreams' status files."""
    words, script = "capture-hw", GUEST_SCRIPT


@dataclass(frozen=True)
class CaptureState(Report):
    """`WORDS alive|exited alive|exited STATUS`: the two readers and `audioroute status --json`."""
    readers: list
    status: dict

    @classmethod
    def parse(cls, line):
        readers, status = capture_report(line, cls.words)
        return cls(line, readers, status)


@dataclass(frozen=True)
class CaptureMoment(CaptureState):
    """`WORDS UPTIME alive|exited alive|exited STATUS`: the guest's uptime (s), then as CaptureState."""
    at: float

    @classmethod
    def parse(cls, line):
        fields, status = capture_report(line, cls.words)
        try:
            return cls(line, fields[1:], status, float(fields[0]))
        except (IndexError, ValueError):
            raise Failure(f"'{cls.words}': no uptime before the readers: {line[:300]}")


class CaptureReady(CaptureMoment):
    """`capture-ready ...`: 1.5 s after both readers started."""
    words, script = "capture-ready", GUEST_SCRIPT


class CaptureAdded(CaptureState):
    """`capture-added ...`: with the USB card plugged."""
    words, script = "capture-added", GUEST_SCRIPT


class CaptureRemoved(CaptureMoment):
    """`capture-removed ...`: after the USB card left."""
    words, script = "capture-removed", GUEST_SCRIPT


@dataclass(frozen=True)
class CaptureDone(Report):
    """`capture-done STATUS STATUS SIZE SIZE`: the readers' exit statuses after SIGTERM and their
    recordings' sizes (bytes), written to the virtio disk."""
    words, script = "capture-done", GUEST_SCRIPT
    statuses: list
    sizes: list

    @classmethod
    def parse(cls, line):
        fields = cls.fields(line)
        try:
            return cls(line, fields[:2], [int(x) for x in fields[2:4]])
        except ValueError:
            raise Failure(f"'{cls.words}': the recordings' sizes are not numbers: {line[:300]}")


EVENTS = (CaptureReady, CaptureRoute, CaptureHw, CaptureAdded, CaptureRemoved, CaptureDone)


# The capture phase's two readers' sessions, as `audioroute status --json` lists them.
CAPTURE_SESSIONS = [("aplay", "playAndRecord", []), ("aplay", "playAndRecord", ["mixWithOthers"])]


def check_capture_sessions(status, when):
    """Both readers' sessions active: neither interrupted the other."""
    sessions = sorted((x.get("app"), x.get("category"), x.get("options"), x.get("active")) for x in status.get("sessions", []))
    expected = sorted(app_category_options + (True,) for app_category_options in CAPTURE_SESSIONS)
    if sessions != expected:
        raise Failure(f"capture: {when}, the sessions are {sessions}, expected the readers' two, both active: {expected}")
    return sessions


def mic_reads(guest):
    """What QEMU read of the mic's signal file, one file per open of its PCM (mic_argv), in order."""
    directory, name = os.path.split(guest.mic_read)
    return sorted(os.path.join(directory, f) for f in os.listdir(directory) if f == name or f.startswith(name + "."))


def check_capture_ready(ready, route, hw, mic):
    """With the readers started (`capture-ready`, `capture-route`, `capture-hw`): both run, the
    route's input is the mic, the route file's input PCM the mic port's dsnoop, one hardware
    capture stream runs, and both sessions are active."""
    route, hw = route.text, hw.text
    print(f"    the route file's input: {route}")
    print(f"    the card's capture PCMs: {hw}")
    alive, status = ready.readers, ready.status
    if alive != ["alive", "alive"]:
        raise Failure(f"capture: the readers did not run: {alive} (guest logs capture-*.log)")
    if route_uids(status, "inputs") != [mic["uid"]]:
        raise Failure(f"capture: the route's input is {route_uids(status, 'inputs')}, expected the HDA mic {mic['uid']}")
    # dsnoop: the plugin's slave is the route's input PCM, the mic port's dsnoop; one hardware
    # stream runs (two readers could not share a hw PCM).
    mic_alsa = mic.get("alsa")
    if not (mic_alsa or "").startswith("dsnoop:") or mic_alsa not in route:
        raise Failure(f"capture: the route file's input is not the mic port's dsnoop PCM {mic_alsa}: {route}")
    running = re.findall(r"pcm(\d+)c/sub(\d+)/status: state: RUNNING", hw)
    if len(running) != 1:
        raise Failure(f"capture: expected one running hardware capture stream under two dsnoop readers, found {running}: {hw}")
    print(f"    sessions: {check_capture_sessions(status, 'with the readers started')}")


def check_capture_added(added, mic_uid, speaker):
    """With the USB card plugged: both readers run, both sessions active, the route's output the
    USB card's and its input still the mic."""
    alive, status = added.readers, added.status
    if alive != ["alive", "alive"]:
        raise Failure(f"capture: with the USB card plugged the readers are {alive}")
    check_capture_sessions(status, "with the USB card plugged")
    usb = [u for u in route_uids(status, "outputs") if u not in speaker]
    print(f"    with the USB card: outputs {route_uids(status, 'outputs')}, inputs {route_uids(status, 'inputs')}")
    if not usb or route_uids(status, "inputs") != [mic_uid]:
        raise Failure(f"capture: with the USB card the route is {status.get('route')}, expected the USB output and the HDA mic {mic_uid}")


def check_capture_removed(removed, mic_uid, speaker):
    """After the USB card left: both readers run, both sessions active, the route the speaker and the mic."""
    alive, status = removed.readers, removed.status
    if alive != ["alive", "alive"]:
        raise Failure(f"capture: after the USB card left the readers are {alive}")
    check_capture_sessions(status, "after the USB card left")
    if route_uids(status, "outputs") != speaker or route_uids(status, "inputs") != [mic_uid]:
        raise Failure(f"capture: after the removal the route is {status.get('route')}, expected {speaker} and {mic_uid}")


def check_capture(guest, bits, mic, speaker):
    """Two readers of `audioroute_capture` (dsnoop on the HDA mic) while the output-only USB
    card comes and goes: the route's input stays the mic, and each recording is the mic's
    signal, contiguous, from a stated start. QEMU read the signal file at the guest's pace."""
    mic_uid = mic["uid"]
    ready = CaptureReady.wait(guest, 600)
    check_capture_ready(ready, CaptureRoute.wait(guest, 5), CaptureHw.wait(guest, 5), mic)
    status = ready.status
    # The stream runs: the open of the mic's PCM it reads through is the last one so far.
    opens = mic_reads(guest)
    if not opens:
        raise Failure(f"capture: QEMU never opened the mic's PCM ({guest.mic_read} missing)")
    if route_uids(status, "outputs") != speaker:
        raise Failure(f"capture: the route's outputs are {route_uids(status, 'outputs')}, expected the speaker {speaker}")
    plug_usb(guest)
    check_capture_added(CaptureAdded.wait(guest, 180), mic_uid, speaker)
    guest.command("device_del", id="usbcard")
    removed = CaptureRemoved.wait(guest, 180)
    # The readers still run: no other open of the mic's PCM since capture-ready.
    reopened = mic_reads(guest)[len(opens):]
    check_capture_removed(removed, mic_uid, speaker)
    done = CaptureDone.wait(guest, 120)
    sizes = done.sizes
    print(f"    the readers' exit statuses after SIGTERM: {done.statuses}")
    with open(guest.capture_disk, "rb") as f:
        recordings = [f.read(sizes[0])]
        f.seek(CAPTURE_SLOT)
        recordings.append(f.read(sizes[1]))
    span = removed.at - ready.at
    faults, ends = [], []
    for (name, data) in zip(("playAndRecord session", "mixWithOthers session"), recordings):
        summary, found, first, end = check_recording(data, bits, f"the {name}'s recording")
        print(f"    the {name}'s recording: {summary}")
        faults += found
        if end is not None:
            ends.append(end)
            if end - first < span * RATE * 0.95:
                faults.append(f"the {name}'s recording holds {(end - first) / RATE:.2f} s of the signal, "
                              f"the guest recorded for more than {span:.2f} s")
    # QEMU's pace: what it read of the signal file is at most a few buffers (the codec's ring,
    # the kernel's and dsnoop's buffers) beyond the last frame the readers got.
    if reopened:
        faults.append(f"QEMU opened the mic's PCM again during the capture: {reopened}")
    read = os.path.getsize(opens[-1]) // 4
    ahead = read - max(ends) if ends else None
    print(f"    QEMU read {read} frames of the signal file (its open {len(opens)}); the readers' last frame "
          f"is place {max(ends) if ends else '-'}: QEMU was {ahead} frames ({(ahead or 0) * 1000 / RATE:.0f} ms) ahead")
    if ahead is not None and not 0 <= ahead <= RATE // 2:
        faults.append(f"QEMU read {read} frames of the signal file, {ahead} beyond the readers' last: not at the guest's pace")
    if faults:
        raise Failure("capture: " + "; ".join(faults))
