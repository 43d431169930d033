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
