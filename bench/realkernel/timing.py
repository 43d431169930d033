"""The timing phase: per cycle, from the USB card's kernel add to udev, RouteChanged and the first
frame in its file; a client's gap split by its mover's trace. Printed, never asserted."""
import json

from .common import Failure, median


def card1_moments(lines):
    """The USB card's (card1's) kernel `add` uevents, and udev's events for it with
    SOUND_INITIALIZED=1, in the guest's CLOCK_MONOTONIC, from the guest's udevadm monitor log."""
    uevents = [l[len("log uevents "):] for l in lines if l.startswith("log uevents ")]
    kernel_adds, initialized = [], []
    for i, event in enumerate(uevents):
        if "]" not in event:
            continue
        stamp = float(event[event.index("[") + 1:event.index("]")])
        action, path = (event[event.index("]") + 1:].split() + ["", ""])[:2]
        if not path.endswith("/sound/card1"):
            continue
        if event.startswith("KERNEL") and action == "add":
            kernel_adds.append(stamp)
        # udev's own event for the card, with SOUND_INITIALIZED=1 among its properties.
        if event.startswith("UDEV") and action in ("add", "change") and i + 1 < len(uevents) \
                and uevents[i + 1] == "SOUND_INITIALIZED=1":
            initialized.append(stamp)
    return kernel_adds, initialized


def first_audio(lines, add_index, frame):
    """For the USB card's `add_index`th add: (SOUND_INITIALIZED, the first frame `frame`), seconds from
    the kernel's add, all in the guest's CLOCK_MONOTONIC."""
    kernel_adds, initialized = card1_moments(lines)
    if add_index >= len(kernel_adds):
        raise Failure(f"add {add_index + 1}: no kernel add uevent for card1 in the guest's udevadm monitor")
    start = kernel_adds[add_index]
    end = kernel_adds[add_index + 1] if add_index + 1 < len(kernel_adds) else float("inf")
    sound = next((t for t in initialized if start <= t < end), None)
    if sound is None:
        raise Failure(f"add {add_index + 1}: no SOUND_INITIALIZED for card1 after its kernel add")
    return sound - start, frame - start


def cycle_timings(lines, adds, monitor="monitor", first=0):
    """Per cycle, seconds from the card's kernel `add` uevent to (i) udev's event for the card
    with SOUND_INITIALIZED=1, (ii) the client's RouteChanged (newDeviceAvailable, in `monitor`'s
    log), (iii) the first frame of audio (the signal or the tone) in the USB card's file; all in the guest's
    CLOCK_MONOTONIC; and the kernel's add itself. The cycles are the USB card's adds from the
    `first` one on."""
    kernel_adds, initialized = card1_moments(lines)
    changes = []
    for l in lines:
        if l.startswith(f"log {monitor} {{"):
            event = json.loads(l[len(f"log {monitor} "):])
            if event.get("event") == "routeChange" and event.get("reason") == "newDeviceAvailable":
                changes.append(event["monotonicNs"] / 1e9)
    rows = []
    for n, (add, frame) in enumerate(adds, first):
        if n >= len(kernel_adds):
            raise Failure(f"cycle {n + 1}: no kernel add uevent for card1 in the guest's udevadm monitor")
        start = kernel_adds[n]
        end = kernel_adds[n + 1] if n + 1 < len(kernel_adds) else float("inf")
        sound = next((t for t in initialized if start <= t < end), None)
        change = next((t for t in changes if start <= t < end), None)
        if sound is None or change is None or frame is None:
            raise Failure(f"cycle {n + 1}: missing a moment (SOUND_INITIALIZED {sound}, RouteChanged {change}, first USB frame {frame})")
        rows.append((sound - start, change - start, frame - start, start))
    return rows


def print_gaps(tables):
    """Per cycle, from the client's RouteChanged to the first frame on the USB card, and the first
    frame against udev's SOUND_INITIALIZED, for each client (targets: 20 ms, 1.1x)."""
    print("    the gap: from the client's RouteChanged to the first frame on the USB card (guest CLOCK_MONOTONIC), ms;")
    print("    first audio: the first USB frame against SOUND_INITIALIZED, both from the kernel's add")
    for name, rows in tables:
        gaps = [(iii - ii) * 1000 for i, ii, iii, _ in rows]
        ratios = [iii / i for i, ii, iii, _ in rows]
        print(f"    {name:>22}: gap {' '.join(f'{g:.0f}' for g in gaps)}: median {median(gaps):.0f}, worst {max(gaps):.0f}; "
              f"first audio {' '.join(f'{r:.2f}' for r in ratios)}: median {median(ratios):.2f}x, worst {max(ratios):.2f}x")


def move_split(trace, change, frame):
    """A move's moments from the plugin's trace (`audioroute SECONDS: text`), between the client's
    RouteChanged and the first frame in the new card's file, all on the guest's clock: seconds
    from one to the next, or None where the trace lacks one."""
    events = []
    for line in trace:
        head, _, text = line.partition(": ")
        try:
            events.append((float(head.split()[-1]), text))
        except (ValueError, IndexError):
            continue
    def first(test, after):
        return None if after is None else next((t for t, text in events if t >= after and test(text)), None)
    named = first(lambda text: text.startswith("the route names"), change - 1.0)
    opened = first(lambda text: text.startswith("move: ") and " open, " in text, named)
    replayed = first(lambda text: text.startswith("move: ") and "replayed" in text, opened)
    moments = [change, named, opened, replayed, frame]
    return [None if a is None or b is None else b - a for a, b in zip(moments, moments[1:])]


def print_split(traces, rows, who="the plugin"):
    """A client's gap split by its mover's trace: RouteChanged (the client's) -> the mover hears
    the route name another device -> the move has the new device open -> the frames the old one
    held replayed on it -> the first frame in the USB card's file."""
    print(f"    {who}'s gap split by its trace (AUDIOROUTE_DEBUG), ms:")
    print("    cycle  RouteChanged->route named  ->new device open  ->replayed  ->first frame in the file")
    splits = []
    for n, (trace, (i, ii, iii, start)) in enumerate(zip(traces, rows), 1):
        split = move_split(trace, start + ii, start + iii)
        splits.append(split)
        print(f"    {n:5}  " + "  ".join(f"{'-' if v is None else f'{v * 1000:.0f}':>{w}}" for v, w in zip(split, (25, 17, 10, 24))))
    for name, pick in (("median", median), ("worst", max)):
        columns = [[s[k] for s in splits if s[k] is not None] for k in range(4)]
        print(f"    {name:>6} " + "  ".join(f"{'-' if not c else f'{pick(c) * 1000:.0f}':>{w}}" for c, w in zip(columns, (25, 17, 10, 24))))


def print_timings(rows):
    print("    from the USB card's kernel add uevent (guest CLOCK_MONOTONIC), ms:")
    print("    cycle  (i) SOUND_INITIALIZED  (ii) RouteChanged  (iii) first USB frame  (ii)/(i)  (iii)/(i)")
    for n, (i, ii, iii, _) in enumerate(rows, 1):
        print(f"    {n:5}  {i * 1000:22.0f}  {ii * 1000:17.0f}  {iii * 1000:22.0f}  {ii / i:8.2f}  {iii / i:9.2f}")
    for name, pick in (("median", median), ("best", min), ("worst", max)):
        i, ii, iii = (pick([r[k] for r in rows]) for k in range(3))
        ratios = (pick([r[1] / r[0] for r in rows]), pick([r[2] / r[0] for r in rows]))
        print(f"    {name:>6} {i * 1000:22.0f}  {ii * 1000:17.0f}  {iii * 1000:22.0f}  {ratios[0]:8.2f}  {ratios[1]:9.2f}")
