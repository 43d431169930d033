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

Always run with /usr/bin/python3 (Debian's, which has gi).
"""
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


class Emitter:
    def __init__(self):
        self.testbed = UMockdev.Testbed.new()
        self.root = self.testbed.get_root_dir()
        self.devices = {}
        self.loop = GLib.MainLoop()
        self.pending = b""
        self.adopted = []

    def reply(self, text):
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    @staticmethod
    def syspath(path):
        return path if path.startswith("/sys/") else "/sys" + path

    def fresh(self, text):
        """The records of text whose device does not exist yet (a re-plug keeps
        the USB host controller, which umockdev refuses to add twice)."""
        keep = []
        for record in text.split("\n\n"):
            lines = [l for l in record.strip().splitlines() if l.startswith("P: ")]
            if lines and os.path.exists(self.root + self.syspath(lines[0][3:].strip())):
                continue
            # umockdev 0.17.16 cannot create a node again after remove_device (its
            # fd table keeps the name), so only jack nodes (input/) are created;
            # the watcher never opens the others, and DEVNAME still names them.
            record = "\n".join(l for l in record.strip().splitlines() if not (l.startswith("N: ") and not l.startswith("N: input/")))
            if record.strip():
                keep.append(record.strip())
        return "\n\n".join(keep) + "\n"

    def load(self, path):
        with open(path) as f:
            self.testbed.add_from_string(self.fresh(f.read()))

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
            if os.path.lexists(path):
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
