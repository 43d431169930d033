"""What the Bluetooth phases read from the guest's console, in one place: their reports' common
form (Report: each phase declares its own), the guest's logs (`log NAME LINE`, as finish() sends
them), the daemon's monitor, the headset's ear (guest-ear's `ear FILE NS FRAMES LOUD`) and the
system bus's signals (dbus-monitor's log)."""
import json
from dataclasses import dataclass
from typing import ClassVar

from ..common import Failure
from ..events import Event


class Report(Event):
    """A Bluetooth phase's report. A numbered one (the cycle's number after its words: `bt-ready
    2 ...`) is waited for and found by its number, `n`."""

    @classmethod
    def key(cls, n=None):
        """The words a report starts with: its words, and its number when it has one."""
        return cls.words if n is None else f"{cls.words} {n}"

    @classmethod
    def wait(cls, guest, seconds, n=None):
        return cls.parse(guest.wait_for(cls.key(n), seconds))

    @classmethod
    def find(cls, lines, n=None):
        """The first such report in a console's lines; a Failure when the guest never said it."""
        return cls.parse(lines[index_of(lines, cls.key(n))])

    @classmethod
    def every(cls, lines):
        """Each such report in a console's lines, in order."""
        return [cls.parse(line) for line in lines if line == cls.words or line.startswith(cls.words + " ")]


# The shapes the phases' reports share; each phase's module declares its reports on them.
@dataclass(frozen=True)
class Marker(Report):
    """`WORDS ...`: a report the check only waits for."""

    @classmethod
    def parse(cls, line):
        return cls()


@dataclass(frozen=True)
class Said(Report):
    """`WORDS ...`: a report the check prints, or quotes, as the guest said it."""
    line: str

    @classmethod
    def parse(cls, line):
        return cls(line)


@dataclass(frozen=True)
class Stamp(Report):
    """`WORDS N TIME`: the cycle's number and a moment, /proc/uptime's seconds (the guest's
    CLOCK_BOOTTIME, CLOCK_MONOTONIC here as it never suspends), or CLOCK_MONOTONIC's nanoseconds."""
    nanoseconds: ClassVar[bool] = False
    n: str
    at: float

    @classmethod
    def parse(cls, line):
        said = fields(line, 2, cls.words)
        return cls(said[0], seconds(said[1], cls.words, cls.nanoseconds))


@dataclass(frozen=True)
class Alive(Report):
    """`WORDS [N] alive|exited` (or `dead`): whether a process was still there."""
    alive: bool

    @classmethod
    def parse(cls, line):
        return cls("alive" in line.split()[1:])


@dataclass(frozen=True)
class Ports(Report):
    """`WORDS [N] PORTS`: the daemon's `audioroute ports --json` (after the cycle's number when
    `numbered`)."""
    numbered: ClassVar[bool] = False
    ports: list

    @classmethod
    def parse(cls, line):
        words = cls.key(fields(line, 1, cls.words)[0]) if cls.numbered else cls.words
        return cls(ports_json(line[len(words):].strip(), words))


def fields(line, count, words):
    """A report's fields after its words, at least `count` of them; a Failure naming the report."""
    said = line.split()[1:]
    if len(said) < count:
        raise Failure(f"'{words}': {count} fields expected after the words, the guest said: {line[:200]}")
    return said


def seconds(text, words, nanoseconds=False):
    """A report's time field in seconds: /proc/uptime's seconds, or CLOCK_MONOTONIC's nanoseconds."""
    try:
        return int(text) / 1e9 if nanoseconds else float(text)
    except ValueError:
        raise Failure(f"'{words}': a time expected, the guest said '{text[:60]}'")


def ports_json(text, words):
    """The `audioroute ports --json` a report carries, or a Failure naming the report."""
    try:
        return json.loads(text)
    except ValueError:
        raise Failure(f"'{words}': `audioroute ports --json` printed no JSON: {text[:300]}")


def logged(lines, name):
    """The lines of one guest log, as finish() sent them (`log NAME LINE`)."""
    prefix = f"log {name} "
    return [line[len(prefix):] for line in lines if line.startswith(prefix)]


def trace(lines, name):
    """The plugin's trace (AUDIOROUTE_DEBUG) in an aplay's log."""
    return [line for line in logged(lines, name) if line.startswith("audioroute ")]


def print_trace(lines, header):
    """Lines of a trace, printed under their header."""
    print("    " + header)
    for line in lines:
        print("      " + line[:160])


def events(lines, monitor="monitor"):
    """The daemon's events from `audioroute monitor --json --timestamps` (the session daemon's;
    monitor-system: the system instance's)."""
    result = []
    for text in logged(lines, monitor):
        try:
            result.append(json.loads(text))
        except ValueError:
            pass
    return result


def route_changes(lines):
    """The session daemon's route changes: (reason, current outputs)."""
    return [(e.get("reason"), e.get("current", {}).get("outputs")) for e in events(lines) if e.get("event") == "routeChange"]


def index_of(lines, words):
    for i, line in enumerate(lines):
        if line == words or line.startswith(words + " "):
            return i
    raise Failure(f"the guest never said '{words}'")


def ear_at(lines, upto):
    """What had reached the headset by the line `upto`: (frames, loud frames), over every file."""
    last = {}
    for line in lines[:upto]:
        fields = line.split()
        if len(fields) == 5 and fields[0] == "ear":
            last[fields[1]] = (int(fields[3]), int(fields[4]))
    return sum(f for f, _ in last.values()), sum(l for _, l in last.values())


def loud_between(lines, start, end):
    """Seconds of loud audio (48 kHz frames) the headset received between two reports."""
    return (ear_at(lines, index_of(lines, end))[1] - ear_at(lines, index_of(lines, start))[1]) / 48000


def first_ear_after(lines, after):
    """The guest time of the first report of loud frames at the headset after `after` (s)."""
    previous = {}
    for line in lines:
        fields = line.split()
        if len(fields) == 5 and fields[0] == "ear":
            name, at, loud = fields[1], int(fields[2]) / 1e9, int(fields[4])
            if at > after and loud > previous.get(name, loud):
                return at
            previous[name] = loud
    return None


def bus_signals(lines):
    """dbus-monitor's signals (its log btsignals) as (CLOCK_MONOTONIC seconds, path, name, value):
    a property that PropertiesChanged changed, with its variant's text (`boolean true`, `string
    "active"`), or ("pcm", "A2DP-source") for BlueALSA's A2DP-source PCM added. dbus-monitor stamps
    the wall clock; guest-ear's pair of clocks maps it."""
    clocks = next((l.split() for l in lines if l.startswith("clocks ")), None)
    if clocks is None:
        raise Failure("guest-ear never printed its clocks")
    offset = (int(clocks[1]) - int(clocks[2])) / 1e9
    result = []
    stamp, path, member, changed = None, None, None, None
    for text in logged(lines, "btsignals"):
        fields = text.split()
        if fields and fields[0] == "signal":
            stamp = float(next(f for f in fields if f.startswith("time="))[5:])
            path = next((f[5:].rstrip(";") for f in fields if f.startswith("path=")), None)
            member = next((f[7:].rstrip(";") for f in fields if f.startswith("member=")), None)
            changed = None
        elif member == "PropertiesChanged" and text.startswith('string "') and changed is None:
            changed = text[8:-1]  # the interface's name first, then each property's
        elif member == "PropertiesChanged" and text.startswith("variant"):
            result.append((stamp - offset, path, changed, " ".join(fields[1:])))
        elif member == "PropertiesChanged" and text.startswith('string "'):
            changed = text[8:-1]
        elif member == "InterfacesAdded" and 'string "A2DP-source"' in text:
            result.append((stamp - offset, path, "pcm", "A2DP-source"))
            member = None
    return result


def signal_times(lines, device_path):
    """CLOCK_MONOTONIC seconds of BlueZ's and BlueALSA's signals about the headset: (Connected=true
    times, ServicesResolved=true times, BlueALSA A2DP-source PCM added times)."""
    signals = bus_signals(lines)
    on = lambda name: [t for t, path, what, value in signals if path == device_path and what == name and value == "boolean true"]
    return on("Connected"), on("ServicesResolved"), [t for t, _, what, _ in signals if what == "pcm"]


def transport_active_times(lines, prefix):
    """When an A2DP transport under `prefix` (a device's path, or an adapter's) went active: its
    stream started (BlueZ's MediaTransport1.State)."""
    return [t for t, path, what, value in bus_signals(lines)
            if path and path.startswith(prefix) and what == "State" and value == 'string "active"']


def headset_ports(ports, words, headset, computer):
    """The headset's ports (by type) among a report's ports; a Failure when the computer itself
    has ports."""
    mine = {p["type"]: p for p in ports if p["uid"].startswith("bt:")}
    if any(computer in p["uid"] for p in mine.values()):
        raise Failure(f"'{words}': the computer itself (hci1's view of hci0, {computer}) has ports: {sorted(mine)}")
    return mine


def check_ports(mine, words, headset):
    """The headset's two ports, each with its BlueALSA PCM."""
    expected = {"bluetoothA2DP": f"bluealsa:DEV={headset},PROFILE=a2dp", "bluetoothHFP": f"bluealsa:DEV={headset},PROFILE=sco"}
    got = {kind: port.get("alsa") for kind, port in mine.items()}
    if got != expected:
        raise Failure(f"'{words}': the headset's ports are {got}, expected {expected}")
