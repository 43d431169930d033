"""A private D-Bus session bus, and audiorouted on it, for the scripts that measure the daemon
(bench-daemon, bench-client, bench_daemon_udev.py, profile-daemon-order). The Swift tests and
the demo have the same set-up in Sources/AudioRouteTestbed.

    with testbed.testbed(".build/release/audiorouted") as bed:
        bed.daemon.ready()          # READY=1 on its NOTIFY_SOCKET
        ... bed.bus.address, bed.daemon.pid ...
        bed.daemon.stop()           # SIGTERM; raises unless it exits 0

The bus is dbus-daemon with the stock session configuration on a socket in the directory,
ready once it has printed its address. The daemon gets fresh state and runtime directories
there, the bus as its session bus, a system bus address where nothing listens (no BlueZ)
unless one is given, and its own notification socket. Whatever is still running at the end
of the `with` is killed and reaped, and the directory removed.
"""
import contextlib, os, signal, socket, subprocess, tempfile, time

SESSION_CONFIG = "/usr/share/dbus-1/session.conf"


def now_ns():
    """CLOCK_MONOTONIC in ns: the clock of every stamp here (and of the daemon's and the
    client's own stamps)."""
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


class Bus:
    """dbus-daemon on unix:path=DIRECTORY/NAME; `address` is what it printed."""

    def __init__(self, directory, name="bus", config=SESSION_CONFIG):
        self.process = subprocess.Popen(
            ["dbus-daemon", "--config-file=" + config, "--nofork", "--nopidfile", "--print-address=1",
             "--address=unix:path=" + os.path.join(directory, name)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        # The address line is the readiness line: the socket listens once it is printed.
        self.address = self.process.stdout.readline().decode().strip()
        if not self.address.startswith("unix:"):
            self.stop()
            raise RuntimeError("dbus-daemon did not print its address (exit status %s)" % self.process.poll())

    @property
    def pid(self):
        return self.process.pid

    def stop(self):
        """Kills and reaps it (a bus has nothing to save)."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.process.stdout.close()


class Daemon:
    """audiorouted (under `wrapper`, e.g. umockdev-wrapper) on the session bus `bus_address`.

    `started_ns` is stamped right before the exec, so `ready() - started_ns` is exec -> READY=1.
    With notify=False it gets no NOTIFY_SOCKET (readiness is then the caller's to see)."""

    def __init__(self, binary, directory, bus_address, arguments=(), wrapper=(), environment=None, system_bus=None,
                 state_dir=None, runtime_dir=None, notify=True, stderr=None):
        self.state_dir = state_dir or os.path.join(directory, "state")
        self.runtime_dir = runtime_dir or os.path.join(directory, "run")
        self.environment = dict(os.environ, **(environment or {}))
        self.environment["DBUS_SESSION_BUS_ADDRESS"] = bus_address
        self.environment["DBUS_SYSTEM_BUS_ADDRESS"] = system_bus or "unix:path=" + os.path.join(directory, "no-system-bus")
        self.notify = None
        self.environment.pop("NOTIFY_SOCKET", None)
        if notify:
            path = os.path.join(directory, "notify")
            self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            self.notify.bind(path)
            self.environment["NOTIFY_SOCKET"] = path
        self.started_ns = now_ns()
        self.process = subprocess.Popen(
            list(wrapper) + [binary, "--state-dir", self.state_dir, "--runtime-dir", self.runtime_dir] + list(arguments),
            env=self.environment, stderr=stderr)

    @property
    def pid(self):
        return self.process.pid

    def ready(self, timeout=20):
        """Waits for READY=1 on the notification socket; CLOCK_MONOTONIC ns when it came."""
        self.notify.settimeout(timeout)
        try:
            message = self.notify.recv(4096)
        except socket.timeout:
            raise RuntimeError("audiorouted did not say READY=1 within %s s (exit status %s)"
                               % (timeout, self.process.poll())) from None
        stamp = now_ns()
        if message != b"READY=1":
            raise RuntimeError("audiorouted said %r, not READY=1" % message)
        return stamp

    def stop(self, timeout=10):
        """SIGTERM, then waits; raises unless it exits 0 (with its stderr if that is a pipe)."""
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=timeout)
        if code != 0:
            err = self.process.stderr.read().decode(errors="replace") if self.process.stderr else ""
            raise RuntimeError("audiorouted exited %d after SIGTERM%s" % (code, (": " + err[-2000:]) if err else ""))
        return code

    def close(self):
        """Kills and reaps it if it still runs; closes the notification socket."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stderr,):
            if stream:
                stream.close()
        if self.notify:
            self.notify.close()


class Testbed:
    """What `testbed()` gives: its directory, the bus, and the daemon (None without a binary)."""

    def __init__(self, directory, bus, daemon):
        self.directory, self.bus, self.daemon = directory, bus, daemon


@contextlib.contextmanager
def testbed(binary=None, directory=None, **daemon_options):
    """A private bus in `directory` (a fresh temporary one if None, removed at the end), and
    audiorouted on it if `binary` is given (options: see Daemon). The daemon is started, not
    waited for: call `daemon.ready()` (inside a timing, if it is timed)."""
    with contextlib.ExitStack() as stack:
        if directory is None:
            directory = stack.enter_context(tempfile.TemporaryDirectory(prefix="audioroute-testbed-"))
        bus = Bus(directory)
        stack.callback(bus.stop)
        daemon = None
        if binary is not None:
            daemon = Daemon(binary, directory, bus.address, **daemon_options)
            stack.callback(daemon.close)
        yield Testbed(directory, bus, daemon)


# The sound servers' layer-2 bench, as Tests/AudioRouteTestKit/SoundServerBench.swift runs it
# (the same configuration, kept equal by SoundServerBenchTests' comparison of the two).
SINKS = ("speaker", "headphones")
SOURCE = "mic"

BENCH_BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:tmpdir=/tmp</listen>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""

PIPEWIRE_OBJECTS = """context.objects = [
  { factory = adapter args = { factory.name = support.null-audio-sink node.name = "speaker" node.description = "Speaker"
      media.class = "Audio/Sink" audio.position = [ FL FR ] priority.session = 2000 object.linger = true } }
  { factory = adapter args = { factory.name = support.null-audio-sink node.name = "headphones" node.description = "Headphones"
      media.class = "Audio/Sink" audio.position = [ FL FR ] priority.session = 1000 object.linger = true } }
  { factory = adapter args = { factory.name = support.null-audio-sink node.name = "mic" node.description = "Mic" priority.session = 2000
      media.class = "Audio/Source" audio.position = [ FL FR ] object.linger = true } }
]
"""

PULSE_SCRIPT = """load-module module-native-protocol-unix
load-module module-null-sink sink_name=speaker sink_properties=device.description=Speaker
load-module module-null-sink sink_name=headphones sink_properties=device.description=Headphones
load-module module-null-source source_name=mic
set-default-sink speaker
set-default-source mic
"""

REMOVED_VARIABLES = ("PULSE_SERVER", "PULSE_RUNTIME_PATH", "PULSE_COOKIE", "PIPEWIRE_REMOTE", "PIPEWIRE_RUNTIME_DIR",
                     "DISPLAY", "WAYLAND_DISPLAY")


class SoundServer:
    """`kind` ("pipewire": pipewire, wireplumber, pipewire-pulse; "pulseaudio": pulseaudio -n)
    on DIRECTORY/run with its own home and a private bus, two null sinks and a null source.
    `environment` is what a client needs to reach it. `stop()` ends and reaps everything."""

    def __init__(self, kind, directory, timeout=10):
        self.kind, self.directory, self.servers = kind, directory, []
        for sub in ("run", "home", "config/pipewire/pipewire.conf.d", "state", "data"):
            os.makedirs(os.path.join(directory, sub), mode=0o700, exist_ok=True)
        with open(os.path.join(directory, "bus.conf"), "w") as f:
            f.write(BENCH_BUS_CONFIG)
        self.bus = Bus(directory, config=os.path.join(directory, "bus.conf"))
        self.environment = {k: v for k, v in os.environ.items() if k not in REMOVED_VARIABLES}
        self.environment.update(
            XDG_RUNTIME_DIR=os.path.join(directory, "run"), HOME=os.path.join(directory, "home"),
            XDG_CONFIG_HOME=os.path.join(directory, "config"), XDG_STATE_HOME=os.path.join(directory, "state"),
            XDG_DATA_HOME=os.path.join(directory, "data"), DBUS_SESSION_BUS_ADDRESS=self.bus.address,
            DBUS_SYSTEM_BUS_ADDRESS="unix:path=" + os.path.join(directory, "no-system-bus"))
        try:
            self._start(timeout)
        except BaseException:
            self.stop()
            raise

    def _start(self, timeout):
        deadline = time.monotonic() + timeout
        if self.kind == "pipewire":
            with open(os.path.join(self.directory, "config/pipewire/pipewire.conf.d/50-audioroute-bench.conf"), "w") as f:
                f.write(PIPEWIRE_OBJECTS)
            self.launch("pipewire")
            self._wait(deadline, "pipewire did not answer", lambda: self.run("pw-cli", "info", "0").returncode == 0)
            self.launch("wireplumber")
            self.launch("pipewire-pulse")
            self._wait(deadline, "WirePlumber chose no default sink",
                       lambda: "speaker" in self.run("pw-metadata", "-n", "default", "0", "default.audio.sink").stdout)
        elif self.kind == "pulseaudio":
            script = os.path.join(self.directory, "bench.pa")
            with open(script, "w") as f:
                f.write(PULSE_SCRIPT)
            self.launch("pulseaudio", "-n", "-F", script, "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no",
                        "--log-target=stderr", "--system=no", "--disallow-exit")
        else:
            raise ValueError(self.kind)

        def listed():
            sinks = self.run("pactl", "list", "short", "sinks").stdout
            sources = self.run("pactl", "list", "short", "sources").stdout
            names = [line.split("\t")[1] for line in (sinks + sources).splitlines() if "\t" in line]
            return all(name in names for name in SINKS + (SOURCE,))
        self._wait(deadline, "pactl did not list the virtual devices", listed)

    def launch(self, name, *arguments):
        log = open(os.path.join(self.directory, name + ".log"), "ab")
        self.servers.append((name, subprocess.Popen([name] + list(arguments), env=self.environment, stdin=subprocess.DEVNULL,
                                                    stdout=log, stderr=log)))
        log.close()

    def _wait(self, deadline, failure, ready):
        while not ready():
            for name, process in self.servers:
                if process.poll() is not None:
                    raise RuntimeError("%s exited (%s) before it was ready" % (name, process.returncode))
            if time.monotonic() > deadline:
                raise RuntimeError(failure)
            time.sleep(0.02)

    def run(self, *command, check=False):
        """A client to its end, its output as text."""
        return subprocess.run(list(command), env=self.environment, capture_output=True, text=True, check=check)

    def popen(self, *command, **options):
        return subprocess.Popen(list(command), env=self.environment, **options)

    def pid(self, name):
        return next(process.pid for n, process in self.servers if n == name)

    def stop(self):
        for name, process in reversed(self.servers):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=3)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        self.servers = []
        self.bus.stop()


def silence_wav(path, seconds):
    """A WAV of `seconds` of silence, 48 kHz stereo s16, for streams whose content does not matter."""
    import wave
    with wave.open(path, "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(48000)
        w.writeframes(bytes(4 * 48000 * seconds))


def arbitration(server, cli, directory, timeout=120):
    """The tower's work on a sound server's own clients, as a desktop gives it: a Music stream; a
    Phone stream over it (the music interrupted), ended; a Navigation stream (the music ducked),
    ended; a Notification stream with silent mode switched on and off. Each step is waited for in
    `audioroute status` (on `server`'s bus), so that a slow daemon (under valgrind) is followed,
    not outrun. For scripts/profile-daemon-order and bench/client-libraries/measure-daemon."""
    wav = os.path.join(directory, "silence.wav")
    silence_wav(wav, 120)

    def play(role):
        if server.kind == "pipewire":
            return server.popen("pw-play", "--media-role", role, wav, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        environment = dict(server.environment, PULSE_PROP="media.role=" + role.lower())
        return subprocess.Popen(["paplay", wav], env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def status_until(accept, what):
        deadline = time.monotonic() + timeout
        while True:
            text = server.run(cli, "status").stdout
            if accept(text):
                return text
            if time.monotonic() > deadline:
                raise RuntimeError("arbitration: %s; status: %s" % (what, text))
            time.sleep(0.5)

    players = []
    try:
        music = play("Music")
        players.append(music)
        status_until(lambda t: "playback/default  active  owner=pipewire" in t, "no active Music session")
        for role, listed in (("Phone", "playAndRecord/voiceChat  active"), ("Navigation", "duckOthers]  active")):
            other = play(role)
            players.append(other)
            status_until(lambda t: listed in t, "no active %s session" % role)
            other.terminate()
            other.wait(10)
            status_until(lambda t: listed not in t and "playback/default  active" in t, "the music not back after the %s stream" % role)
        music.terminate()
        music.wait(10)
        chime = play("Notification")
        players.append(chime)
        status_until(lambda t: "ambient/default  active" in t, "no active Notification session")
        for state in ("on", "off"):
            result = server.run(cli, "silent", state)
            if result.returncode != 0:
                raise RuntimeError("audioroute silent %s: %s" % (state, result.stderr))
        chime.terminate()
        chime.wait(10)
        status_until(lambda t: "owner=pipewire" not in t, "the streams' sessions stayed")
    finally:
        for player in players:
            if player.poll() is None:
                player.kill()
                player.wait()


@contextlib.contextmanager
def sound_server(kind, directory=None, timeout=10):
    """A `SoundServer` in `directory` (a fresh temporary one if None, removed at the end)."""
    with contextlib.ExitStack() as stack:
        if directory is None:
            directory = stack.enter_context(tempfile.TemporaryDirectory(prefix="audioroute-sound-"))
        server = SoundServer(kind, directory, timeout)
        stack.callback(server.stop)
        yield server
