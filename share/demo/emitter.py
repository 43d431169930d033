#!/usr/bin/python3
"""umockdev testbed driver for AudioRoute's udev tests and benchmark.

Runs under umockdev-wrapper (the preload must be active for uevents to be
sent). Owns the testbed, prints "READY <root>" once it exists, then reads one
command per line on stdin and answers "OK ..." (or "ERR ...") on stdout:

  load FILE               add the devices of a umockdev record file (emits "add")
  unplug SYSPATH          emit "remove" for SYSPATH and everything below it
                          (control devices first, as the kernel does), then remove it
  uevent ACTION SYSPATH   emit one uevent
  setprop SYSPATH NAME VALUE   set a udev property (no event)
  jackdev DEVNODE SUPPORTED STATE [NAME] [noswitch]
                          emulate an evdev device: EVIOCGBIT/EVIOCGSW/EVIOCGNAME are
                          answered from live state (hex bitmaps of SW_* codes)
  jack DEVNODE CODE VALUE write EV_SW CODE VALUE + SYN_REPORT to the device
  alsa FILE               emulate the ALSA control devices a JSON file describes (below); `load`
                          does this itself for RECORD.umockdev when RECORD.alsa.json is beside it
  ctljack DEVNODE NUMID V[,V...]  set an emulated control's values (0/1) and queue its
                          SNDRV_CTL_EVENT_ELEM value event for the reader
  jacks DEVNODE C:V,C:V   several EV_SW in one frame (a headset: headphone and mic), one SYN_REPORT
  bench N SYSPATH         N x (set AUDIOROUTE_PRIORITY on SYSPATH to 60 or 61, then
                          uevent change SYSPATH), printing the send time
                          (CLOCK_MONOTONIC ns) of each uevent as "T <i> <ns>"
  storm N FILE SYSPATH    N x (load FILE; unplug SYSPATH); answers "OK storm <uevents sent>"
  tload FILE              load, answering "OK tload <ns>": CLOCK_MONOTONIC just before the
                          last record's add (a card's controlC<n>, which completes it)
  tunplug SYSPATH         unplug, answering "OK tunplug <ns> <ns>": just before the first
                          remove (the control device's), and just before the card's remove
  forget PID              the process has been reaped: no longer adopted
  adopt PID               on exit (quit, or stdin closed because the test runner died),
                          SIGKILL PID too: a safety net for processes a test started
  quit

An ALSA control device (`/dev/snd/controlC<n>`) is emulated from a JSON file: the card's
CARD_INFO, each PCM stream's PCM_INFO (found with PCM_NEXT_DEVICE), and its elements (ELEM_LIST,
ELEM_INFO, ELEM_READ; SUBSCRIBE_EVENTS is accepted), and the card's /proc/asound/card<n> files
(`codec#<m>`, which umockdev's preload redirects to the testbed). Format:

  {"cards": [{"control": "/dev/snd/controlC0", "card": 0,
              "info": {"id": "PCH", "driver": "HDA-Intel", "name": "HDA Intel PCH",
                       "longName": "...", "mixerName": "...", "components": "..."},
              "pcms": [{"device": 0, "stream": "playback", "id": "ALC289 Analog", "name": "ALC289 Analog"}],
              "controls": [{"numid": 12, "iface": "card", "name": "Headphone Jack",
                            "type": "boolean", "access": "read", "values": [false]},
                           {"numid": 30, "iface": "pcm", "device": 3, "name": "ELD", "type": "bytes"}],
              "proc": {"codec#0": "codec text", "codec#2": {"file": "path relative to the JSON"}}}]}

Every field but "control" may be left out ("pcmNextDeviceAnswer": N makes PCM_NEXT_DEVICE always
answer N, a broken kernel for the reader's bounds). The control node is created by `load` from
the record's `N: snd/controlC<n>` line (only for emulated controls, whether from the record's own
JSON file or an earlier `alsa` command: the others stay without a node) and kept across an
unplug, so the same card can be plugged again.

Always run with /usr/bin/python3 (Debian's, which has gi).
"""
import json
import os
import struct
import sys
import time

import gi

gi.require_version("UMockdev", "1.0")
from gi.repository import GLib, UMockdev  # noqa: E402

EV_SYN, EV_KEY, EV_SW = 0, 1, 5
SYN_REPORT = 0


class SwitchDevice(UMockdev.IoctlBase):
    """Answers the evdev ioctls a jack reader makes, from live state."""

    def __init__(self, supported, state, name, is_switch=True):
        super().__init__()
        self.supported = supported
        self.state = state
        self.name = name.encode()
        self.is_switch = is_switch

    @staticmethod
    def bitmap(bits, size):
        return bits.to_bytes(8, "little")[:size].ljust(size, b"\0")

    def do_handle_ioctl(self, client):
        request = client.get_request()
        kind, number, size = (request >> 8) & 0xFF, request & 0xFF, (request >> 16) & 0x3FFF
        if kind != ord("E"):
            client.complete(-1, 25)  # ENOTTY
            return True
        if number == 0x20:  # EVIOCGBIT(0): event types
            types = (1 << EV_SYN) | ((1 << EV_SW) if self.is_switch else (1 << EV_KEY))
            payload = self.bitmap(types, size)
        elif number == 0x20 + EV_SW:  # EVIOCGBIT(EV_SW): switch codes
            payload = self.bitmap(self.supported if self.is_switch else 0, size)
        elif number == 0x1B:  # EVIOCGSW
            payload = self.bitmap(self.state if self.is_switch else 0, size)
        elif number == 0x06:  # EVIOCGNAME
            payload = (self.name + b"\0")[:size]
        else:
            client.complete(-1, 25)
            return True
        data = client.get_arg().resolve(0, len(payload))
        data.update(0, payload)
        client.complete(len(payload), 0)
        return True


# <sound/asound.h>: the 'U' ioctls, their structures' layouts (x86_64 and arm64 alike: checked
# against the header with offsetof), and the constants.
CTL_PVERSION, CTL_CARD_INFO, CTL_ELEM_LIST, CTL_ELEM_INFO, CTL_ELEM_READ = 0x00, 0x01, 0x10, 0x11, 0x12
CTL_SUBSCRIBE_EVENTS, CTL_PCM_NEXT_DEVICE, CTL_PCM_INFO = 0x16, 0x30, 0x31
CTL_VERSION = 0x00020008
CARD_INFO_SIZE, PCM_INFO_SIZE, ELEM_ID_SIZE, ELEM_LIST_SIZE = 376, 288, 64, 80
ELEM_INFO_SIZE, ELEM_VALUE_SIZE, CTL_EVENT_SIZE = 272, 1224, 72
IFACES = {"card": 0, "hwdep": 1, "mixer": 2, "pcm": 3, "rawmidi": 4, "timer": 5, "sequencer": 6}
TYPES = {"none": 0, "boolean": 1, "integer": 2, "enumerated": 3, "bytes": 4, "iec958": 5, "integer64": 6}
ACCESS = {"read": 1, "write": 2, "volatile": 4, "user": 1 << 29}
ENOENT, ENXIO, EINVAL, ENOTTY = 2, 6, 22, 25
EVENT_MASK_VALUE = 1


def cstring(text, size):
    """A fixed-size, NUL-terminated C char array."""
    return text.encode()[: size - 1].ljust(size, b"\0")


class ControlDevice(UMockdev.IoctlBase):
    """Answers an ALSA control device's ioctls from a card's description (see the module doc)."""

    def __init__(self, card):
        super().__init__()
        self.update_card(card)

    def update_card(self, card):
        self.number = int(card.get("card", 0))
        self.info = card.get("info", {})
        self.pcms = card.get("pcms", [])
        self.controls = {int(c["numid"]): dict(c) for c in card.get("controls", [])}
        # A broken kernel, for tests of the reader's bounds: PCM_NEXT_DEVICE always answers this.
        self.next_device_answer = card.get("pcmNextDeviceAnswer")

    def element_id(self, numid):
        c = self.controls[numid]
        return (struct.pack("<IiII", numid, IFACES[c.get("iface", "mixer")], int(c.get("device", 0)), int(c.get("subdevice", 0)))
                + cstring(c["name"], 44) + struct.pack("<I", int(c.get("index", 0))))

    def answer(self, client, payload):
        data = client.get_arg().resolve(0, len(payload))
        data.update(0, payload)
        client.complete(0, 0)

    def argument(self, client, size):
        data = client.get_arg().resolve(0, size)
        return data, bytes(data.retrieve())

    def do_handle_ioctl(self, client):
        request = client.get_request()
        kind, number, size = (request >> 8) & 0xFF, request & 0xFF, (request >> 16) & 0x3FFF
        if kind != ord("U"):
            client.complete(-1, ENOTTY)
            return True
        if number == CTL_PVERSION:
            self.answer(client, struct.pack("<i", CTL_VERSION))
        elif number == CTL_CARD_INFO and size == CARD_INFO_SIZE:
            i = self.info
            payload = (struct.pack("<ii", self.number, 0) + cstring(i.get("id", ""), 16) + cstring(i.get("driver", ""), 16)
                       + cstring(i.get("name", ""), 32) + cstring(i.get("longName", ""), 80) + bytes(16)
                       + cstring(i.get("mixerName", ""), 80) + cstring(i.get("components", ""), 128))
            self.answer(client, payload)
        elif number == CTL_PCM_NEXT_DEVICE:
            _, raw = self.argument(client, 4)
            after = struct.unpack("<i", raw[:4])[0]
            later = sorted({int(p["device"]) for p in self.pcms if int(p["device"]) > after})
            answer = later[0] if later else -1
            if self.next_device_answer is not None:
                answer = int(self.next_device_answer)
            self.answer(client, struct.pack("<i", answer))
        elif number == CTL_PCM_INFO and size == PCM_INFO_SIZE:
            _, raw = self.argument(client, PCM_INFO_SIZE)
            device, subdevice, stream = struct.unpack("<IIi", raw[:12])
            streams = [p for p in self.pcms if int(p["device"]) == device]
            wanted = [p for p in streams if (p.get("stream", "playback") == "playback") == (stream == 0)]
            if stream not in (0, 1):
                client.complete(-1, EINVAL)
            elif not streams:
                client.complete(-1, ENXIO)
            elif not wanted:
                client.complete(-1, ENOENT)
            elif subdevice >= int(wanted[0].get("subdevices", 1)):
                client.complete(-1, ENXIO)
            else:
                p = wanted[0]
                count = int(p.get("subdevices", 1))
                payload = (struct.pack("<IIii", device, subdevice, stream, self.number) + cstring(p.get("id", ""), 64)
                           + cstring(p.get("name", ""), 80) + cstring("subdevice #%d" % subdevice, 32)
                           + struct.pack("<iiII", int(p.get("class", 0)), 0, count, count) + bytes(16) + bytes(64))
                self.answer(client, payload)
        elif number == CTL_ELEM_LIST and size == ELEM_LIST_SIZE:
            data, raw = self.argument(client, ELEM_LIST_SIZE)
            offset, space = struct.unpack("<II", raw[:8])
            numids = sorted(self.controls)
            chosen = numids[offset:offset + space] if space else []
            if chosen:
                ids = data.resolve(16, space * ELEM_ID_SIZE)
                ids.update(0, b"".join(self.element_id(n) for n in chosen))
            data.update(8, struct.pack("<II", len(chosen), len(numids)))
            client.complete(0, 0)
        elif number in (CTL_ELEM_INFO, CTL_ELEM_READ) and size in (ELEM_INFO_SIZE, ELEM_VALUE_SIZE):
            data, raw = self.argument(client, size)
            numid = struct.unpack("<I", raw[:4])[0]
            if numid not in self.controls:
                client.complete(-1, ENOENT)
                return True
            c = self.controls[numid]
            values = [int(v) for v in c.get("values", [])]
            if number == CTL_ELEM_INFO:
                access = 0
                for word in c.get("access", "read").split():
                    access |= ACCESS[word]
                count = int(c.get("count", len(values)))
                payload = (self.element_id(numid) + struct.pack("<iIIi", TYPES[c.get("type", "boolean")], access, count, -1)
                           + struct.pack("<qqq", 0, int(c.get("max", 1)), 1))
                data.update(0, payload)
            else:
                data.update(0, self.element_id(numid))
                data.update(72, b"".join(struct.pack("<q", v) for v in values[:128]))
            client.complete(0, 0)
        elif number == CTL_SUBSCRIBE_EVENTS:
            client.complete(0, 0)
        else:
            client.complete(-1, ENOTTY)
        return True


class Emitter:
    def __init__(self):
        self.testbed = UMockdev.Testbed.new()
        self.root = self.testbed.get_root_dir()
        self.devices = {}
        self.loop = GLib.MainLoop()
        self.pending = b""
        self.adopted = []
        # Emulated control devices by node (/dev/snd/controlC0), and their cards' numbers.
        self.controls = {}

    def reply(self, text):
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    @staticmethod
    def syspath(path):
        return path if path.startswith("/sys/") else "/sys" + path

    def fresh(self, text, nodes=()):
        """The records of text whose device does not exist yet (a re-plug keeps
        the USB host controller, which umockdev refuses to add twice); `nodes`
        are device nodes (`snd/controlC0`) to create besides jack nodes."""
        keep = []
        for record in text.split("\n\n"):
            lines = [l for l in record.strip().splitlines() if l.startswith("P: ")]
            if lines and os.path.exists(self.root + self.syspath(lines[0][3:].strip())):
                continue
            # umockdev 0.17.16 cannot create a node again after remove_device (its
            # fd table keeps the name), so only jack nodes (input/) are created;
            # the watcher never opens the others, and DEVNAME still names them.
            def node_kept(line):
                name = line[3:].strip()
                if name.startswith("input/"):
                    return True
                # An emulated control's node is made once and kept across unplugs.
                return (name in nodes or "/dev/" + name in self.controls) and not os.path.lexists(self.root + "/dev/" + name)
            record = "\n".join(l for l in record.strip().splitlines() if not (l.startswith("N: ") and not node_kept(l)))
            if record.strip():
                keep.append(record.strip())
        return "\n\n".join(keep) + "\n"

    def load(self, path):
        sidecar = path[: -len(".umockdev")] + ".alsa.json" if path.endswith(".umockdev") else None
        cards = self.read_alsa(sidecar) if sidecar and os.path.exists(sidecar) else []
        nodes = {c["control"][len("/dev/"):] for c in cards}
        with open(path) as f:
            text = f.read()
        self.make_proc(text)
        # The handler first: a watcher opens the node as soon as its uevent arrives.
        self.emulate(cards, os.path.dirname(sidecar) if sidecar else "")
        self.testbed.add_from_string(self.fresh(text, nodes))

    def read_alsa(self, path):
        with open(path) as f:
            return json.load(f).get("cards", [])

    def make_proc(self, text):
        """An empty /proc/asound/card<n> in the testbed for every card of `text`, so that the
        preload never shows a reader the machine's own cards' files."""
        for line in text.splitlines():
            if line.startswith("P: ") and "/sound/card" in line:
                name = line.rstrip().rsplit("/", 1)[-1]
                if name[4:].isdigit():
                    os.makedirs(os.path.join(self.root, "proc", "asound", name), exist_ok=True)

    def emulate(self, cards, base):
        """Attaches (or updates) a ControlDevice per card and writes its /proc/asound files."""
        for card in cards:
            node = card["control"]
            if node in self.controls:
                self.controls[node].update_card(card)
            else:
                handler = ControlDevice(card)
                self.testbed.attach_ioctl(node, handler)
                self.controls[node] = handler
            directory = os.path.join(self.root, "proc", "asound", "card%d" % int(card.get("card", 0)))
            os.makedirs(directory, exist_ok=True)
            for name, content in card.get("proc", {}).items():
                if "/" in name or name.startswith("."):
                    raise ValueError("bad proc file name " + name)
                if isinstance(content, dict):
                    with open(os.path.join(base, content["file"])) as f:
                        content = f.read()
                with open(os.path.join(directory, name), "w") as f:
                    f.write(content)

    def ctljack(self, devnode, numid, values):
        """Sets an emulated control's values and queues the value event a subscriber reads."""
        handler = self.controls[devnode]
        handler.controls[numid]["values"] = values
        event = struct.pack("<iI", 0, EVENT_MASK_VALUE) + handler.element_id(numid)
        os.write(self.testbed.get_dev_fd(devnode), event.ljust(CTL_EVENT_SIZE, b"\0"))

    def below(self, syspath):
        """Every device directory at or below syspath, control devices first, children before parents."""
        top = self.root + self.syspath(syspath)
        found = []
        for directory, subdirs, files in os.walk(top):
            if "uevent" in files:
                found.append(directory[len(self.root):])
        found.sort(key=lambda p: (not os.path.basename(p).startswith("controlC"), -p.count("/")))
        return found

    def unplug(self, syspath, stamp=None):
        nodes = []
        below = self.below(syspath)
        if stamp is not None:
            stamp.append(time.clock_gettime_ns(time.CLOCK_MONOTONIC))
        for path in below:
            if stamp is not None and len(stamp) == 1 and os.path.basename(path).startswith("card"):
                stamp.append(time.clock_gettime_ns(time.CLOCK_MONOTONIC))
            try:
                with open(self.root + path + "/uevent") as f:
                    nodes += [l.strip()[8:] for l in f if l.startswith("DEVNAME=")]
            except OSError:
                pass
            self.testbed.uevent(path, "remove")
        self.testbed.remove_device(self.syspath(syspath))
        self.prune()
        for node in nodes:
            path = self.root + (node if node.startswith("/dev/") else "/dev/" + node)
            # An emulated control's node stays (umockdev cannot make it again), as its handler does.
            if os.path.lexists(path) and (node if node.startswith("/dev/") else "/dev/" + node) not in self.controls:
                os.unlink(path)

    def prune(self):
        """Drops the /sys/bus and /sys/class links that umockdev 0.17 leaves
        behind on remove_device (re-adding the device would assert)."""
        for base in ("bus", "class"):
            top = os.path.join(self.root, "sys", base)
            for directory, subdirs, files in os.walk(top):
                for name in subdirs + files:
                    path = os.path.join(directory, name)
                    if os.path.islink(path) and not os.path.exists(path):
                        os.unlink(path)

    def jack(self, devnode, changes):
        device = self.devices[devnode]
        now = time.time()
        sec, usec = int(now), int((now % 1) * 1e6)
        events = b""
        for code, value in changes:
            if value:
                device.state |= 1 << code
            else:
                device.state &= ~(1 << code)
            events += struct.pack("llHHi", sec, usec, EV_SW, code, value)
        events += struct.pack("llHHi", sec, usec, EV_SYN, SYN_REPORT, 0)
        os.write(self.testbed.get_dev_fd(devnode), events)

    def command(self, line):
        words = line.split()
        if not words:
            return True
        verb, args = words[0], words[1:]
        if verb == "quit":
            self.loop.quit()
            return False
        if verb == "adopt":
            self.adopted.append(int(args[0]))
        elif verb == "forget":
            self.adopted = [p for p in self.adopted if p != int(args[0])]
        elif verb == "load":
            self.load(args[0])
        elif verb == "unplug":
            self.unplug(args[0])
        elif verb == "uevent":
            self.testbed.uevent(self.syspath(args[1]), args[0])
        elif verb == "setprop":
            self.testbed.set_property(self.syspath(args[0]), args[1], " ".join(args[2:]))
        elif verb == "jackdev":
            devnode, supported, state = args[0], int(args[1], 16), int(args[2], 16)
            rest = args[3:]
            is_switch = "noswitch" not in rest
            name = " ".join(w for w in rest if w != "noswitch").replace("_", " ") or "Jack"
            handler = SwitchDevice(supported, state, name, is_switch)
            self.devices[devnode] = handler
            self.testbed.attach_ioctl(devnode, handler)
        elif verb == "jack":
            self.jack(args[0], [(int(args[1]), int(args[2]))])
        elif verb == "alsa":
            self.emulate(self.read_alsa(args[0]), os.path.dirname(args[0]))
        elif verb == "ctljack":
            self.ctljack(args[0], int(args[1]), [int(v) for v in args[2].split(",")])
        elif verb == "jacks":
            self.jack(args[0], [tuple(int(x) for x in pair.split(":")) for pair in args[1].split(",")])
        elif verb == "bench":
            count, syspath = int(args[0]), self.syspath(args[1])
            for i in range(count):
                # Each change carries a new priority, so each one is a port update.
                self.testbed.set_property(syspath, "AUDIOROUTE_PRIORITY", str(60 + i % 2))
                t = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
                self.testbed.uevent(syspath, "change")
                sys.stdout.write("T %d %d\n" % (i, t))
                # Paced, so that each event's latency is measured on its own.
                time.sleep(0.002)
            sys.stdout.flush()
        elif verb == "tload":
            with open(args[0]) as f:
                records = self.fresh(f.read()).strip().split("\n\n")
            # The stamp is taken before the last record's add: a card's controlC<n>,
            # which completes the card (docs/ports.md), so it is the uevent that counts.
            if len(records) > 1:
                self.testbed.add_from_string("\n\n".join(records[:-1]) + "\n")
            t = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            self.testbed.add_from_string(records[-1] + "\n")
            self.reply("OK tload %d" % t)
            return True
        elif verb == "tunplug":
            stamp = []
            self.unplug(args[0], stamp)
            self.reply("OK tunplug %d %d" % (stamp[0], stamp[-1]))
            return True
        elif verb == "storm":
            count, path, syspath = int(args[0]), args[1], args[2]
            with open(path) as f:
                text = f.read()
            sent = 0
            for _ in range(count):
                fresh = self.fresh(text)
                sent += fresh.count("P: ")
                self.testbed.add_from_string(fresh)
                sent += len(self.below(syspath))
                self.unplug(syspath)
            self.reply("OK storm %d" % sent)
            return True
        else:
            self.reply("ERR unknown command " + verb)
            return True
        self.reply("OK " + verb)
        return True

    def on_stdin(self, source, condition):
        # Read the fd directly: a buffered readline() would keep later lines in
        # Python's buffer, where the GLib watch never sees them.
        chunk = os.read(sys.stdin.fileno(), 65536)
        if not chunk:
            self.loop.quit()
            return False
        self.pending += chunk
        while b"\n" in self.pending:
            line, self.pending = self.pending.split(b"\n", 1)
            try:
                if not self.command(line.decode().strip()):
                    return False
            except Exception as error:  # report, keep serving
                self.reply("ERR %s: %s" % (type(error).__name__, error))
        return True

    def run(self):
        self.reply("READY " + self.root)
        GLib.io_add_watch(sys.stdin, GLib.IO_IN | GLib.IO_HUP, self.on_stdin)
        try:
            self.loop.run()
        finally:
            for pid in self.adopted:
                # Only if the pid is still what the test started (pids are reused).
                try:
                    with open("/proc/%d/cmdline" % pid, "rb") as f:
                        command = f.read()
                    if b"audioroute" in command or b"udevadm" in command:
                        os.kill(pid, 9)
                except OSError:
                    pass


if __name__ == "__main__":
    Emitter().run()
