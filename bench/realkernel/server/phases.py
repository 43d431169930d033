"""The sound-server bench's phases, host side, for PipeWire and for PulseAudio: the server alone,
the server driven by audiorouted (pw-play and paplay follow the USB card), aplay through the
plugin into the server, the tower on the server's own clients, and the server's switching
against the route. The truth of where audio went is the cards' WAV files. "The player" is
pw-play on PipeWire, paplay on PulseAudio."""
import time
from dataclasses import dataclass
from typing import ClassVar

from ..common import Failure
from ..events import Mark, Report
from ..harness import plug_usb
from ..reports import Alive, Exited, aplay_session
from ..timing import card1_moments, cycle_timings, first_audio
from ..tower import check_call, check_duck, check_silent

ALONE, FOLLOW, PLUGIN, TOWER, FIGHT, PROFILE = ("server/alone.sh", "server/follow.sh", "server/plugin.sh", "server/tower.sh", "server/fight.sh",
                                                "server/profile.sh")
# The clients of the follow phase, in the guest's order (server.sh's FOLLOW_CLIENTS), by server.
CLIENTS = {"pipewire": ("pw-play", "paplay"), "pulseaudio": ("paplay",)}
# The player of the other phases (server.sh's PLAYER_NAME), by server.
PLAYER = {"pipewire": "pw-play", "pulseaudio": "paplay"}


# The server alone: as shipped, then with the user's rule that makes a new USB card the default
# (WirePlumber: a rule ranking the USB card's sinks first; PulseAudio: module-switch-on-connect).
VARIANTS = ("stock", "rule")


class AloneReady(Mark):
    """`alone-ready VARIANT`: the player plays on the HDA sink, no audiorouted; the host hot-adds the USB card."""
    words, script = "alone-ready", ALONE


@dataclass(frozen=True)
class AloneAdded(Report):
    """`alone-added VARIANT SINK DEFAULT`: 6 s after the USB card's SOUND_INITIALIZED, the sink
    the player's stream is on and the server's default sink."""
    words: ClassVar[str] = "alone-added"
    script: ClassVar[str] = ALONE
    variant: str
    sink: str
    default: str

    @classmethod
    def parse(cls, line):
        fields = cls.fields(line) + ["", "", ""]
        return cls(line, fields[0], fields[1], fields[2])


class AloneDone(Mark):
    """`alone-done VARIANT`: the USB card gone and the player stopped."""
    words, script = "alone-done", ALONE


@dataclass(frozen=True)
class FollowReport(Report):
    """`WORDS CLIENT SINK...`: a follow step of one client, with the sink its stream is on."""
    script: ClassVar[str] = FOLLOW
    client: str
    sink: str

    @classmethod
    def parse(cls, line):
        fields = cls.fields(line) + ["", ""]
        return cls(line, fields[0], fields[1])


class FollowReady(FollowReport):
    """`follow-ready CLIENT`: the client plays on the HDA sink, audiorouted runs; the host hot-adds the USB card."""
    words = "follow-ready"


class FollowAdded(FollowReport):
    """`follow-added CLIENT SINK DEFAULT`: the client's stream reached the USB sink; the host removes the card."""
    words = "follow-added"


class FollowRemoved(FollowReport):
    """`follow-removed CLIENT SINK`: the card gone, the stream back on the HDA sink."""
    words = "follow-removed"


@dataclass(frozen=True)
class PluginRoute(Report):
    """`plugin-route N`: how many of the route file's PCMs name the server's `pulse`."""
    words: ClassVar[str] = "plugin-route"
    script: ClassVar[str] = PLUGIN
    count: int

    @classmethod
    def parse(cls, line):
        return cls(line, int((cls.fields(line) + ["0"])[0]))


@dataclass(frozen=True)
class PluginPlaying(Report):
    """`plugin-playing SINK STATUS`: aplay -D audioroute's stream's sink and the daemon's status JSON."""
    words: ClassVar[str] = "plugin-playing"
    script: ClassVar[str] = PLUGIN
    sink: str
    session: dict

    @classmethod
    def parse(cls, line):
        sink = (cls.fields(line) + [""])[0]
        return cls(line, sink, aplay_session(line, f"{cls.words} {sink}"))


@dataclass(frozen=True)
class PluginBusy(Report):
    """`plugin-busy PCM MESSAGE`: aplay on the card's own PCM while the server plays on the card: its last line."""
    words: ClassVar[str] = "plugin-busy"
    script: ClassVar[str] = PLUGIN
    pcm: str
    message: str

    @classmethod
    def parse(cls, line):
        pcm, _, message = line[len(cls.words):].strip().partition(" ")
        return cls(line, pcm, message)


# The tower phase: the kernel bench's tower checks (tower.py) on the server's own clients (the player
# with a media.role), with the same words, said by this bench's script.
class ServerDuckBefore(Mark):
    """`duck-before`: the Music stream has played alone for 1.5 s."""
    words, script = "duck-before", TOWER


class ServerDuckPrompt(Mark):
    """`duck-prompt`: the Navigation stream starts."""
    words, script = "duck-prompt", TOWER


class ServerDuckAfter(Exited):
    """`duck-after STATUS LAST-LINES`: 1 s after the Navigation stream's player ended."""
    words, script = "duck-after", TOWER


class ServerDuckEnd(Alive):
    """`duck-end alive|exited`: the Music stream's player, 1.5 s later."""
    words, script = "duck-end", TOWER


class ServerSilentBefore(Mark):
    """`silent-before`: the Notification stream has played for 1.5 s."""
    words, script = "silent-before", TOWER


class ServerSilentSwitch(Mark):
    """`silent-switch`: silent mode goes on."""
    words, script = "silent-switch", TOWER


class ServerSilentOn(Mark):
    """`silent-on`: 0.7 s after `audioroute silent on` returned."""
    words, script = "silent-on", TOWER


class ServerSilentOnEnd(Alive):
    """`silent-on-end alive|exited`: the Notification stream's player, silenced for 1.5 s."""
    words, script = "silent-on-end", TOWER


class ServerSilentOff(Mark):
    """`silent-off`: 0.7 s after `audioroute silent off` returned."""
    words, script = "silent-off", TOWER


class ServerSilentEnd(Alive):
    """`silent-end alive|exited`: the Notification stream's player, 1.5 s later."""
    words, script = "silent-end", TOWER


class ServerCallBefore(Mark):
    """`call-before`: the Music stream has played alone for 1.5 s."""
    words, script = "call-before", TOWER


class ServerCallStart(Mark):
    """`call-start`: the Phone stream's player starts."""
    words, script = "call-start", TOWER


class ServerCallDuring(Alive):
    """`call-during alive|exited`: the Music stream's player, 1.5 s into the call."""
    words, script = "call-during", TOWER


class ServerCallAfter(Exited):
    """`call-after STATUS LAST-LINES`: 1.5 s after the Phone stream's player ended."""
    words, script = "call-after", TOWER


class ServerCallEnd(Alive):
    """`call-end alive|exited`: the Music stream's player, 1.5 s later."""
    words, script = "call-end", TOWER


@dataclass(frozen=True)
class TowerSessions(Report):
    """`tower-sessions TEXT`: `audioroute status`'s sessions, with the server's streams among them."""
    words: ClassVar[str] = "tower-sessions"
    script: ClassVar[str] = TOWER
    text: str

    @classmethod
    def parse(cls, line):
        return cls(line, line[len(cls.words):].strip())


class FightReady(Mark):
    """`fight-ready`: the server's rule prefers USB sinks, the player plays on the HDA sink; the host hot-adds the USB card."""
    words, script = "fight-ready", FIGHT


@dataclass(frozen=True)
class FightUSB(Report):
    """`fight-usb UID`: the stream reached the USB sink; the USB port's uid, which the guest then ranks last."""
    words: ClassVar[str] = "fight-usb"
    script: ClassVar[str] = FIGHT
    uid: str

    @classmethod
    def parse(cls, line):
        return cls(line, (cls.fields(line) + [""])[0])


@dataclass(frozen=True)
class FightHeld(Report):
    """`fight-held SINK WIREPLUMBER-DEFAULT ROUTE`: 3 s after the route went back to the HDA card."""
    words: ClassVar[str] = "fight-held"
    script: ClassVar[str] = FIGHT
    sink: str
    default: str

    @classmethod
    def parse(cls, line):
        fields = cls.fields(line) + ["", ""]
        return cls(line, fields[0], fields[1])


class FightDone(Mark):
    """`fight-done`: the card gone, the server back without the rule."""
    words, script = "fight-done", FIGHT


@dataclass(frozen=True)
class ProfileStart(Report):
    """`profile-start CARD PROFILE ROUTE`: the HDA card's name in the server and its active profile,
    the route's outputs (`audioroute status`), before the profile is set to off."""
    words: ClassVar[str] = "profile-start"
    script: ClassVar[str] = PROFILE
    card: str
    profile: str

    @classmethod
    def parse(cls, line):
        fields = cls.fields(line) + ["", ""]
        return cls(line, fields[0], fields[1])


class ProfileOff(Mark):
    """`profile-off`: pactl set the HDA card's profile to off."""
    words, script = "profile-off", PROFILE


@dataclass(frozen=True)
class ProfileRestored(Report):
    """`profile-restored PROFILE DEFAULT-SINK`: the card's profile once it was not off any more (10 s
    at most), and the server's default sink."""
    words: ClassVar[str] = "profile-restored"
    script: ClassVar[str] = PROFILE
    profile: str
    sink: str

    @classmethod
    def parse(cls, line):
        fields = cls.fields(line) + ["", ""]
        return cls(line, fields[0], fields[1])


@dataclass(frozen=True)
class ProfilePlaying(Report):
    """`profile-playing SINK`: pw-play's stream on the HDA card's sink for 1 s."""
    words: ClassVar[str] = "profile-playing"
    script: ClassVar[str] = PROFILE
    sink: str

    @classmethod
    def parse(cls, line):
        return cls(line, (cls.fields(line) + [""])[0])


@dataclass(frozen=True)
class ProfileOutput(Report):
    """`profile-output PROFILE`: 1 s after pactl set output:analog-stereo (it serves the speaker)."""
    words: ClassVar[str] = "profile-output"
    script: ClassVar[str] = PROFILE
    profile: str

    @classmethod
    def parse(cls, line):
        return cls(line, (cls.fields(line) + [""])[0])


@dataclass(frozen=True)
class ProfileInput(Report):
    """`profile-input PROFILE DEFAULT-SOURCE ROUTE`: a Phone stream plays (the route records from the
    card's mic); the card's profile once it had an input (10 s at most), the default source."""
    words: ClassVar[str] = "profile-input"
    script: ClassVar[str] = PROFILE
    profile: str
    source: str

    @classmethod
    def parse(cls, line):
        fields = cls.fields(line) + ["", ""]
        return cls(line, fields[0], fields[1])


@dataclass(frozen=True)
class ProfileDone(Report):
    """`profile-done PROFILE`: the card's first profile set again."""
    words: ClassVar[str] = "profile-done"
    script: ClassVar[str] = PROFILE
    profile: str

    @classmethod
    def parse(cls, line):
        return cls(line, (cls.fields(line) + [""])[0])


PROFILE_EVENTS = (ProfileStart, ProfileOff, ProfileRestored, ProfilePlaying, ProfileOutput, ProfileInput, ProfileDone)

DUCK_EVENTS = (ServerDuckBefore, ServerDuckPrompt, ServerDuckAfter, ServerDuckEnd)
SILENT_EVENTS = (ServerSilentBefore, ServerSilentSwitch, ServerSilentOn, ServerSilentOnEnd, ServerSilentOff, ServerSilentEnd)
CALL_EVENTS = (ServerCallBefore, ServerCallStart, ServerCallDuring, ServerCallAfter, ServerCallEnd)

@dataclass(frozen=True)
class WireplumberAgain(Report):
    """`wireplumber-again COUNT ALSA devices; LOG`: WirePlumber had no sink for the HDA card within
    the wait and was started again; its ALSA devices then, and what its info log said of ALSA."""
    words: ClassVar[str] = "wireplumber-again"
    script: ClassVar[str] = "server.sh"
    text: str

    @classmethod
    def parse(cls, line):
        return cls(line, line[len(cls.words):].strip())


def print_restarts(lines):
    """Each time WirePlumber was started again for want of the HDA card's sink, what it had said."""
    for line in lines:
        if line.startswith(WireplumberAgain.words + " "):
            print(f"    WirePlumber started again, no sink for the HDA card yet: {WireplumberAgain.parse(line).text[:600]}")


EVENTS = (WireplumberAgain, AloneReady, AloneAdded, AloneDone, FollowReady, FollowAdded, FollowRemoved, PluginRoute, PluginPlaying, PluginBusy,
          *DUCK_EVENTS, *SILENT_EVENTS, *CALL_EVENTS, TowerSessions, FightReady, FightUSB, FightHeld, FightDone, *PROFILE_EVENTS)


def unplug_usb(guest):
    guest.command("device_del", id="usbcard")


def onset(files, name, after, seconds=5):
    """The host time of the first loud frame in card `name`'s file after `after`, waiting up to
    `seconds` for it (QEMU writes the file a 4 KiB block at a time, and a sink's first periods
    reach it late under TCG); None if none came."""
    deadline = time.monotonic() + seconds
    while True:
        found = files.first_onset(name, after)
        if found is not None or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def check_alone(guest, variant):
    """The server alone: where pw-play's stream is once the USB card is there, from the server and
    from the USB card's file. A measurement of the peer, not a check: returns the first USB frame's
    guest time, None when none came."""
    AloneReady.wait(guest, 180, variant)
    added_at = time.monotonic()
    plug_usb(guest)
    added = AloneAdded.wait(guest, 120, variant)
    # Waited for only where the server says the stream is on the USB sink.
    first = onset(guest.files, "usb", added_at, 5 if added.sink.startswith("alsa_output.usb") else 0)
    unplug_usb(guest)
    AloneDone.wait(guest, 120, variant)
    print(f"    the server alone ({variant}): 6 s after the USB card's SOUND_INITIALIZED, the stream on {added.sink}, "
          f"the default sink {added.default}; the USB card's file {'has' if first else 'has no'} tone")
    return guest.files.guest_time(first) if first else None


def check_follow(guest, client):
    """With audiorouted: the client's stream lands on the USB card (its file) and comes back to the
    HDA card's on removal. Returns the first USB frame's guest time."""
    files = guest.files
    FollowReady.wait(guest, 120, client)
    added_at = time.monotonic()
    plug_usb(guest)
    added = FollowAdded.wait(guest, 120, client)
    if not added.sink.startswith("alsa_output.usb"):
        raise Failure(f"follow: {client}'s stream is on {added.sink}, not the USB card's sink")
    first = onset(files, "usb", added_at)
    if first is None:
        raise Failure(f"follow: the server says {client}'s stream is on the USB sink, but the USB card's file has no tone")
    removed_at = time.monotonic()
    unplug_usb(guest)
    removed = FollowRemoved.wait(guest, 120, client)
    back = onset(files, "hda", removed_at)
    if back is None or not removed.sink.startswith("alsa_output.pci"):
        raise Failure(f"follow: after the removal {client}'s stream is on {removed.sink}; the HDA card's file "
                      f"{'has' if back else 'has no'} tone after it")
    print(f"    {client}: on the USB card's sink {first - added_at:.2f} s after the add (its file), back on the HDA "
          f"card's {back - removed_at:.2f} s after the removal")
    return files.guest_time(first)


def check_plugin(guest):
    """aplay -D audioroute: the route file names `pulse`, aplay's stream is on the HDA sink and its
    session active in the tower, and the HDA card's file has its tone."""
    route = PluginRoute.wait(guest, 60)
    if route.count < 2:
        raise Failure(f"plugin: the route file names the server's pulse PCM {route.count} times (the output's two names expected)")
    started = time.monotonic()
    playing = PluginPlaying.wait(guest, 60)
    if not playing.sink.startswith("alsa_output.pci"):
        raise Failure(f"plugin: aplay's stream is on {playing.sink!r}, not the HDA sink")
    if not playing.session.get("active"):
        raise Failure(f"plugin: aplay's session is not active: {playing.session}")
    heard = onset(guest.files, "hda", started - 3)
    if heard is None:
        raise Failure("plugin: the HDA card's file has no tone from aplay -D audioroute")
    print(f"    aplay -D audioroute: the route file names pulse; aplay's stream on {playing.sink}, its session "
          f"{playing.session.get('path', '?')} active; the HDA card's file has its tone")
    for pcm in ("dmix:CARD=Intel,DEV=0", "plughw:CARD=Intel,DEV=0"):
        busy = PluginBusy.wait(guest, 60, pcm)
        print(f"    aplay -D {pcm} while the server plays on the card: {busy.message}")
        if "busy" not in busy.message:
            raise Failure(f"plugin: aplay -D {pcm} while the server held the card did not fail busy: {busy.message!r}")


def server_events(lines):
    """The guest's stamped server events (server.sh's watch_server): (guest seconds, text)."""
    events = []
    for line in lines:
        if line.startswith("log server-events "):
            stamp, _, text = line[len("log server-events "):].partition(" ")
            try:
                events.append((float(stamp), text))
            except ValueError:
                continue
    return events


# The moments of the split, each the first server event after the kernel's add that matches.
SPLIT = (("USB sink new", lambda t: "'new' on sink #" in t),
         ("configured default", lambda t: "default.configured.audio.sink" in t and "usb" in t),
         ("default sink", lambda t: "'default.audio.sink'" in t and "usb" in t))


def print_split(lines, adds):
    """For each of the USB card's adds given (name, add index, first frame), the server's moments
    from the kernel's add, ms: its sink made, AudioRoute's configured default, WirePlumber's
    default, the first frame."""
    kernel_adds, _ = card1_moments(lines)
    events = server_events(lines)
    print("    the split, ms from the kernel's add: " + ", ".join(name for name, _ in SPLIT) + ", first frame")
    for name, index, frame in adds:
        if frame is None or index >= len(kernel_adds):
            continue
        start = kernel_adds[index]
        end = kernel_adds[index + 1] if index + 1 < len(kernel_adds) else float("inf")
        moments = [next((f"{(t - start) * 1000:.0f}" for t, text in events if start <= t < end and match(text)), "-")
                   for _, match in SPLIT]
        print(f"    {name:>28}: " + "  ".join(f"{m:>6}" for m in moments) + f"  {(frame - start) * 1000:6.0f}")


def print_first_audio(lines, alone, frames, clients):
    """First audio on the USB card against SOUND_INITIALIZED, both from the kernel's add: the
    server alone (its variants' adds are card1's first) and driven by audiorouted (the follow
    cycles' adds after them, one per client)."""
    print("    first audio on the USB card: its first frame (its file) against SOUND_INITIALIZED, both from the kernel's add")
    for n, (variant, frame) in enumerate(zip(VARIANTS, alone)):
        if frame is None:
            print(f"    the server alone ({variant}): no frame on the USB card")
            continue
        sound, first = first_audio(lines, n, frame)
        print(f"    the server alone ({variant}): {first * 1000:.0f} ms, SOUND_INITIALIZED {sound * 1000:.0f} ms: {first / sound:.2f}x")
    for (client, frame), (sound, _, first, _) in zip(zip(clients, frames), cycle_timings(lines, [(None, f) for f in frames], first=len(VARIANTS))):
        print(f"    {client} with audiorouted: {first * 1000:.0f} ms, SOUND_INITIALIZED {sound * 1000:.0f} ms: {first / sound:.2f}x")
    print_split(lines, [(f"the server alone ({v})", n, f) for n, (v, f) in enumerate(zip(VARIANTS, alone))]
                + [(f"{c} with audiorouted", len(VARIANTS) + n, f) for n, (c, f) in enumerate(zip(clients, frames))])


def check_tower(guest, player):
    """The server's own clients (`player`) as sessions: a Navigation stream ducks the Music stream
    to the duck gain, silent mode silences a Notification stream, a Phone stream pauses (on
    PulseAudio mutes) the music until it ends; the truth is the HDA card's file (the kernel
    bench's checks, tower.py)."""
    for name, check, events in (("duck", check_duck, DUCK_EVENTS), ("silent mode", check_silent, SILENT_EVENTS),
                                ("call", check_call, CALL_EVENTS)):
        print(f"    {name}:")
        check(guest, events)
    sessions = TowerSessions.wait(guest, 60)
    print(f"    audioroute status: {sessions.text}")
    if player not in sessions.text:
        raise Failure(f"tower: audioroute status does not list {player}'s stream as a session: {sessions.text}")


def check_fight(guest):
    """The server's rule preferring USB sinks, the user ranking the USB port last in AudioRoute: the
    stream ends on the HDA sink, where the route is, and stays there for 3 s (the server and the
    HDA card's file say so), while the USB card is still there."""
    files = guest.files
    FightReady.wait(guest, 180)
    plug_usb(guest)
    usb = FightUSB.wait(guest, 120)
    moved_at = time.monotonic()
    held = FightHeld.wait(guest, 120)
    back = onset(files, "hda", moved_at)
    unplug_usb(guest)
    FightDone.wait(guest, 180)
    print(f"    the USB port {usb.uid} ranked last with the server's rule preferring its sink: the stream on "
          f"{held.sink} 3 s later, the server's own default sink {held.default or '?'}; the HDA card's file "
          f"{'has' if back else 'has no'} the tone again")
    if not held.sink.startswith("alsa_output.pci") or back is None:
        raise Failure(f"fight: the stream did not end where the route is (the HDA card): {held.report}")


def check_profile(guest, player):
    """The HDA card's profile follows the route: set off under the route on its speaker, a profile
    with an output comes back and the player's tone (pw-play, paplay) reaches the card's file; output only under a Phone
    stream (the route records from the card's mic), a profile with an input and the card's source
    as the default. The profiles are the server's (pactl list cards)."""
    start = ProfileStart.wait(guest, 120)
    ProfileOff.wait(guest, 60)
    off_at = time.monotonic()
    restored = ProfileRestored.wait(guest, 60)
    print(f"    {start.card}: {start.profile}; set off, then {restored.profile} (the default sink {restored.sink})")
    if restored.profile in ("off", "pro-audio", "") or "output:" not in restored.profile:
        raise Failure(f"profile: the HDA card's profile stayed {restored.profile or '?'} after it was set off: {restored.report}")
    playing = ProfilePlaying.wait(guest, 60)
    heard = onset(guest.files, "hda", off_at)
    print(f"    {player}'s stream on {playing.sink}; the HDA card's file {'has' if heard else 'has no'} its tone")
    if heard is None:
        raise Failure("profile: the HDA card's file has no tone after its profile came back")
    output = ProfileOutput.wait(guest, 60)
    if output.profile != "output:analog-stereo":
        raise Failure(f"profile: output:analog-stereo serves the speaker and was not kept: {output.report}")
    found = ProfileInput.wait(guest, 60)
    print(f"    output only, then a Phone stream: {found.profile}, the default source {found.source}")
    if "input:" not in found.profile or not found.source.startswith("alsa_input.pci"):
        raise Failure(f"profile: with the route recording from the HDA card, its profile has no input or the default "
                      f"source is not the card's: {found.report}")
    done = ProfileDone.wait(guest, 60)
    print(f"    the card's first profile set again: {done.profile}")
