"""The guest's reports (`say WORDS ...` lines on its console) read into values: ports, sessions,
fields, memory; the shapes several phases' events share; the card's file over a phase's reports."""
import json
from dataclasses import dataclass

from .common import Failure
from .events import Report, ports_field


def usable_output(port):
    """An output the route can take: a port whose jack reads unplugged is listed, unavailable."""
    return port.get("direction") == "output" and port.get("availability") != "unavailable"


def port_uids(line, words):
    """The uids of the usable outputs in a `<words> <audioroute ports --json>` report."""
    text = line[len(words):].strip()
    try:
        ports = json.loads(text)
    except ValueError:
        raise Failure(f"'{words}': `audioroute ports --json` printed no JSON: {text[:300]}")
    return sorted(p["uid"] for p in ports if usable_output(p))


def aplay_session(line, words):
    """aplay's one session in a `<words> <audioroute status --json>` report (the plugin names a
    session after its process)."""
    text = line[len(words):].strip()
    try:
        sessions = [s for s in json.loads(text).get("sessions", []) if s.get("app") == "aplay"]
    except ValueError:
        raise Failure(f"'{words}': `audioroute status --json` printed no JSON: {text[:300]}")
    if len(sessions) != 1:
        raise Failure(f"'{words}': expected one session of aplay's in the daemon, found {sessions}")
    return sessions[0]


def one_more_output(with_port, without, base, when_with, when_without, which):
    """The one output a port (the USB card's, the headphones') adds to `base`, the outputs before
    it (sorted uids); a Failure unless `with_port` is base and that one, and `without` base again.
    `when_with` and `when_without` begin the failure's sentence; `which`, the port expected."""
    extra = [u for u in with_port if u not in base]
    if len(extra) != 1 or sorted(base + extra) != with_port:
        raise Failure(f"{when_with} the outputs are {with_port}, expected {base} and {which}")
    if without != base:
        raise Failure(f"{when_without} the outputs are {without}, expected exactly {base}")
    return extra[0]


def report_fields(line, words):
    """A report's key=value fields before its JSON (an object or an array), and the JSON."""
    text = line[len(words):]
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=len(text))
    fields = dict(f.split("=", 1) for f in text[:start].split() if "=" in f)
    try:
        return fields, json.loads(text[start:])
    except ValueError:
        raise Failure(f"'{words}': no JSON from the CLI: {text[start:300]}")


def memory_report(line):
    """[(program, {VmRSS, VmHWM, RssAnon in kB})] from a `ucm-usb-memory` report."""
    processes = []
    for entry in line.split()[1:]:
        name, *fields = entry.split(",")
        if "[" in name and fields:
            processes.append((name[:name.index("[")], {k: int(v) for k, v in (f.split("=") for f in fields)}))
    return processes


def route_uids(status, side):
    """The uids of a side ("inputs", "outputs") of the route in `audioroute status --json`."""
    return [p.get("uid") for p in status.get("route", {}).get(side, [])]


def capture_report(line, words):
    """A capture report's fields before its `audioroute status --json`, and that status."""
    text = line[len(words):].strip()
    head, brace, rest = text.partition("{")
    try:
        return head.split(), json.loads(brace + rest)
    except ValueError:
        raise Failure(f"'{words}': `audioroute status --json` printed no JSON: {text[:300]}")


@dataclass(frozen=True)
class Alive(Report):
    """`WORDS alive|exited`: whether a phase's app (the music's aplay, a player) is still there."""
    alive: bool

    @classmethod
    def parse(cls, line):
        return cls(line, cls.fields(line)[:1] == ["alive"])


@dataclass(frozen=True)
class Text(Report):
    """`WORDS TEXT`: what a command printed, as one field (its lines joined by |)."""
    text: str

    @classmethod
    def parse(cls, line):
        return cls(line, line[len(cls.words):].strip())


@dataclass(frozen=True)
class Ports(Report):
    """`WORDS PORTS`: the daemon's ports (`audioroute ports --json`)."""
    ports: list

    @classmethod
    def parse(cls, line):
        return cls(line, ports_field(line, cls.words))


def numbered(line, words):
    """A cycle's report's number, after its words, and its text after that."""
    head, _, text = line[len(words):].strip().partition(" ")
    try:
        return int(head), text
    except ValueError:
        raise Failure(f"'{words}': no cycle number: {line[:300]}")


@dataclass(frozen=True)
class CycleReport(Report):
    """`WORDS N [TEXT]`: a report of a hot-plug cycle, its number first; `text`, what follows it."""
    cycle: int
    text: str

    @classmethod
    def parse(cls, line):
        return cls(line, *numbered(line, cls.words))

    @property
    def state(self):
        """The first field after the number (`alive` or `exited` where the guest says alive()), or ?."""
        return (self.text.split() or ["?"])[0]


@dataclass(frozen=True)
class Exited(Report):
    """`WORDS STATUS [LAST-LINES]`: an aplay that ended: its exit status, then what it said last."""
    exited: str

    @classmethod
    def parse(cls, line):
        return cls(line, " ".join(cls.fields(line)))

    @property
    def ok(self):
        """It exited 0."""
        return self.exited.split()[:1] == ["0"]


def capture_reports(guest, events, seconds=60):
    """Captures the HDA card's file over a phase's reports, in order: its data (S16 stereo bytes),
    each report's place in it (frames, by the event's words) and each event (by its class)."""
    files = guest.files
    files.capture("hda")
    marks, reports = {}, {}
    for event in events:
        reports[event] = event.wait(guest, seconds)
        marks[event.words] = files.mark("hda")
    return files.take("hda"), marks, reports
