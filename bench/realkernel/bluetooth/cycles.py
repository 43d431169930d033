"""The connect and disconnect cycles: `audioroute play` starts on the speaker, moves to the
headset when it connects, and pauses when it goes (the computer's side disconnects, then the
headset's, alternately; the last cycle kills the headset's bluealsa)."""
from ..common import Failure
from .logs import check_ports, headset_ports, loud_between

# The phase's part in the guest, which the image packs (bench/guest/).
SCRIPT = "bluetooth-cycles.sh"

HOW = {"computer": "Disconnect on the computer's side", "headset": "Disconnect on the headset's side",
       "bluealsa-killed": "the headset's bluealsa killed"}


def check_cycle(guest, n, headset, computer):
    """Cycle n: the headset's ports while it is connected; once it went, the player paused, its
    ports gone and nothing more on the speaker (read from the HDA card's file between the reports)."""
    guest.wait_for(f"bt-ready {n}", 120)
    words = f"bt-connected {n}"
    line = guest.wait_for(words, 120)
    for retry in (l for l in guest.lines() if l.startswith(f"hfp-retry {n} ")):
        print(f"    HFP was not up: ConnectProfile(HF) again, exit status {retry.split()[2]}")
    check_ports(headset_ports(line, words, headset, computer), words, headset)
    how = guest.wait_for(f"bt-disconnect {n}", 60).split()[2]
    before = guest.files.audible("hda")
    words = f"bt-disconnected {n}"
    line = guest.wait_for(words, 120)
    speaker = guest.files.audible("hda") - before
    if "paused" not in line.split(" ports ")[0]:
        raise Failure(f"cycle {n}: after the disconnect ({how}) the player does not say paused: {line[:200]}")
    if headset_ports(line.split(" ports ", 1)[1], "", headset, computer):
        raise Failure(f"cycle {n}: the headset's ports are still listed after the disconnect ({how})")
    how = HOW.get(how, how)
    print(f"    {how}: the player paused; the speaker played {speaker:.2f} s after it")
    if speaker > 0.05:
        raise Failure(f"cycle {n}: the speaker played {speaker:.2f} s after the headset went ({how})")


def check_arrivals(changes, cycles, headset):
    """The route changes to the headset's A2DP (each cycle's and the calls' returns) and away
    from it (each cycle's disconnect); the problems."""
    a2dp = f"bt:{headset}:a2dp"
    arrivals = [c for c in changes if c == ("newDeviceAvailable", [a2dp])]
    departures = [c for c in changes if c[0] == "oldDeviceUnavailable" and c[1] and c[1] != [a2dp]]
    print(f"    newDeviceAvailable to {a2dp}: {len(arrivals)}; oldDeviceUnavailable away from it: {len(departures)}")
    if len(arrivals) < cycles + 2 or len(departures) < cycles:
        return [f"route changes: {len(arrivals)} arrivals (expected {cycles + 2}) and {len(departures)} "
                f"departures (expected {cycles}): {changes}"]
    return []


def check_heard(lines, cycles):
    """The tone at the headset in each cycle, from the ear's reports; the problems."""
    problems = []
    for n in range(1, cycles + 1):
        heard = loud_between(lines, f"bt-ready {n}", f"bt-disconnect {n}")
        print(f"    cycle {n}: {heard:.2f} s of the tone reached the headset")
        if heard < 1.0:
            problems.append(f"cycle {n}: only {heard:.2f} s of the tone reached the headset (expected 2 s and more)")
    return problems
