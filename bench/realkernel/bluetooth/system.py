"""The system instance, last: the session daemon stopped, `audiorouted --system` as the user
`audioroute` (as an embedded install runs it); `audioroute play --system`, then `aplay -D
audioroute`, each started on the speaker, then the headset connected."""
import json

from ..common import Failure
from .logs import logged, loud_between

# The two players, by the words their reports start with.
PLAYERS = (("audioroute play --system", "sys-play"), ("aplay -D audioroute", "sys-aplay"))

# The phase's part in the guest, which the image packs (bench/guest/).
SCRIPT = "bluetooth-system.sh"


def check_system(guest):
    """`audiorouted --system` alone: `audioroute play --system`, then `aplay -D audioroute`, each
    started on the speaker, then the headset connected. The speaker's file is read at the reports;
    what reached the headset is checked from the ear's reports in check_heard."""
    line = guest.wait_for("system-daemon", 120)
    head, _, ports = line.partition(" ports ")
    print("    " + head[len("system-daemon "):])
    words = head.split()
    if words[words.index("Uid:") + 1:words.index("Uid:") + 3] != ["998", "998"] or "29" not in words[words.index("Groups:") + 1:]:
        raise Failure(f"system: audiorouted --system does not run as the user audioroute (998) in group audio (29): {head[:200]}")
    if words[words.index("session-bus") + 1] != "none":
        raise Failure("system: a daemon still answers on the session bus after the session daemon was stopped")
    files = words[words.index("files") + 1:]
    if files != ["/run/audioroute/asound.conf"]:
        raise Failure(f"system: the route files are {files}, expected the system instance's /run/audioroute/asound.conf alone")
    try:
        speaker = [p for p in json.loads(ports) if p.get("type") == "builtInSpeaker"]
    except ValueError:
        raise Failure(f"system: `audioroute ports --system --json` printed no JSON: {ports[:300]}")
    if not speaker:
        raise Failure(f"system: audiorouted --system lists no speaker: {ports[:300]}")
    for who, prefix in PLAYERS:
        guest.wait_for(f"{prefix}-start", 120)
        before = guest.files.audible("hda")
        guest.wait_for(f"{prefix}-ready", 30)
        started = guest.files.audible("hda") - before
        if started < 0.5:
            raise Failure(f"system: {who} did not play on the speaker before the headset connected ({started:.2f} s in 1 s)")
        guest.wait_for(f"{prefix}-moved", 90)
        before = guest.files.audible("hda")
        line = guest.wait_for(f"{prefix}-heard", 30)
        leaked = guest.files.audible("hda") - before
        print(f"    {who}: {started:.2f} s on the speaker before the headset connected; with the route on the "
              f"headset, {leaked:.2f} s on the speaker in 3 s")
        if leaked > 0.05:
            raise Failure(f"system: {who} played {leaked:.2f} s on the speaker while the route was the headset")
        if prefix == "sys-aplay" and "alive" not in line.split():
            raise Failure("system: aplay -D audioroute exited while the route was the headset")
        if prefix == "sys-play":
            before = guest.files.audible("hda")
            line = guest.wait_for("sys-play-after", 60)
            after = guest.files.audible("hda") - before
            if "paused" not in line.split():
                raise Failure(f"system: after the disconnect the player does not say paused: {line[:200]}")
            print(f"    Disconnect: the player paused; the speaker played {after:.2f} s after it")
            if after > 0.05:
                raise Failure(f"system: the speaker played {after:.2f} s after the headset went")


def check_heard(lines):
    """What reached the headset with the route on it, from the ear's reports; the problems."""
    problems = []
    for start, end, who in (("sys-play-moved", "sys-play-heard", "audioroute play --system"),
                            ("sys-aplay-moved", "sys-aplay-heard", "aplay -D audioroute, the system instance")):
        heard = loud_between(lines, start, end)
        print(f"    {who}: {heard:.2f} s of 3 s reached the headset")
        if heard < 1.5:
            problems.append(f"{who}: only {heard:.2f} s of 3 s reached the headset while the route was the headset")
    return problems


def check_trace(lines):
    """The plugin's open got a session in the system daemon's tower (its trace); the problems."""
    trace = [l for l in logged(lines, "aplay-system") if l.startswith("audioroute ")]
    print("    aplay -D audioroute with the system instance, its trace (AUDIOROUTE_DEBUG):")
    for line in trace[:8]:
        print("      " + line[:160])
    if not any("a session in the tower" in l for l in trace[:1]):
        return ["aplay -D audioroute with the system instance: its open did not get a session in the system "
                f"daemon's tower: {trace[:1]}"]
    return []
