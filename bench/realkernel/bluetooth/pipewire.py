"""test-real-bluetooth --server pipewire: the computer's Bluetooth is PipeWire's own bluez5 (no
BlueALSA on hci0); the headset stays BlueALSA on hci1. Its guest parts: the session
(bluetooth-pipewire-session.sh), the phase (bluetooth-pipewire.sh), the bus policy."""
import time
from dataclasses import dataclass
from typing import ClassVar

from ..common import Failure, phase
from .logs import Said, index_of, logged, route_changes
from .pairing import Paired

# The guest's parts (bench/guest/).
SESSION = "bluetooth-pipewire-session.sh"
SCRIPT = "bluetooth-pipewire.sh"
POLICY = "bluetooth-pipewire.conf"

# What the host needs beyond the default run's: the sound-server bench's PipeWire parts.
from ..server.image import NEEDS as SERVER_NEEDS  # noqa: E402
NEEDS = [n for n in SERVER_NEEDS if n[1] in ("pipewire-bin", "wireplumber", "pipewire-pulse", "pulseaudio-utils")]


@dataclass(frozen=True)
class PwReport(Said):
    script: ClassVar[str] = SCRIPT


class PwConnect(PwReport):
    """`pw-connect UPTIME`: the computer connects the headset next."""
    words = "pw-connect"


class PwCard(PwReport):
    """`pw-card UPTIME ACTIVE-PROFILE PROFILES`: PipeWire's bluez5 device for the headset appeared."""
    words = "pw-card"


class PwPorts(PwReport):
    """`pw-ports ACTIVE PROFILES PORTS`: both ports, the route on A2DP; the music starts next."""
    words = "pw-ports"


class PwMusic(PwReport):
    """`pw-music SINK PROFILE DEFAULT`: 3 s into the music."""
    words = "pw-music"


class PwCallStart(PwReport):
    """`pw-call-start UPTIME`: the call's stream (media.role Phone) starts."""
    words = "pw-call-start"


class PwCallProfile(PwReport):
    """`pw-call-profile UPTIME PROFILE`: the device's profile became headset-head-unit."""
    words = "pw-call-profile"


class PwCallDuring(PwReport):
    """`pw-call-during SINK DEFAULT-SINK DEFAULT-SOURCE ROUTE DAEMON`: 3 s into the call on HFP."""
    words = "pw-call-during"


class PwCallEnd(PwReport):
    """`pw-call-end UPTIME`: the call's stream is stopped."""
    words = "pw-call-end"


class PwAfterProfile(PwReport):
    """`pw-after-profile UPTIME PROFILE`: the device's profile is a2dp-sink again."""
    words = "pw-after-profile"


class PwAfter(PwReport):
    """`pw-after alive|exited SINK DEFAULT`: 4 s after the route came back to A2DP."""
    words = "pw-after"


class PwStatus(PwReport):
    """`pw-status STATUS`: `audioroute status` at the end."""
    words = "pw-status"


# The phase's events, checked against its script's words by bench/tests/test_events.py.
EVENTS = (PwConnect, PwCard, PwPorts, PwMusic, PwCallStart, PwCallProfile, PwCallDuring, PwCallEnd, PwAfterProfile, PwAfter, PwStatus)


# The reports in the guest's order, each with how long it may take after the one before.
ORDER = ((PwConnect, 240), (PwCard, 60), (PwPorts, 90), (PwMusic, 90), (PwCallStart, 30), (PwCallProfile, 60),
         (PwCallDuring, 60), (PwCallEnd, 30), (PwAfterProfile, 60), (PwAfter, 60), (PwStatus, 30))
# The headset's ear files (ear.asoundrc: one per rate and channels): A2DP's stereo, SCO's mono.
A2DP_FILES = ("/run/ear-48000-2.raw", "/run/ear-44100-2.raw")
SCO_FILES = ("/run/ear-16000-1.raw", "/run/ear-8000-1.raw")


def ear_seconds(lines, files, upto):
    """Seconds of loud audio the headset had received into `files` by the line `upto`."""
    last = {}
    for line in lines[:upto]:
        fields = line.split()
        if len(fields) == 5 and fields[0] == "ear" and fields[1] in files:
            last[fields[1]] = int(fields[4])
    return sum(loud / int(name.rsplit("-", 2)[1]) for name, loud in last.items())


def heard(lines, files, start, end):
    """Seconds of loud audio in `files` between two reports."""
    return ear_seconds(lines, files, index_of(lines, end.words)) - ear_seconds(lines, files, index_of(lines, start.words))


def check_run(guest):
    """The phase as the guest runs it, then what the ear heard; the problems."""
    with phase("pair", 240):
        Paired.wait(guest, 240)
    with phase("PipeWire's bluez5: music, a call, music again", 400):
        try:
            for report, seconds in ORDER:
                print("    " + report.wait(guest, seconds).line[:300])
        except Failure as failure:
            # The guest's own failure: its logs follow on the console (finish()), kept for the reader.
            if str(failure).startswith("the guest: "):
                deadline = time.monotonic() + 240
                while "end" not in guest.lines() and guest.qemu.poll() is None and time.monotonic() < deadline:
                    time.sleep(0.5)
            raise
    guest.wait_for("end", 120)
    guest.wait_exit(60)
    return check_logs(guest.lines())


def check_logs(lines):
    """What the headset's ear heard between the reports, the route's changes, SCO; the problems.
    (Apart from the run: a kept console.log can be checked again.)"""
    problems = []
    with phase("the headset's ear and the route", 1):
        music = heard(lines, A2DP_FILES, PwPorts, PwCallStart)
        during = heard(lines, A2DP_FILES, PwCallProfile, PwCallEnd)
        sco = heard(lines, SCO_FILES, PwCallProfile, PwCallEnd)
        after = heard(lines, A2DP_FILES, PwAfterProfile, PwAfter)
        print(f"    A2DP: {music:.2f} s of the music before the call, {during:.2f} s during it, {after:.2f} s after it")
        if music < 1.0:
            problems.append(f"the music did not reach the headset's A2DP ({music:.2f} s)")
        if during > 0.2:
            problems.append(f"the music went on on A2DP during the call ({during:.2f} s)")
        if after < 1.0:
            problems.append(f"the music did not come back on the headset's A2DP after the call ({after:.2f} s)")
        changes = route_changes(lines)
        print(f"    route changes: {changes}")
        headset = next((l.split()[4] for l in lines if l.startswith("addresses ")), "?")
        hfp, a2dp = [f"bt:{headset}:hfp"], [f"bt:{headset}:a2dp"]
        outputs = [c[1] for c in changes]
        if hfp not in outputs:
            problems.append(f"the call did not take the route to {hfp[0]}: {changes}")
        elif outputs[outputs.index(hfp) + 1:outputs.index(hfp) + 2] != [a2dp]:
            # (The phase's last change is the headset's Disconnect, to the speaker.)
            problems.append(f"after the call the route did not come back to {a2dp[0]}: {changes}")
        problems += check_sco(lines, sco)
    return problems


def check_sco(lines, seconds):
    """The call's audio at the headset's SCO file. btvirt 5.66 refuses SCO links (docs/bluetooth.md),
    so none is expected: a call with no voice frame is a problem unless PipeWire's SCO connect was
    refused; voice frames at the headset would mean btvirt was fixed (said, not a problem)."""
    # SPA's bluez5 runs in WirePlumber (its monitor), the nodes' I/O there too.
    said = [l for name in ("wireplumber-start", "wireplumber", "pipewire") for l in logged(lines, name) if "sco_do_connect" in l]
    print(f"    SCO: {seconds:.2f} s of the call at the headset; PipeWire's SCO connect: {said[:1] or 'no error'}")
    if seconds >= 1.0 or any("Connection refused" in l for l in said):
        return []
    return [f"the call reached the headset's SCO file for {seconds:.2f} s, and PipeWire's SCO connect was not refused: "
            f"the silence is not btvirt's ({said[:2] or 'no sco_do_connect line'})"]
