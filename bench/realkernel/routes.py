"""The route changes the client saw, over the whole run."""
import json

from .common import Failure
from .multiroute import MultirouteBegin, MultirouteEnd


def check_route_changes(lines, cycles, speaker, usb, headphones, surround=None, capture=False, hardware=False, multiroute=False):
    """The client saw, for each cycle, the route move to the USB port with newDeviceAvailable and
    back to the speaker with oldDeviceUnavailable, then the same for the headphone jack and for
    the hardware phase's USB card (`hardware`), the multichannel USB card, and no other route change. The multiRoute phase's own (between its
    multiroute-begin and multiroute-end) are its: it checks its route itself, and it must end on
    the speaker."""
    if multiroute:
        begin, end = MultirouteBegin.find(lines), MultirouteEnd.find(lines)
        if begin is None or end is None:
            raise Failure("the multiRoute phase did not say multiroute-begin and multiroute-end")
        monitor = [l for l in lines if l.startswith("log monitor ")]
        phase = [json.loads(l[len("log monitor "):]) for l in monitor[begin.monitor_lines:end.monitor_lines] if l.startswith("log monitor {")]
        phase = [c for c in phase if c.get("event") == "routeChange"]
        if phase and phase[-1]["current"]["outputs"] != speaker:
            raise Failure(f"the multiRoute phase's last route change went to {phase[-1]['current']['outputs']}, not the speaker {speaker}")
        lines = [l for l in lines if not l.startswith("log monitor ")] + monitor[:begin.monitor_lines] + monitor[end.monitor_lines:]
    changes = [json.loads(l[len("log monitor "):]) for l in lines if l.startswith("log monitor {")]
    changes = [(c["reason"], c["previous"]["outputs"], c["current"]["outputs"]) for c in changes if c.get("event") == "routeChange"]
    # A playAndRecord session (the call phase) changes the category, not the outputs: not a move.
    kept = [c for c in changes if c[0] == "categoryChange" and c[1] == c[2]]
    changes = [c for c in changes if c not in kept]
    expected = [("newDeviceAvailable", speaker, [usb]), ("oldDeviceUnavailable", [usb], speaker)] * cycles
    if headphones is not None:
        expected += [("newDeviceAvailable", speaker, [headphones]), ("oldDeviceUnavailable", [headphones], speaker)]
    if hardware:
        expected += [("newDeviceAvailable", speaker, [usb]), ("oldDeviceUnavailable", [usb], speaker)]
    if surround is not None:
        expected += [("newDeviceAvailable", speaker, [surround]), ("oldDeviceUnavailable", [surround], speaker)]
    if capture:
        expected += [("newDeviceAvailable", speaker, [usb]), ("oldDeviceUnavailable", [usb], speaker)]
    if changes != expected:
        raise Failure(f"the client's route changes were {changes}, expected {expected}")
    print(f"    {len(changes)} route changes, as expected: to {usb} and back, {cycles} times"
          + (f"; to {headphones} and back" if headphones else "")
          + (f"; to {usb} and back for the hardware phase" if hardware else "")
          + (f"; to {surround} and back" if surround else "")
          + (f"; to {usb} and back under the capture" if capture else "")
          + (f"; and {len(kept)} categoryChange keeping the outputs" if kept else ""))
