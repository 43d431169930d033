"""The hot-plug cycles: `audioroute play` (the player) and `aplay -D audioroute` (the plugin) follow
the USB card as it comes and goes, frame by frame."""
import time
from dataclasses import dataclass

from .analysis import frames_at_move, left, locate, signed_frames, timeline_breaks
from .common import Failure, phase
from .events import Report
from .harness import plug_usb
from .reports import CycleReport, aplay_session, numbered, one_more_output, port_uids
from .signals import RATE

# The phases' guest parts (bench/guest/): the player's cycles, and the plugin's.
GUEST_SCRIPT = "kernel/cycles.sh"
PLUGIN_GUEST_SCRIPT = "kernel/plugin.sh"


class CycleRead(CycleReport):
    """`WORDS N JSON`: a cycle's report whose last field its class's `read` makes of the CLI's JSON."""

    @classmethod
    def parse(cls, line):
        cycle, text = numbered(line, cls.words)
        return cls(line, cycle, text, cls.read(line, f"{cls.words} {cycle}"))


@dataclass(frozen=True)
class CyclePorts(CycleRead):
    """`WORDS N PORTS`: the uids of the daemon's usable outputs (`audioroute ports --json`) in cycle N."""
    read = staticmethod(port_uids)
    outputs: list


@dataclass(frozen=True)
class CycleSession(CycleRead):
    """`WORDS N STATUS`: aplay's one session in `audioroute status --json`, in plugin cycle N."""
    read = staticmethod(aplay_session)
    session: dict


# The player's cycles (`audioroute play`).
class Ready(CycleReport):
    """`ready N`: the player plays on the HDA card; the host hot-adds the USB card."""
    words, script = "ready", GUEST_SCRIPT


class Added(CyclePorts):
    """`added N PORTS`: the player plays on the USB card; the host removes it."""
    words, script = "added", GUEST_SCRIPT


class Removed(CyclePorts):
    """`removed N PORTS`: the USB card gone."""
    words, script = "removed", GUEST_SCRIPT


class Player(CycleReport):
    """`player N running LAST-LINE` or `player N exited STATUS LAST-LINES TRACE`: the player after the removal."""
    words, script = "player", GUEST_SCRIPT


class PlayerTrace(CycleReport):
    """`player-trace N LINE`: a line of the player's mover's trace (AUDIOROUTE_DEBUG)."""
    words, script = "player-trace", GUEST_SCRIPT


class PlayerTraceEnd(CycleReport):
    """`player-trace-end N`: after the cycle's trace."""
    words, script = "player-trace-end", GUEST_SCRIPT


# The plugin's cycles (`aplay -D audioroute`).
class PluginReady(CycleReport):
    """`plugin-ready M PID`: aplay runs on the HDA card."""
    words, script = "plugin-ready", PLUGIN_GUEST_SCRIPT


class PluginSessionsReady(CycleSession):
    """`plugin-sessions-ready M STATUS`: then; the host hot-adds the USB card."""
    words, script = "plugin-sessions-ready", PLUGIN_GUEST_SCRIPT


class PluginAdded(CycleReport):
    """`plugin-added M alive|exited`: aplay, with the USB card up."""
    words, script = "plugin-added", PLUGIN_GUEST_SCRIPT


class PluginSessionsAdded(CycleSession):
    """`plugin-sessions-added M STATUS`: then; the host removes the USB card."""
    words, script = "plugin-sessions-added", PLUGIN_GUEST_SCRIPT


class PluginRemoved(CycleReport):
    """`plugin-removed M alive|exited`: aplay, the USB card gone."""
    words, script = "plugin-removed", PLUGIN_GUEST_SCRIPT


class PluginSessionsRemoved(CycleSession):
    """`plugin-sessions-removed M STATUS`: then."""
    words, script = "plugin-sessions-removed", PLUGIN_GUEST_SCRIPT


class PluginReplugReady(CycleReport):
    """`plugin-replug-ready M`: the last cycle: the host plugs the USB card back under the held aplay."""
    words, script = "plugin-replug-ready", PLUGIN_GUEST_SCRIPT


class PluginReplugged(CycleReport):
    """`plugin-replugged M alive|exited`: aplay, the USB card back."""
    words, script = "plugin-replugged", PLUGIN_GUEST_SCRIPT


class PluginSessionsReplugged(CycleSession):
    """`plugin-sessions-replugged M STATUS`: then; the host removes the card again."""
    words, script = "plugin-sessions-replugged", PLUGIN_GUEST_SCRIPT


class PluginReplugRemoved(CycleReport):
    """`plugin-replug-removed M alive|exited`: aplay, the card gone again."""
    words, script = "plugin-replug-removed", PLUGIN_GUEST_SCRIPT


class PluginTrace(CycleReport):
    """`plugin-trace M LINE`: a line aplay said in plugin cycle M (the plugin's AUDIOROUTE_DEBUG trace, any error)."""
    words, script = "plugin-trace", PLUGIN_GUEST_SCRIPT


class PluginTraceEnd(CycleReport):
    """`plugin-trace-end M`: after the cycle's trace."""
    words, script = "plugin-trace-end", PLUGIN_GUEST_SCRIPT


class Stuck(Report):
    """`stuck NAME WCHAN SYSCALL SIGBLK`: an app that outlived its SIGTERM by 5 s (boot.sh's stop)."""
    words, script = "stuck", "boot.sh"

    @classmethod
    def parse(cls, line):
        return cls(line)


EVENTS = (Ready, Added, Removed, Player, PlayerTrace, PlayerTraceEnd, PluginReady, PluginSessionsReady, PluginAdded,
          PluginSessionsAdded, PluginRemoved, PluginSessionsRemoved, PluginReplugReady, PluginReplugged,
          PluginSessionsReplugged, PluginReplugRemoved, PluginTrace, PluginTraceEnd, Stuck)


def trace(guest, trace, end, n):
    """The lines of cycle n's trace (its `trace` events, once the guest said `end`)."""
    end.wait(guest, 30, n)
    return [e.text for e in (trace.parse(l) for l in guest.lines() if l.startswith(f"{trace.words} {n} "))]


def run_cycles(guest, cycles, bits):
    """`audioroute play` follows the route: per cycle, the ports, the player's state, and, as in the
    plugin's cycles, the signal's places in the HDA card's file before the add and in the USB
    card's file after it, frame by frame; after the removal, what reached either card."""
    files, adds, moves, usb_uid = guest.files, [], [], None
    speaker = None
    for n in range(1, cycles + 1):
        with phase(f"cycle {n}", 180):
            files.capture("hda")
            Ready.wait(guest, 60, n)
            files.capture("usb")
            added_at = time.monotonic()
            plug_usb(guest)
            added = Added.wait(guest, 120, n)
            at_add, usb_at_add = files.mark("hda"), files.mark("usb")
            onset = files.first_onset("usb", added_at)
            guest.command("device_del", id="usbcard")
            removed = Removed.wait(guest, 120, n)
            hda, usb = left(files.take("hda")), left(files.take("usb"))
            player = Player.wait(guest, 30, n)

            speaker, usb_uid = check_cycle_reports(added, removed, player, speaker, usb_uid)
            before, after = locate(hda[:at_add], bits), locate(hda[at_add:], bits)
            on_usb, usb_after = locate(usb[:usb_at_add], bits), locate(usb[usb_at_add:], bits)
            played, on_usb_frames = sum(r[2] for r in before), sum(r[2] for r in on_usb)
            reached, usb_reached = sum(r[2] for r in after), sum(r[2] for r in usb_after)
            if played < RATE // 2:
                raise Failure(f"cycle {n}: the HDA card's file has {played / RATE:.2f} s of the player's signal before the add, "
                              f"expected at least 0.5 s: the player did not start there")
            if on_usb_frames < RATE:
                raise Failure(f"cycle {n}: the USB card's file has {on_usb_frames / RATE:.2f} s of the player's signal while "
                              f"plugged: the player did not follow the route")
            first, last, moved = check_move(before, after, on_usb, f"cycle {n}", "the player", "the player's signal")
            moves.append(moved)
            print(f"    the player's signal: HDA {played / RATE:.2f} s up to frame {last}; USB {on_usb_frames / RATE:.2f} s "
                  f"from frame {first}: {move_words(moved)} at the move; after the removal HDA +{reached / RATE:.2f} s, "
                  f"USB +{usb_reached / RATE:.2f} s")
            # As for the plugin: a move's frames are reported (the timing phase sums them up), and
            # fail only beyond a buffer (0.5 s), where the plugin's cycles fail too.
            check_buffer(f"cycle {n}", moved, "the player's move")
            # From the removal on, the player holds then pauses: the speaker must not take over.
            # 0.1 s allows what the WAV files' stdio buffers held back.
            if reached > RATE // 10:
                raise Failure(f"cycle {n}: the HDA card played {reached / RATE:.2f} s of the player's signal after the USB card went")
            if usb_reached > RATE // 10:
                raise Failure(f"cycle {n}: the USB card's file gained {usb_reached / RATE:.2f} s after its removal")
            # The gap's ends, as the plugin's: (iii) this first USB frame, read on the host; (ii), in
            # cycle_timings, the RouteChanged `audioroute monitor` received (a client on the same bus,
            # its line stamped on arrival), not the player's own: the player does not log when its
            # RouteChanged arrived.
            adds.append((added_at, None if onset is None else files.guest_time(onset)))
    return adds, moves, speaker, usb_uid


def check_move(before, after, on_usb, what, client, signal):
    """A move's frames (frames_at_move: the first on the USB card, the last on the HDA card, those
    lost or played twice); the signal on the USB card while plugged, and the breaks on the HDA
    card before the move, printed. While plugged, the stream goes on from where it was: each run
    starts where the last ended. Glitches that keep the card's timeline, up to 10 ms twice a
    cycle, are reported, not failed; a skip or repeat that moves the timeline fails."""
    first, last, moved = frames_at_move(before, after, on_usb, what, client)
    jumps, glitches = timeline_breaks(on_usb)
    if jumps or len(glitches) > 2:
        raise Failure(f"{what}: on the USB card {signal} skipped or repeated frames {jumps + glitches} while plugged")
    if glitches:
        print(f"    glitches on the USB card, the timeline kept: {glitches} frames replaced")
    print_old_card_breaks(before)
    return first, last, moved


def move_words(moved):
    """A move's frames, lost (+) or played twice (-), as the cycles print them."""
    return (f"{'lost ' + str(moved) if moved >= 0 else 'played twice ' + str(-moved)} frames "
            f"({abs(moved) * 1000 / RATE:.1f} ms)")


def check_buffer(what, moved, move):
    """A move loses or repeats at most a buffer (0.5 s): what the old device held when it went."""
    if abs(moved) > RATE // 2:
        raise Failure(f"{what}: {abs(moved)} frames {'lost' if moved > 0 else 'played twice'} at {move}, "
                      f"more than a buffer (0.5 s)")


def check_cycle_reports(added, removed, player, speaker, usb_uid):
    """A player's cycle's reports: one USB port more while the card is there, the outputs before
    it (`speaker`; the first cycle's after the removal when None) after; the same USB port as
    before (`usb_uid`, when not None); the player there and paused. Returns the speaker's outputs
    and the USB port."""
    n = added.cycle
    with_usb, without = added.outputs, removed.outputs
    if speaker is None:
        speaker = without
    print(f"    ports with the USB card: {with_usb}")
    extra = one_more_output(with_usb, without, speaker, f"cycle {n}: with the USB card", f"cycle {n}: after the removal",
                            "one USB port")
    if usb_uid is not None and extra != usb_uid:
        raise Failure(f"cycle {n}: the re-added USB card's port is {extra}, not {usb_uid} as before")
    if player.state != "running" or not player.report.endswith("paused"):
        raise Failure(f"cycle {n}: after the removal the player should be there and paused: {player.report}")
    return speaker, extra


def check_plugin_sessions(m, session, on_usb_session):
    """aplay's session the same one, active, before and after the add: the stream moved, it was
    not opened again."""
    if not session["active"] or on_usb_session["path"] != session["path"] or not on_usb_session["active"]:
        raise Failure(f"plugin cycle {m}: aplay's session should be the same one, active, before and after the "
                      f"add: {session} then {on_usb_session}")


def print_old_card_breaks(before):
    """Skips and repeats on the HDA card before the move, while the USB card was being added:
    printed, never failed (what a move does is counted at the move). A skip of exactly 2048
    frames with nothing missing in the file is QEMU's: its HDA codec drops its whole 8 KiB ring
    when the ring overruns (hw/audio/hda-codec.c, hda_audio_output_cb), as under TCG when the
    guest stalls."""
    jumps, glitches = timeline_breaks(before)
    if jumps or glitches:
        print(f"    on the HDA card before the move, the signal skipped (+) or repeated (-) {jumps} frames; "
              f"glitches, the timeline kept: {glitches}")


def run_plugin_cycles(guest, cycles, bits, tower):
    """`aplay -D audioroute` follows the route: per cycle, the signal's places in the HDA card's
    file before the add and in the USB card's file after it, frame by frame; after the removal,
    what reached the speaker (with the tower: nothing, the stream is interrupted)."""
    files, adds, moves, problems, traces = guest.files, [], [], [], []
    for m in range(1, cycles + 1):
        with phase(f"plugin follows {m}", 180):
            files.capture("hda")
            PluginReady.wait(guest, 60, m)
            session = PluginSessionsReady.wait(guest, 30, m).session
            files.capture("usb")
            added_at = time.monotonic()
            plug_usb(guest)
            added = PluginAdded.wait(guest, 120, m)
            at_add = files.mark("hda")
            on_usb_session = PluginSessionsAdded.wait(guest, 30, m).session
            onset = files.first_onset("usb", added_at)
            usb = left(files.take("usb"))
            guest.command("device_del", id="usbcard")
            removed = PluginRemoved.wait(guest, 120, m)
            hda = left(files.take("hda"))
            held_session = PluginSessionsRemoved.wait(guest, 30, m).session
            replug = replug_usb(guest, m) if m == cycles else None
            if added.state != "alive":
                raise Failure(f"plugin cycle {m}: aplay -D audioroute did not outlive the add: {added.report}; it said: "
                              + " | ".join(plugin_trace(guest, m)))
            before, on_usb, after = locate(hda[:at_add], bits), locate(usb, bits), locate(hda[at_add:], bits)
            played = sum(r[2] for r in before)
            if played < RATE // 2:
                raise Failure(f"plugin cycle {m}: the HDA card's file has {played / RATE:.2f} s of aplay's signal before the add, "
                              f"expected at least 0.5 s")
            if sum(r[2] for r in on_usb) < RATE:
                raise Failure(f"plugin cycle {m}: the USB card's file has {sum(r[2] for r in on_usb) / RATE:.2f} s of aplay's "
                              f"signal while plugged: the stream did not follow the route")
            check_plugin_sessions(m, session, on_usb_session)
            # The HDA file's last 4 KiB may reach the file only when the card plays again (QEMU
            # writes it through stdio): after the removal, so frames_at_move counts the runs placed
            # before the USB card's first frame wherever they are.
            first, last, moved = check_move(before, after, on_usb, f"plugin cycle {m}", "aplay", "the signal")
            moves.append(moved)
            state = removed.state
            reached = sum(r[2] for r in after)
            print(f"    aplay's signal: HDA {played / RATE:.2f} s up to frame {last}; USB {sum(r[2] for r in on_usb) / RATE:.2f} s "
                  f"from frame {first}: {move_words(moved)} at the move; after the removal HDA +{reached / RATE:.2f} s, aplay {state}; "
                  f"its session {session['path']} ({session['category']}) active {session['active']}, after the add "
                  f"{on_usb_session['active']}, after the removal {held_session['active']}")
            # What the old device held when it went is allowed (docs/testing.md): aplay's buffer, at most 0.5 s.
            check_buffer(f"plugin cycle {m}", moved, "the move")
            trace = plugin_trace(guest, m)
            if state != "alive":
                raise Failure(f"plugin cycle {m}: after the removal aplay should still be there: {removed.report}; it said: "
                              + " | ".join(trace))
            # With the tower: the unplug interrupts the stream (routeDisconnected), nothing reaches
            # the speaker. 0.1 s allows what the WAV files' stdio buffers held back. Collected, so
            # that the cycles and the timing still run.
            if tower and (held_session["path"] != session["path"] or held_session["active"]):
                problems.append(f"plugin cycle {m}: after the removal aplay's session should be the same one, "
                                f"interrupted (inactive): {held_session}")
                print("    " + problems[-1])
            if tower and reached > RATE // 10:
                problems.append(f"plugin cycle {m}: {reached / RATE:.2f} s of aplay's signal reached the HDA card after "
                                f"the USB card went: the stream was not interrupted")
                print("    " + problems[-1])
            adds.append((added_at, None if onset is None else files.guest_time(onset)))
            traces.append(trace)
            if replug is not None:
                check_replug(replug, on_usb, session, bits, trace)
    return adds, moves, problems, traces


def replug_usb(guest, m):
    """The USB card plugged back under the aplay its removal held (the last plugin cycle): what the
    guest said, and the USB card's file while it was there."""
    files = guest.files
    PluginReplugReady.wait(guest, 60, m)
    files.capture("usb")
    plug_usb(guest)
    replugged = PluginReplugged.wait(guest, 120, m)
    session = PluginSessionsReplugged.wait(guest, 30, m).session
    usb = left(files.take("usb"))
    guest.command("device_del", id="usbcard")
    PluginReplugRemoved.wait(guest, 120, m)
    return replugged, session, usb


def check_replug(replug, before_unplug, session, bits, trace):
    """The held aplay went on on the card plugged back, by itself: alive, its session the same one
    and active again, and the signal on the card from where it stopped (what the card held when
    it went is lost with it), not from the start."""
    replugged, again, usb = replug
    runs = locate(usb, bits)
    heard = sum(r[2] for r in runs)
    stopped = max(r[1] + r[2] for r in before_unplug)
    if replugged.state != "alive":
        raise Failure(f"plugin re-plug: aplay did not outlive the re-plug: {replugged.report}; it said: " + " | ".join(trace))
    if again["path"] != session["path"] or not again["active"]:
        raise Failure(f"plugin re-plug: aplay's session should be the same one, active again: {session} then {again}")
    if heard < RATE:
        raise Failure(f"plugin re-plug: the USB card's file has {heard / RATE:.2f} s of aplay's signal after it came back, "
                      f"expected at least 1 s: the held stream did not go on (it said: {' | '.join(trace[-6:])})")
    resumed = runs[0][1]
    skipped = signed_frames(resumed - stopped)
    print(f"    re-plugged: aplay went on on the USB card from frame {resumed}, {skipped} frames after its last on the card "
          f"before the unplug ({skipped * 1000 / RATE:.1f} ms: what the card held when it went); {heard / RATE:.2f} s heard")
    if skipped < 0 or skipped > RATE // 2:
        raise Failure(f"plugin re-plug: the stream went on {skipped} frames from where it stopped: "
                      f"{'repeated' if skipped < 0 else 'more than a buffer lost'}")


def plugin_trace(guest, m):
    """What aplay said in plugin cycle m: the plugin's AUDIOROUTE_DEBUG trace, and any error."""
    said = trace(guest, PluginTrace, PluginTraceEnd, m)
    stuck = Stuck.find(guest.lines(), f"plugin-cycle-{m}")
    if stuck:
        raise Failure(f"plugin cycle {m}: aplay outlived its SIGTERM by 5 s ({stuck.report[6:]}); "
                      f"its last words: {' | '.join(said[-8:])}")
    return said
