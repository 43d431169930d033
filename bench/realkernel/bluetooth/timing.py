"""The timing, from the logs once the guest has powered off (reported, not asserted): per cycle,
Device1.Connected to RouteChanged and to the first loud frame at the headset; the first frame
split, the player's against the floor's; the system instance's players."""
from ..common import Failure, median, phase
from .cycles import BtReady
from .floor import FloorOpen, FloorReady, FloorTrigger
from .logs import events, first_ear_after, signal_times, transport_active_times
from .system import PLAYERS


def print_timing(lines, headset, cycles):
    """Per cycle: Device1.Connected to RouteChanged, and to the first loud frame at the headset."""
    with phase("timing", 1):
        connected, resolved, pcms = signal_times(lines, "/org/bluez/hci0/dev_" + headset.replace(":", "_"))
        arrivals = [e["monotonicNs"] / 1e9 for e in events(lines)
                    if e.get("event") == "routeChange" and e.get("reason") == "newDeviceAvailable"
                    and e.get("current", {}).get("outputs") == [f"bt:{headset}:a2dp"]]
        rows = []
        after = lambda times, at: next((t for t in times if t >= at), None)
        for n in range(1, cycles + 1):
            # The cycle's Connect comes after its bt-ready report (stamped with /proc/uptime, the
            # guest's CLOCK_BOOTTIME: CLOCK_MONOTONIC here, as the guest never suspends).
            ready = BtReady.find(lines, n).at
            at = after(connected, ready)
            if at is None:
                raise Failure(f"cycle {n}: no Device1.Connected=true from BlueZ after bt-ready (dbus-monitor's log)")
            rows.append((n, at, after(resolved, at), after(pcms, at), after(arrivals, at - 0.5), first_ear_after(lines, at)))
        print("    from Device1.Connected, ms: ServicesResolved, BlueALSA's A2DP PCM, the client's RouteChanged, "
              "the first frame at the headset (audioroute play)")
        for n, at, *moments in rows:
            print(f"    cycle {n}: " + "  ".join(f"{'-' if t is None else f'{(t - at) * 1000:.0f}':>6}" for t in moments))
        columns = [[r[k] - r[1] for r in rows if r[k] is not None] for k in range(2, 6)]
        print("    median   " + "  ".join(f"{median(c) * 1000 if c else float('nan'):6.0f}" for c in columns))
        print("    worst    " + "  ".join(f"{max(c, default=float('nan')) * 1000:6.0f}" for c in columns))
        print("    (the headset's frames are read every 10 ms from bluealsa-aplay's file)")
        print_split(lines, headset, cycles, rows, connected, arrivals, after)


def print_split(lines, headset, cycles, rows, connected, arrivals, after):
    """The first frame, split: the player's cycles (it moves at RouteChanged) against the floor's
    (a plain aplay on BlueALSA's PCM, started by a client at RouteChanged). From the start (the
    player: RouteChanged; the floor: aplay's exec) to the computer's A2DP transport going active
    (BlueALSA acquired it, AVDTP's start done), the headset's going active, and the first frame
    that reached the headset's file."""
    device = "/org/bluez/hci0/dev_" + headset.replace(":", "_") + "/"
    computer, far = transport_active_times(lines, device), transport_active_times(lines, "/org/bluez/hci1/")
    def split(at, change, start):
        """(Connected -> RouteChanged, RouteChanged -> start, start -> each of the three), s or None."""
        since = lambda t: None if t is None or start is None else t - start
        frame = None if start is None else first_ear_after(lines, start)
        return [None if change is None or at is None else change - at, None if change is None or start is None else start - change,
                since(after(computer, start) if start is not None else None),
                since(after(far, start) if start is not None else None), since(frame)]
    player, floor = [], []
    for n, at, _, _, change, _ in rows:
        player.append(split(at, change, change))
        ready = FloorReady.find(lines, n).at
        opened = FloorOpen.find(lines, n).at
        trigger = FloorTrigger.find(lines, n).at
        floor.append(split(after(connected, ready), trigger, opened))
    ms = lambda t: f"{'-' if t is None else f'{t * 1000:.0f}':>9}"
    print("    the first frame, split (ms). player: audioroute play, moving at RouteChanged; floor: a plain "
          "`aplay -D bluealsa:DEV=...,PROFILE=a2dp`")
    print("    started by a client (audioroute monitor) at its RouteChanged. Columns: Connected -> RouteChanged, RouteChanged -> the start")
    print("    (the player's is RouteChanged itself; the floor's, aplay's exec), then from the start: the computer's A2DP transport")
    print("    active (BlueALSA acquired it, AVDTP's start done), the headset's transport active, the first frame at the headset")
    for n in range(1, cycles + 1):
        print(f"    cycle {n}  player" + "".join(ms(v) for v in player[n - 1]))
        print(f"             floor " + "".join(ms(v) for v in floor[n - 1]))
    medians = {}
    for who, table in (("player", player), ("floor", floor)):
        columns = [[r[k] for r in table if r[k] is not None] for k in range(5)]
        medians[who] = [median(c) if c else None for c in columns]
        print(f"    median   {who:6}" + "".join(ms(v) for v in medians[who]))
    if medians["player"][4] is not None and medians["floor"][4] is not None:
        transport = [None if medians[w][2] is None else medians[w][2] for w in ("player", "floor")]
        print(f"    ours: RouteChanged -> first frame {medians['player'][4] * 1000:.0f} ms for the player against "
              f"{medians['floor'][4] * 1000:.0f} ms from aplay's start on BlueALSA: "
              f"{(medians['player'][4] - medians['floor'][4]) * 1000:.0f} ms (medians)"
              + ("" if None in transport else f"; to the computer's transport active, {(transport[0] - transport[1]) * 1000:.0f} ms"))
    for who, _, reported, _, _ in PLAYERS:
        ready = reported.find(lines).at
        at = after(connected, ready)
        change = None if at is None else next((e["monotonicNs"] / 1e9 for e in events(lines, "monitor-system")
                                               if e.get("event") == "routeChange" and e.get("reason") == "newDeviceAvailable"
                                               and e.get("current", {}).get("outputs") == [f"bt:{headset}:a2dp"]
                                               and e["monotonicNs"] / 1e9 >= at - 0.5), None)
        print(f"    the system instance, {who:25}" + "".join(ms(v) for v in split(at, change, change)))
