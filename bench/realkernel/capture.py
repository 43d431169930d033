"""The capture phase: two readers of the route's input through the plugin while the USB card comes and goes."""
import os, re

from .analysis import check_recording
from .common import Failure
from .harness import CAPTURE_SLOT, plug_usb
from .reports import capture_report, route_uids
from .signals import RATE

# The phase's guest part (bench/guest/).
GUEST_SCRIPT = "kernel/capture.sh"


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


def check_capture(guest, bits, mic, speaker):
    """Two readers of `audioroute_capture` (dsnoop on the HDA mic) while the output-only USB
    card comes and goes: the route's input stays the mic, and each recording is the mic's
    signal, contiguous, from a stated start. QEMU read the signal file at the guest's pace."""
    mic_uid = mic["uid"]
    ready_line = guest.wait_for("capture-ready", 600)
    route = guest.wait_for("capture-route", 5)[len("capture-route"):].strip()
    hw = guest.wait_for("capture-hw", 5)[len("capture-hw"):].strip()
    print(f"    the route file's input: {route}")
    print(f"    the card's capture PCMs: {hw}")
    (ready_at, *alive), status = capture_report(ready_line, "capture-ready")
    if alive != ["alive", "alive"]:
        raise Failure(f"capture: the readers did not run: {alive} (guest logs capture-*.log)")
    if route_uids(status, "inputs") != [mic_uid]:
        raise Failure(f"capture: the route's input is {route_uids(status, 'inputs')}, expected the HDA mic {mic_uid}")
    # dsnoop: the plugin's slave is the route's input PCM, the mic port's dsnoop; one hardware
    # stream runs (two readers could not share a hw PCM).
    mic_alsa = mic.get("alsa")
    if not (mic_alsa or "").startswith("dsnoop:") or mic_alsa not in route:
        raise Failure(f"capture: the route file's input is not the mic port's dsnoop PCM {mic_alsa}: {route}")
    running = re.findall(r"pcm(\d+)c/sub(\d+)/status: state: RUNNING", hw)
    if len(running) != 1:
        raise Failure(f"capture: expected one running hardware capture stream under two dsnoop readers, found {running}: {hw}")
    print(f"    sessions: {check_capture_sessions(status, 'with the readers started')}")
    # The stream runs: the open of the mic's PCM it reads through is the last one so far.
    opens = mic_reads(guest)
    if not opens:
        raise Failure(f"capture: QEMU never opened the mic's PCM ({guest.mic_read} missing)")
    if route_uids(status, "outputs") != speaker:
        raise Failure(f"capture: the route's outputs are {route_uids(status, 'outputs')}, expected the speaker {speaker}")
    plug_usb(guest)
    alive, status = capture_report(guest.wait_for("capture-added", 180), "capture-added")
    if alive != ["alive", "alive"]:
        raise Failure(f"capture: with the USB card plugged the readers are {alive}")
    check_capture_sessions(status, "with the USB card plugged")
    usb = [u for u in route_uids(status, "outputs") if u not in speaker]
    print(f"    with the USB card: outputs {route_uids(status, 'outputs')}, inputs {route_uids(status, 'inputs')}")
    if not usb or route_uids(status, "inputs") != [mic_uid]:
        raise Failure(f"capture: with the USB card the route is {status.get('route')}, expected the USB output and the HDA mic {mic_uid}")
    guest.command("device_del", id="usbcard")
    (removed_at, *alive), status = capture_report(guest.wait_for("capture-removed", 180), "capture-removed")
    if alive != ["alive", "alive"]:
        raise Failure(f"capture: after the USB card left the readers are {alive}")
    check_capture_sessions(status, "after the USB card left")
    # The readers still run: no other open of the mic's PCM since capture-ready.
    reopened = mic_reads(guest)[len(opens):]
    if route_uids(status, "outputs") != speaker or route_uids(status, "inputs") != [mic_uid]:
        raise Failure(f"capture: after the removal the route is {status.get('route')}, expected {speaker} and {mic_uid}")
    done = guest.wait_for("capture-done", 120).split()[1:]
    sizes = [int(x) for x in done[2:4]]
    print(f"    the readers' exit statuses after SIGTERM: {done[:2]}")
    with open(guest.capture_disk, "rb") as f:
        recordings = [f.read(sizes[0])]
        f.seek(CAPTURE_SLOT)
        recordings.append(f.read(sizes[1]))
    span = float(removed_at) - float(ready_at)
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
