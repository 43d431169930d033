"""The watcher of the guest's console and the cards' WAV files, and the guest's clock on the host's."""
import array, os, threading, time

from .common import Failure, median


class Files:
    """Watches, from a thread, what the guest's console and the cards' WAV files gain, and when:
    every 5 ms it reads what was appended and notes the host's CLOCK_MONOTONIC. QEMU writes the
    console unbuffered; a WAV file through stdio, so its data shows up to 4 KiB (21 ms at 48 kHz
    stereo) late: a first loud frame is placed by its distance from the end of its block."""

    def __init__(self, console, wavs):
        self.console, self.wavs = console, wavs
        self.lock = threading.Lock()
        self.ticks = []                        # (host seconds, guest seconds)
        self.loud = {name: 0 for name in wavs}  # frames above the silence threshold so far
        # Per read that found loud frames: the host seconds at which its first loud frame played.
        # The file is written through stdio, a 4 KiB block (21 ms) at a time, when the block is
        # full: the block's last frame played as it reached the file, and a frame k frames from
        # its end that much earlier (QEMU writes each 10 ms of the card's output as it plays it).
        self.onsets = {name: [] for name in wavs}
        self.offsets = {name: 44 for name in wavs}
        self.closed = {name: False for name in wavs}  # the header holds a size: QEMU closed the file
        self.console_offset = 0
        self.steps = []                        # bytes a WAV file grew by between two reads
        self.captures = {}                     # name: what the file gained since capture(name)
        self.growth = {}                       # name: (host seconds, bytes captured) at each read that found more
        self.spreads = []                      # per conversion: median minus smallest offset, s
        self.partial = b""
        self.stopping = False
        self.error = None
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self):
        while not self.stopping:
            now = time.monotonic()
            try:
                self.read_console(now)
                for name, path in self.wavs.items():
                    self.read_wav(name, path, now)
            except Exception as error:  # reported by the next question asked of the files
                self.error = error
                return
            time.sleep(0.005)

    def check(self):
        if self.error is not None:
            raise Failure(f"reading the guest's console and WAV files failed: {self.error!r}")

    def read_console(self, now):
        try:
            with open(self.console, "rb") as f:
                f.seek(self.console_offset)
                data = f.read()
        except FileNotFoundError:
            return
        self.console_offset += len(data)
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()
        for line in lines:
            # A tick cut by anything else on the console is skipped: there are 50 a second.
            fields = line.split()
            if len(fields) == 3 and fields[:2] == [b"AUDIOROUTE-GUEST", b"tick"] and fields[2].isdigit():
                with self.lock:
                    self.ticks.append((now, int(fields[2]) / 1e9))

    def read_wav(self, name, path, now):
        try:
            with open(path, "rb") as f:
                # QEMU opens (and truncates) the file each time a card with this audiodev
                # starts: the USB card's file starts over on every hot-add. A file smaller than
                # what was read says so; so does its header: QEMU writes the data's size into it
                # when it closes the file and a placeholder 0 when it opens it again, which a
                # read that comes late (a busy host) sees even once the new file has grown past
                # the old one's end.
                header = f.read(44)
                size = int.from_bytes(header[40:44], "little") if len(header) == 44 else 0
                if os.fstat(f.fileno()).st_size < self.offsets[name] or (self.closed[name] and size == 0):
                    self.offsets[name] = 44
                self.closed[name] = size != 0
                f.seek(self.offsets[name])
                data = f.read()
        except FileNotFoundError:
            return
        data = data[:len(data) - len(data) % 4]  # whole stereo 16-bit frames only
        if not data:
            return
        self.offsets[name] += len(data)
        with self.lock:
            self.steps.append(len(data))
            if name in self.captures:
                self.captures[name] += data
                self.growth[name].append((now, len(self.captures[name])))
        samples = array.array("h", data)
        loud = sum(1 for i in range(0, len(samples), 2) if abs(samples[i]) > 1000)
        first = next((i // 2 for i in range(0, len(samples), 2) if abs(samples[i]) > 1000), None)
        with self.lock:
            self.loud[name] += loud
            if loud:
                self.onsets[name].append(now - (len(samples) // 2 - first) / 48000)

    def audible(self, name):
        """Seconds of the tone the card has played so far (the audiodevs write 48 kHz)."""
        self.check()
        with self.lock:
            return self.loud[name] / 48000

    def capture(self, name):
        """Keeps what the card's file gains from now on, for take(name)."""
        self.check()
        with self.lock:
            self.captures[name] = bytearray()
            self.growth[name] = []

    def mark(self, name):
        """Frames captured so far: where the capture stands as a report arrives."""
        self.check()
        with self.lock:
            return len(self.captures[name]) // 4

    def take(self, name):
        """What the file gained since capture(name) (S16 stereo frames); the capture ends."""
        self.check()
        with self.lock:
            return self.captures.pop(name)

    def take_growth(self, name):
        """When the capture of `name` grew, and to how many bytes: (host seconds, bytes), in order.
        Taken before take(name)."""
        self.check()
        with self.lock:
            return self.growth.pop(name, [])

    def first_onset(self, name, after):
        self.check()
        with self.lock:
            return next((t for t in self.onsets[name] if t > after), None)

    def guest_time(self, host):
        """The guest's CLOCK_MONOTONIC at a host time: the smallest host-minus-guest offset of the
        ticks within 3 s (both clocks run at the same rate over that; over minutes they may not)."""
        with self.lock:
            near = [h - g for h, g in self.ticks if abs(h - host) < 3]
        if not near:
            raise Failure("no clock ticks from the guest near the event: cannot place it in the guest's time")
        with self.lock:
            self.spreads.append(median(near) - min(near))
        return host - min(near)

    def precision(self):
        """How late a moment read from the files can be: the console's latency (how far the
        ticks' offsets spread) and the WAV files' write granularity (their typical step)."""
        with self.lock:
            return (median(self.spreads) if self.spreads else 0.0, median(self.steps) if self.steps else 0)

    def stop(self):
        self.stopping = True
        self.thread.join()
