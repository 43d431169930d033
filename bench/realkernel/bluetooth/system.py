"""The system instance, last: the session daemon stopped, `audiorouted --system` as the user
`audioroute` (as an embedded install runs it); `audioroute play --system`, then `aplay -D
audioroute`, each started on the speaker, then the headset connected."""
import json
from dataclasses import dataclass
from typing import ClassVar

from ..common import Failure
from .logs import Report, fields, loud_between, print_trace, seconds, trace

# The phase's part in the guest, which the image packs (bench/guest/).
SCRIPT = "bluetooth-system.sh"


@dataclass(frozen=True)
class SystemDaemon(Report):
    """`system-daemon Uid: R E S F Groups: G... session-bus answers|none files FILE... ports PORTS`:
    the system instance's process (/proc's Uid and Groups lines), whether a daemon answers on the
    session bus, the route files there are, and `audioroute ports --system --json`."""
    words: ClassVar[str] = "system-daemon"
    script: ClassVar[str] = SCRIPT
    head: str  # before the ports, as said: printed
    uids: list
    groups: list
    session_bus: str
    files: list
    ports: list
    ports_text: str  # as said, for the failure that quotes it

    @classmethod
    def parse(cls, line):
        head, _, text = line.partition(" ports ")
        said = head.split()
        missing = [marker for marker in ("Uid:", "Groups:", "session-bus", "files") if marker not in said]
        if missing or said.index("session-bus") + 1 == len(said):
            raise Failure(f"'{cls.words}': {', '.join(missing) or 'session-bus'} missing from the report: {head[:200]}")
        try:
            ports = json.loads(text)
        except ValueError:
            raise Failure(f"system: `audioroute ports --system --json` printed no JSON: {text[:300]}")
        uid = said.index("Uid:")
        return cls(head, said[uid + 1:uid + 3], said[said.index("Groups:") + 1:], said[said.index("session-bus") + 1],
                   said[said.index("files") + 1:], ports, text)


@dataclass(frozen=True)
class Player(Report):
    """A report about one of the two players with nothing more than its words, or `alive|exited`,
    or the player's last line (`paused` in it once the headset went)."""
    said: list

    @classmethod
    def parse(cls, line):
        return cls(line.split()[1:])


@dataclass(frozen=True)
class Ready(Report):
    """`WORDS UPTIME`: the player plays on the speaker; the Connect comes next."""
    at: float

    @classmethod
    def parse(cls, line):
        return cls(seconds(fields(line, 1, cls.words)[0], cls.words))


@dataclass(frozen=True)
class SysPlayStart(Player):
    """`sys-play-start`: `audioroute play --system` plays on the speaker."""
    words: ClassVar[str] = "sys-play-start"
    script: ClassVar[str] = SCRIPT


@dataclass(frozen=True)
class SysPlayReady(Ready):
    """`sys-play-ready UPTIME`: a second later."""
    words: ClassVar[str] = "sys-play-ready"
    script: ClassVar[str] = SCRIPT


@dataclass(frozen=True)
class SysPlayMoved(Player):
    """`sys-play-moved PLAYER`: the route on the headset's A2DP, 2 s on."""
    words: ClassVar[str] = "sys-play-moved"
    script: ClassVar[str] = SCRIPT


@dataclass(frozen=True)
class SysPlayHeard(Player):
    """`sys-play-heard PLAYER`: 3 s later."""
    words: ClassVar[str] = "sys-play-heard"
    script: ClassVar[str] = SCRIPT


@dataclass(frozen=True)
class SysPlayAfter(Player):
    """`sys-play-after PLAYER`: 2 s after oldDeviceUnavailable."""
    words: ClassVar[str] = "sys-play-after"
    script: ClassVar[str] = SCRIPT
    line: str  # as said, for the failure that quotes it

    @classmethod
    def parse(cls, line):
        return cls(line.split()[1:], line)


@dataclass(frozen=True)
class SysAplayStart(Player):
    """`sys-aplay-start alive|exited`: `aplay -D audioroute` a second after its start, on the speaker."""
    words: ClassVar[str] = "sys-aplay-start"
    script: ClassVar[str] = SCRIPT


@dataclass(frozen=True)
class SysAplayReady(Ready):
    """`sys-aplay-ready UPTIME`: a second later."""
    words: ClassVar[str] = "sys-aplay-ready"
    script: ClassVar[str] = SCRIPT


@dataclass(frozen=True)
class SysAplayMoved(Player):
    """`sys-aplay-moved alive|exited`: the route on the headset's A2DP, 2 s on."""
    words: ClassVar[str] = "sys-aplay-moved"
    script: ClassVar[str] = SCRIPT


@dataclass(frozen=True)
class SysAplayHeard(Player):
    """`sys-aplay-heard alive|exited`: 3 s later."""
    words: ClassVar[str] = "sys-aplay-heard"
    script: ClassVar[str] = SCRIPT


EVENTS = (SystemDaemon, SysPlayStart, SysPlayReady, SysPlayMoved, SysPlayHeard, SysPlayAfter,
          SysAplayStart, SysAplayReady, SysAplayMoved, SysAplayHeard)
# The two players: who, and their reports (start, ready, moved, heard).
PLAYERS = (("audioroute play --system", SysPlayStart, SysPlayReady, SysPlayMoved, SysPlayHeard),
           ("aplay -D audioroute", SysAplayStart, SysAplayReady, SysAplayMoved, SysAplayHeard))


def check_system(guest):
    """`audiorouted --system` alone: `audioroute play --system`, then `aplay -D audioroute`, each
    started on the speaker, then the headset connected. The speaker's file is read at the reports;
    what reached the headset is checked from the ear's reports in check_heard."""
    daemon = SystemDaemon.wait(guest, 120)
    print("    " + daemon.head[len("system-daemon "):])
    if daemon.uids != ["998", "998"] or "29" not in daemon.groups:
        raise Failure(f"system: audiorouted --system does not run as the user audioroute (998) in group audio (29): {daemon.head[:200]}")
    if daemon.session_bus != "none":
        raise Failure("system: a daemon still answers on the session bus after the session daemon was stopped")
    if daemon.files != ["/run/audioroute/asound.conf"]:
        raise Failure(f"system: the route files are {daemon.files}, expected the system instance's /run/audioroute/asound.conf alone")
    if not [p for p in daemon.ports if p.get("type") == "builtInSpeaker"]:
        raise Failure(f"system: audiorouted --system lists no speaker: {daemon.ports_text[:300]}")
    for who, start, ready, moved, heard in PLAYERS:
        start.wait(guest, 120)
        before = guest.files.audible("hda")
        ready.wait(guest, 30)
        started = guest.files.audible("hda") - before
        if started < 0.5:
            raise Failure(f"system: {who} did not play on the speaker before the headset connected ({started:.2f} s in 1 s)")
        moved.wait(guest, 90)
        before = guest.files.audible("hda")
        said = heard.wait(guest, 30)
        leaked = guest.files.audible("hda") - before
        print(f"    {who}: {started:.2f} s on the speaker before the headset connected; with the route on the "
              f"headset, {leaked:.2f} s on the speaker in 3 s")
        if leaked > 0.05:
            raise Failure(f"system: {who} played {leaked:.2f} s on the speaker while the route was the headset")
        if heard is SysAplayHeard and "alive" not in said.said:
            raise Failure("system: aplay -D audioroute exited while the route was the headset")
        if heard is SysPlayHeard:
            before = guest.files.audible("hda")
            after_event = SysPlayAfter.wait(guest, 60)
            after = guest.files.audible("hda") - before
            if "paused" not in after_event.said:
                raise Failure(f"system: after the disconnect the player does not say paused: {after_event.line[:200]}")
            print(f"    Disconnect: the player paused; the speaker played {after:.2f} s after it")
            if after > 0.05:
                raise Failure(f"system: the speaker played {after:.2f} s after the headset went")


def check_heard(lines):
    """What reached the headset with the route on it, from the ear's reports; the problems."""
    problems = []
    for start, end, who in ((SysPlayMoved, SysPlayHeard, "audioroute play --system"),
                            (SysAplayMoved, SysAplayHeard, "aplay -D audioroute, the system instance")):
        heard = loud_between(lines, start.key(), end.key())
        print(f"    {who}: {heard:.2f} s of 3 s reached the headset")
        if heard < 1.5:
            problems.append(f"{who}: only {heard:.2f} s of 3 s reached the headset while the route was the headset")
    return problems


def check_trace(lines):
    """The plugin's open got a session in the system daemon's tower (its trace); the problems."""
    said = trace(lines, "aplay-system")
    print_trace(said[:8], "aplay -D audioroute with the system instance, its trace (AUDIOROUTE_DEBUG):")
    if not any("a session in the tower" in line for line in said[:1]):
        return ["aplay -D audioroute with the system instance: its open did not get a session in the system "
                f"daemon's tower: {said[:1]}"]
    return []
