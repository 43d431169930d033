"""The connect and disconnect cycles: `audioroute play` starts on the speaker, moves to the
headset when it connects, and pauses when it goes (the computer's side disconnects, then the
headset's, alternately; the last cycle kills the headset's bluealsa)."""
from dataclasses import dataclass
from typing import ClassVar

from ..common import Failure
from .logs import Ports, Report, Stamp, check_ports, fields, headset_ports, loud_between, ports_json

# The phase's part in the guest, which the image packs (bench/guest/).
SCRIPT = "bluetooth-cycles.sh"

HOW = {"computer": "Disconnect on the computer's side", "headset": "Disconnect on the headset's side",
       "bluealsa-killed": "the headset's bluealsa killed"}


@dataclass(frozen=True)
class BtReady(Stamp):
    """`bt-ready N UPTIME`: the player plays on the speaker; the cycle's Connect comes next."""
    words: ClassVar[str] = "bt-ready"
    script: ClassVar[str] = SCRIPT


@dataclass(frozen=True)
class HfpRetry(Report):
    """`hfp-retry CYCLE STATUS OUTPUT`: HFP was not up, its HF profile connected once more (the
    cycle's number, or `restart`)."""
    words: ClassVar[str] = "hfp-retry"
    script: ClassVar[str] = "bluetooth-checks.sh"
    cycle: str
    status: str

    @classmethod
    def parse(cls, line):
        said = fields(line, 2, cls.words)
        return cls(said[0], said[1])

    @classmethod
    def print_for(cls, lines, cycle):
        for retry in cls.every(lines):
            if retry.cycle == str(cycle):
                print(f"    HFP was not up: ConnectProfile(HF) again, exit status {retry.status}")


@dataclass(frozen=True)
class BtConnected(Ports):
    """`bt-connected N PORTS`: the route on the headset's A2DP, and the daemon's ports."""
    words: ClassVar[str] = "bt-connected"
    script: ClassVar[str] = SCRIPT
    numbered: ClassVar[bool] = True


@dataclass(frozen=True)
class BtDisconnect(Report):
    """`bt-disconnect N HOW`: the headset goes (computer, headset or bluealsa-killed)."""
    words: ClassVar[str] = "bt-disconnect"
    script: ClassVar[str] = SCRIPT
    n: str
    how: str

    @classmethod
    def parse(cls, line):
        said = fields(line, 2, cls.words)
        return cls(said[0], said[1])


@dataclass(frozen=True)
class BtDisconnected(Report):
    """`bt-disconnected N PLAYER ports PORTS`: after oldDeviceUnavailable, the player's last line
    and the daemon's ports."""
    words: ClassVar[str] = "bt-disconnected"
    script: ClassVar[str] = SCRIPT
    n: str
    player: str
    ports: list
    line: str  # as said, for the failure that quotes it

    @classmethod
    def parse(cls, line):
        n = fields(line, 1, cls.words)[0]
        head, separator, ports = line.partition(" ports ")
        if not separator:
            raise Failure(f"'{cls.key(n)}': no ports after the player's line: {line[:200]}")
        return cls(n, head[len(cls.key(n)):].strip(), ports_json(ports.strip(), cls.key(n)), line)


EVENTS = (BtReady, HfpRetry, BtConnected, BtDisconnect, BtDisconnected)


def check_cycle(guest, n, headset, computer):
    """Cycle n: the headset's ports while it is connected; once it went, the player paused, its
    ports gone and nothing more on the speaker (read from the HDA card's file between the reports)."""
    BtReady.wait(guest, 120, n)
    line = guest.wait_for(BtConnected.key(n), 120)
    HfpRetry.print_for(guest.lines(), n)
    connected = BtConnected.parse(line)
    check_ports(headset_ports(connected.ports, BtConnected.key(n), headset, computer), BtConnected.key(n), headset)
    how = BtDisconnect.wait(guest, 60, n).how
    before = guest.files.audible("hda")
    gone = BtDisconnected.wait(guest, 120, n)
    speaker = guest.files.audible("hda") - before
    if "paused" not in gone.player:
        raise Failure(f"cycle {n}: after the disconnect ({how}) the player does not say paused: {gone.line[:200]}")
    if headset_ports(gone.ports, gone.key(n), headset, computer):
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
        heard = loud_between(lines, BtReady.key(n), BtDisconnect.key(n))
        print(f"    cycle {n}: {heard:.2f} s of the tone reached the headset")
        if heard < 1.0:
            problems.append(f"cycle {n}: only {heard:.2f} s of the tone reached the headset (expected 2 s and more)")
    return problems
