"""The Bluetooth bench's parts: bluez fetched, its initramfs, and its checks on the guest's reports."""
import json, os, shutil, subprocess, tempfile

from . import harness
from .common import Failure, median, phase, run
from .harness import CACHE, GUEST, ROOT, build_guest_program, build_initramfs, guest_init
from .signals import sequence_bits


BLUEZ_PACKAGES = ["bluez", "bluez-test-tools"]
# Bluetooth in the kernel: the core, the virtual controller, RFCOMM (HFP), and the crypto btvirt's
# emulated controllers use through AF_ALG (without it: "Failed to open Virtual HCI device").
BT_MODULES = ["bluetooth", "hci_vhci", "rfcomm", "af_alg", "algif_hash", "algif_skcipher", "cmac", "ecb", "ecdh_generic"]
MODULE_TREES = harness.MODULE_TREES + ["kernel/net/bluetooth", "kernel/drivers/bluetooth/hci_vhci.ko", "kernel/crypto"]


def fetch_bluez():
    """bluez (bluetoothd, bluetoothctl) and bluez-test-tools (btvirt), unpacked once into the cache:
    the host needs neither installed (installing bluez would start a bluetooth service)."""
    root = os.path.join(CACHE, "bluez-root")
    if os.path.exists(os.path.join(root, "usr", "bin", "btvirt")):
        return root
    staging = root + ".partial"
    shutil.rmtree(staging, ignore_errors=True)
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o777)  # apt's sandbox user writes the download
        result = subprocess.run(["apt-get", "download", *BLUEZ_PACKAGES], cwd=d, capture_output=True, text=True, timeout=600)
        debs = [f for f in os.listdir(d) if f.endswith(".deb")]
        if len(debs) != len(BLUEZ_PACKAGES):
            raise Failure(f"apt-get download {' '.join(BLUEZ_PACKAGES)} fetched {debs}: {result.stderr.strip()[-300:]}")
        for deb in debs:
            run(["dpkg-deb", "-x", os.path.join(d, deb), staging], 120, "unpacking " + deb)
    os.rename(staging, root)
    return root


def bluetooth_init(explore=False):
    """This bench's init (bench/guest/): the boot, the system bus and Bluetooth, the session, the
    pairing, then its checks (or --explore's shell)."""
    return guest_init("boot.sh", "bluetooth.sh", "session.sh", "bluetooth-pair.sh", "explore.sh" if explore else "bluetooth-checks.sh",
                      BT_MODULES=" ".join(BT_MODULES))


def build_image(root, release, work, bluez, explore=False):
    """The initramfs: test-real-kernel's, with this bench's init, Bluetooth's modules, bluez,
    BlueALSA and the guest's Bluetooth programs (agent.c, ear.c, stamp.c)."""
    init = bluetooth_init(explore)
    ear = build_guest_program(work, "guest-ear", os.path.join(GUEST, "ear.c"))
    agent = build_guest_program(work, "guest-agent", os.path.join(GUEST, "agent.c"), ["-lsystemd"])
    stamp = build_guest_program(work, "guest-stamp", os.path.join(GUEST, "stamp.c"))
    policy = os.path.join(GUEST, "bluealsa-sink.conf")
    asoundrc = os.path.join(GUEST, "ear.asoundrc")
    alsa_plugins = os.path.join(run(["pkg-config", "--variable=libdir", "alsa"], 30, "pkg-config alsa").strip(), "alsa-lib")
    extras = [
        (os.path.join(bluez, "usr/libexec/bluetooth/bluetoothd"), "/usr/libexec/bluetooth/bluetoothd"),
        (os.path.join(bluez, "usr/bin/bluetoothctl"), "/usr/bin/bluetoothctl"),
        (os.path.join(bluez, "usr/bin/btvirt"), "/usr/bin/btvirt"),
        (os.path.join(bluez, "usr/bin/btmon"), "/usr/bin/btmon"),
        (os.path.join(bluez, "etc/bluetooth"), "/etc/bluetooth"),
        (os.path.join(bluez, "etc/dbus-1/system.d/bluetooth.conf"), "/etc/dbus-1/system.d/bluetooth.conf"),
        ("/usr/bin/bluealsa", "/usr/bin/bluealsa"),
        ("/usr/bin/bluealsa-aplay", "/usr/bin/bluealsa-aplay"),
        ("/usr/bin/dbus-send", "/usr/bin/dbus-send"),
        ("/usr/bin/dbus-monitor", "/usr/bin/dbus-monitor"),
        (os.path.join(alsa_plugins, "libasound_module_pcm_bluealsa.so"), os.path.join(alsa_plugins, "libasound_module_pcm_bluealsa.so")),
        (os.path.join(alsa_plugins, "libasound_module_ctl_bluealsa.so"), os.path.join(alsa_plugins, "libasound_module_ctl_bluealsa.so")),
        ("/etc/alsa/conf.d/20-bluealsa.conf", "/etc/alsa/conf.d/20-bluealsa.conf"),
        ("/etc/dbus-1/system.d/bluealsa.conf", "/etc/dbus-1/system.d/bluealsa.conf"),
        (asoundrc, "/root/.asoundrc"),
        (ear, "/usr/bin/guest-ear"),
        (agent, "/usr/bin/guest-agent"),
        (stamp, "/usr/bin/guest-stamp"),
        # The system instance's bus policy, as scripts/install-daemon installs it: the guest puts it
        # in /usr/share/dbus-1/system.d once the user it names exists, then reloads the bus.
        (os.path.join(ROOT, "dbus", "org.audioroute.AudioRoute1.conf"), "/usr/share/audioroute-bench/dbus/org.audioroute.AudioRoute1.conf"),
        (policy, "/etc/dbus-1/system.d/bluealsa-sink.conf"),
    ]
    return build_initramfs(root, release, work, sequence_bits(), init=init, module_trees=MODULE_TREES, extras=extras)


def logged(lines, name):
    """The lines of one guest log, as finish() sent them (`log NAME LINE`)."""
    prefix = f"log {name} "
    return [line[len(prefix):] for line in lines if line.startswith(prefix)]


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


def headset_ports(line, words, headset, computer):
    text = line[len(words):].strip()
    try:
        ports = json.loads(text)
    except ValueError:
        raise Failure(f"'{words}': `audioroute ports --json` printed no JSON: {text[:300]}")
    mine = {p["type"]: p for p in ports if p["uid"].startswith("bt:")}
    if any(computer in p["uid"] for p in mine.values()):
        raise Failure(f"'{words}': the computer itself (hci1's view of hci0, {computer}) has ports: {sorted(mine)}")
    return mine


def check_ports(mine, words, headset):
    expected = {"bluetoothA2DP": f"bluealsa:DEV={headset},PROFILE=a2dp", "bluetoothHFP": f"bluealsa:DEV={headset},PROFILE=sco"}
    got = {kind: port.get("alsa") for kind, port in mine.items()}
    if got != expected:
        raise Failure(f"'{words}': the headset's ports are {got}, expected {expected}")


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


def check_run(guest, cycles):
    """Follows the guest's reports; reads the speaker's file at the moments that matter."""
    with phase("pair", 240):
        line = guest.wait_for("addresses", 120)
        headset, computer = line.split()[4], line.split()[2]
        guest.wait_for("paired", 240)
        print("    " + guest.wait_for("quirk", 60)[:200])
    speaker = {}
    for n in range(1, cycles + 1):
        with phase(f"cycle {n}", 180):
            guest.wait_for(f"bt-ready {n}", 120)
            words = f"bt-connected {n}"
            line = guest.wait_for(words, 120)
            for retry in (l for l in guest.lines() if l.startswith(f"hfp-retry {n} ")):
                print(f"    HFP was not up: ConnectProfile(HF) again, exit status {retry.split()[2]}")
            check_ports(headset_ports(line, words, headset, computer), words, headset)
            how = guest.wait_for(f"bt-disconnect {n}", 60).split()[2]
            before = guest.files.audible("hda")
            words = f"bt-disconnected {n}"
            line = guest.wait_for(words, 120)
            speaker[n] = guest.files.audible("hda") - before
            if "paused" not in line.split(" ports ")[0]:
                raise Failure(f"cycle {n}: after the disconnect ({how}) the player does not say paused: {line[:200]}")
            if headset_ports(line.split(" ports ", 1)[1], "", headset, computer):
                raise Failure(f"cycle {n}: the headset's ports are still listed after the disconnect ({how})")
            how = {"computer": "Disconnect on the computer's side", "headset": "Disconnect on the headset's side",
                   "bluealsa-killed": "the headset's bluealsa killed"}.get(how, how)
            print(f"    {how}: the player paused; the speaker played {speaker[n]:.2f} s after it")
            if speaker[n] > 0.05:
                raise Failure(f"cycle {n}: the speaker played {speaker[n]:.2f} s after the headset went ({how})")
    with phase("floor", 60 + 60 * cycles):
        # A plain aplay on BlueALSA's PCM per Connect (its first frame: print_timing).
        for n in range(1, cycles + 1):
            line = guest.wait_for(f"floor-playing {n}", 120)
            if "alive" not in line.split():
                raise Failure(f"floor {n}: aplay -D bluealsa:DEV={headset},PROFILE=a2dp exited within 4 s of its start "
                              f"(its output: the log aplay-floor-{n})")
        print(f"    {cycles} plain aplays on the headset's BlueALSA PCM, each started at RouteChanged")
    with phase("plugin", 120):
        guest.wait_for("plugin-start", 120)
        before = guest.files.audible("hda")
        line = guest.wait_for("plugin-playing", 60)
        if "alive" not in line:
            raise Failure("aplay -D audioroute exited while playing to the headset")
        if guest.files.audible("hda") - before > 0.05:
            raise Failure("aplay -D audioroute played on the speaker while the headset was the route")
    with phase("call", 120):
        guest.wait_for("call-start", 120)
        before = guest.files.audible("hda")
        print("    " + guest.wait_for("call-ended", 60)[:200])
        guest.wait_for("call-after", 60)
        if guest.files.audible("hda") - before > 0.05:
            raise Failure("something played on the speaker during the call")
    with phase("plugin call", 120):
        guest.wait_for("plugin-call-start", 120)
        # The plugin's call finds the headset's A2DP PCM busy (BlueALSA's PCMs are exclusive, and
        # the music holds it): it activates its session, the tower interrupts the music and
        # routes to HFP, and the call opens the SCO PCM, whose link btvirt refuses (reported).
        before = guest.files.audible("hda")
        for words in ("plugin-call-during", "plugin-call-ended", "plugin-call-after"):
            line = guest.wait_for(words, 60)
            print("    " + line[:160])
            if words != "plugin-call-ended" and line.split()[1:2] != ["alive"]:
                raise Failure(f"the music's aplay did not live through the plugin's call: {line[:200]}")
        if guest.files.audible("hda") - before > 0.05:
            raise Failure("something played on the speaker during the plugin's call")
    with phase("bluetoothd restarted", 180):
        guest.wait_for("btd-stopped", 60)
        for stuck in (l for l in guest.lines() if l.startswith("stuck ")):
            print(f"    note: a player outlived its SIGTERM and was killed: {stuck[len('stuck '):]}")
        words = "btd-back"
        line = guest.wait_for(words, 180)
        for retry in (l for l in guest.lines() if l.startswith("hfp-retry restart ")):
            print(f"    HFP was not up: ConnectProfile(HF) again, exit status {retry.split()[2]}")
        check_ports(headset_ports(line, words, headset, computer), words, headset)
        if "alive" not in guest.wait_for("daemon-after", 30):
            raise Failure("audiorouted did not answer after bluetoothd restarted")
    with phase("system instance", 240):
        check_system(guest)
    guest.wait_for("end", 120)
    guest.wait_exit(60)
    return headset


def check_system(guest):
    """`audiorouted --system` alone: `audioroute play --system`, then `aplay -D audioroute`, each
    started on the speaker, then the headset connected. The speaker's file is read at the reports;
    what reached the headset is checked from the ear's reports in check_logs."""
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
    for who, prefix in (("audioroute play --system", "sys-play"), ("aplay -D audioroute", "sys-aplay")):
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


def check_logs(lines, cycles, headset):
    """What the guest's logs say, once it has powered off: the route changes, the headset's ear, SCO."""
    a2dp, hfp = f"bt:{headset}:a2dp", f"bt:{headset}:hfp"
    changes = [(e.get("reason"), e.get("current", {}).get("outputs")) for e in events(lines) if e.get("event") == "routeChange"]
    problems = []
    with phase("route changes", 1):
        arrivals = [c for c in changes if c == ("newDeviceAvailable", [a2dp])]
        departures = [c for c in changes if c[0] == "oldDeviceUnavailable" and c[1] and c[1] != [a2dp]]
        print(f"    newDeviceAvailable to {a2dp}: {len(arrivals)}; oldDeviceUnavailable away from it: {len(departures)}")
        if len(arrivals) < cycles + 2 or len(departures) < cycles:
            problems.append(f"route changes: {len(arrivals)} arrivals (expected {cycles + 2}) and {len(departures)} "
                            f"departures (expected {cycles}): {changes}")
        to_hfp = [c for c in changes if c[1] == [hfp]]
        print(f"    the calls (audioroute play, then aplay -D audioroute): route changes to {hfp}: {to_hfp}")
        if len(to_hfp) < 2:
            problems.append(f"the calls' sessions took the route to HFP {len(to_hfp)} times, expected twice (the player's "
                            f"and the plugin's): {changes}")
        last = changes[-1][1] if changes else None
        if last == [hfp]:
            problems.append("the headset was left in HFP at the end")
    with phase("the headset's ear", 1):
        for n in range(1, cycles + 1):
            heard = loud_between(lines, f"bt-ready {n}", f"bt-disconnect {n}")
            print(f"    cycle {n}: {heard:.2f} s of the tone reached the headset")
            if heard < 1.0:
                problems.append(f"cycle {n}: only {heard:.2f} s of the tone reached the headset (expected 2 s and more)")
        heard = loud_between(lines, "plugin-start", "plugin-playing")
        print(f"    aplay -D audioroute: {heard:.2f} s reached the headset")
        if heard < 1.0:
            problems.append(f"aplay -D audioroute: only {heard:.2f} s reached the headset")
        for start, end, who in (("call-ended", "call-after", "audioroute play"), ("plugin-call-ended", "plugin-call-after", "aplay")):
            heard = loud_between(lines, start, end)
            print(f"    the music ({who}) after the call: {heard:.2f} s reached the headset")
            if heard < 1.0:
                problems.append(f"after the call the music ({who}) did not come back to the headset ({heard:.2f} s)")
                if who == "aplay":
                    print("    the music's trace (AUDIOROUTE_DEBUG), its last lines:")
                    for line in [l for l in logged(lines, "aplay-call-music") if l.startswith("audioroute ")][-12:]:
                        print("      " + line[:160])
        for start, end, who in (("sys-play-moved", "sys-play-heard", "audioroute play --system"),
                                ("sys-aplay-moved", "sys-aplay-heard", "aplay -D audioroute, the system instance")):
            heard = loud_between(lines, start, end)
            print(f"    {who}: {heard:.2f} s of 3 s reached the headset")
            if heard < 1.5:
                problems.append(f"{who}: only {heard:.2f} s of 3 s reached the headset while the route was the headset")
        trace = [l for l in logged(lines, "aplay-system") if l.startswith("audioroute ")]
        print("    aplay -D audioroute with the system instance, its trace (AUDIOROUTE_DEBUG):")
        for line in trace[:8]:
            print("      " + line[:160])
        if not any("a session in the tower" in l for l in trace[:1]):
            problems.append("aplay -D audioroute with the system instance: its open did not get a session in the system "
                            f"daemon's tower: {trace[:1]}")
        trace = [l for l in logged(lines, "aplay-call") if l.startswith("audioroute ")]
        print("    the plugin's call, its trace (AUDIOROUTE_DEBUG):")
        for line in trace[:12]:
            print("      " + line[:160])
        sco = [l for l in lines if l.startswith("ear ") and ("-16000-1" in l or "-8000-1" in l)]
        refused = [l for l in logged(lines, "bluealsa-src") if "SCO link" in l]
        print(f"    SCO: {len(sco)} reports of voice frames at the headset; BlueALSA: {refused[:1] or 'no SCO error'}")
        # btvirt 5.66 refuses SCO links (docs/bluetooth.md), so both calls fail, and that refusal
        # must be why: a call that fails with the SCO link up, or ends well with no voice frame
        # at the headset, is a fault of ours.
        for words, who in (("call-ended", "audioroute play"), ("plugin-call-ended", "aplay -D audioroute")):
            said = [l.split() for l in lines if l.startswith(words + " ")]
            status = said[0][1] if said and len(said[0]) > 1 else "?"
            if status != "0" and not refused:
                problems.append(f"the call ({who}) ended {status}, and BlueALSA did not refuse the SCO link: the failure is not btvirt's")
            if status == "0" and not sco:
                problems.append(f"the call ({who}) ended 0, but no voice frame reached the headset")
    return problems


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
            ready = float(lines[index_of(lines, f"bt-ready {n}")].split()[2])
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
        ready = float(lines[index_of(lines, f"floor-ready {n}")].split()[2])
        opened = int(lines[index_of(lines, f"floor-open {n}")].split()[2]) / 1e9
        trigger = int(lines[index_of(lines, f"floor-trigger {n}")].split()[2]) / 1e9
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
    for who, prefix in (("audioroute play --system", "sys-play"), ("aplay -D audioroute", "sys-aplay")):
        ready = float(lines[index_of(lines, f"{prefix}-ready")].split()[1])
        at = after(connected, ready)
        change = None if at is None else next((e["monotonicNs"] / 1e9 for e in events(lines, "monitor-system")
                                               if e.get("event") == "routeChange" and e.get("reason") == "newDeviceAvailable"
                                               and e.get("current", {}).get("outputs") == [f"bt:{headset}:a2dp"]
                                               and e["monotonicNs"] / 1e9 >= at - 0.5), None)
        print(f"    the system instance, {who:25}" + "".join(ms(v) for v in split(at, change, change)))
