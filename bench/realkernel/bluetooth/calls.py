"""The calls: music on the headset's A2DP, then a playAndRecord + voiceChat session that takes the
route to HFP; when it ends, the music comes back on A2DP. First with `audioroute play` as both
apps (the call phase), then with plain aplay through the plugin (the plugin call phase)."""
from dataclasses import dataclass
from typing import ClassVar

from ..common import Failure
from .logs import Said, logged, loud_between, print_trace, trace

# The phase's part in the guest, which the image packs (bench/guest/).
SCRIPT = "bluetooth-calls.sh"


@dataclass(frozen=True)
class Ended(Said):
    """A call's end: `WORDS STATUS ...`, the call's exit status ("?" when the guest said none)."""
    status: str

    @classmethod
    def parse(cls, line):
        said = line.split()
        return cls(line=line, status=said[1] if len(said) > 1 else "?")


@dataclass(frozen=True)
class Music(Said):
    """The music's aplay through the plugin's call: `WORDS alive|exited STATUS`."""
    alive: bool

    @classmethod
    def parse(cls, line):
        return cls(line=line, alive=line.split()[1:2] == ["alive"])


@dataclass(frozen=True)
class CallStart(Said):
    """`call-start`: the music plays on the headset; the call starts next."""
    words: ClassVar[str] = "call-start"
    script: ClassVar[str] = SCRIPT


@dataclass(frozen=True)
class CallEnded(Ended):
    """`call-ended STATUS OUTPUT`: `audioroute play`'s call, its exit status and last lines."""
    words: ClassVar[str] = "call-ended"
    script: ClassVar[str] = SCRIPT


@dataclass(frozen=True)
class CallAfter(Said):
    """`call-after PLAYER STATUS`: 3 s after the route came back to the headset's A2DP."""
    words: ClassVar[str] = "call-after"
    script: ClassVar[str] = SCRIPT


@dataclass(frozen=True)
class PluginCallStart(Said):
    """`plugin-call-start`: the music's aplay plays; the call's aplay starts next."""
    words: ClassVar[str] = "plugin-call-start"
    script: ClassVar[str] = SCRIPT


@dataclass(frozen=True)
class PluginCallDuring(Music):
    """`plugin-call-during alive|exited STATUS`: 1.5 s into the call."""
    words: ClassVar[str] = "plugin-call-during"
    script: ClassVar[str] = SCRIPT


@dataclass(frozen=True)
class PluginCallEnded(Ended):
    """`plugin-call-ended STATUS`: the call's aplay, its exit status."""
    words: ClassVar[str] = "plugin-call-ended"
    script: ClassVar[str] = SCRIPT


@dataclass(frozen=True)
class PluginCallAfter(Music):
    """`plugin-call-after alive|exited STATUS`: 3 s after the call ended."""
    words: ClassVar[str] = "plugin-call-after"
    script: ClassVar[str] = SCRIPT


EVENTS = (CallStart, CallEnded, CallAfter, PluginCallStart, PluginCallDuring, PluginCallEnded, PluginCallAfter)


def check_call(guest):
    """`audioroute play` as the call: nothing on the speaker while it lasts; its end printed."""
    CallStart.wait(guest, 120)
    before = guest.files.audible("hda")
    print("    " + CallEnded.wait(guest, 60).line[:200])
    CallAfter.wait(guest, 60)
    if guest.files.audible("hda") - before > 0.05:
        raise Failure("something played on the speaker during the call")


def check_plugin_call(guest):
    """aplay as the call: the music's aplay lives through it, and nothing reaches the speaker."""
    PluginCallStart.wait(guest, 120)
    # The plugin's call finds the headset's A2DP PCM busy (BlueALSA's PCMs are exclusive, and
    # the music holds it): it activates its session, the tower interrupts the music and
    # routes to HFP, and the call opens the SCO PCM, whose link btvirt refuses (reported).
    before = guest.files.audible("hda")
    for event in (PluginCallDuring, PluginCallEnded, PluginCallAfter):
        said = event.wait(guest, 60)
        print("    " + said.line[:160])
        if isinstance(said, Music) and not said.alive:
            raise Failure(f"the music's aplay did not live through the plugin's call: {said.line[:200]}")
    if guest.files.audible("hda") - before > 0.05:
        raise Failure("something played on the speaker during the plugin's call")


def check_route_changes(changes, headset):
    """Both calls took the route to HFP, and it did not stay there; the problems."""
    hfp = f"bt:{headset}:hfp"
    problems = []
    to_hfp = [c for c in changes if c[1] == [hfp]]
    print(f"    the calls (audioroute play, then aplay -D audioroute): route changes to {hfp}: {to_hfp}")
    if len(to_hfp) < 2:
        problems.append(f"the calls' sessions took the route to HFP {len(to_hfp)} times, expected twice (the player's "
                        f"and the plugin's): {changes}")
    last = changes[-1][1] if changes else None
    if last == [hfp]:
        problems.append("the headset was left in HFP at the end")
    return problems


def check_music_back(lines):
    """After each call, the music at the headset again, from the ear's reports; the problems."""
    problems = []
    for start, end, who in ((CallEnded, CallAfter, "audioroute play"), (PluginCallEnded, PluginCallAfter, "aplay")):
        heard = loud_between(lines, start.key(), end.key())
        print(f"    the music ({who}) after the call: {heard:.2f} s reached the headset")
        if heard < 1.0:
            problems.append(f"after the call the music ({who}) did not come back to the headset ({heard:.2f} s)")
            if who == "aplay":
                print_trace(trace(lines, "aplay-call-music")[-12:], "the music's trace (AUDIOROUTE_DEBUG), its last lines:")
    return problems


def print_call_trace(lines):
    """The plugin's call, its trace."""
    print_trace(trace(lines, "aplay-call")[:12], "the plugin's call, its trace (AUDIOROUTE_DEBUG):")


def check_sco(lines):
    """Why the calls ended as they did: btvirt's refusal of the SCO link; the problems."""
    problems = []
    sco = [l for l in lines if l.startswith("ear ") and ("-16000-1" in l or "-8000-1" in l)]
    refused = [l for l in logged(lines, "bluealsa-src") if "SCO link" in l]
    print(f"    SCO: {len(sco)} reports of voice frames at the headset; BlueALSA: {refused[:1] or 'no SCO error'}")
    # btvirt 5.66 refuses SCO links (docs/bluetooth.md), so both calls fail, and that refusal
    # must be why: a call that fails with the SCO link up, or ends well with no voice frame
    # at the headset, is a fault of ours.
    for event, who in ((CallEnded, "audioroute play"), (PluginCallEnded, "aplay -D audioroute")):
        said = event.every(lines)
        status = said[0].status if said else "?"
        if status != "0" and not refused:
            problems.append(f"the call ({who}) ended {status}, and BlueALSA did not refuse the SCO link: the failure is not btvirt's")
        if status == "0" and not sco:
            problems.append(f"the call ({who}) ended 0, but no voice frame reached the headset")
    return problems
