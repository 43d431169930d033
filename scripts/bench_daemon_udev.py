"""audiorouted with its real watchers under umockdev (scripts/bench-daemon --udev).

The testbed is owned by share/demo/emitter.py, run under
umockdev-wrapper with Debian's /usr/bin/python3 (it needs gi); the daemon runs
under umockdev-wrapper against it, with DBUS_SYSTEM_BUS_ADDRESS pointing
nowhere (the BlueZ watcher reports no bus and the daemon goes on).
"""
import bisect, ctypes, json, os, shutil, select, threading, signal, statistics, struct, subprocess, sys, tempfile, time

import testbed  # scripts/testbed.py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIXTURES = os.path.join(ROOT, "Tests", "Fixtures", "udev")
LAPTOP = os.path.join(FIXTURES, "hda-intel-laptop-with-jacks.umockdev")
HEADSET = os.path.join(FIXTURES, "usb-headset-razer-blackshark-v3-pro.umockdev")
HEADSET_USB = "/devices/pci0000:00/0000:00:14.0/usb1/1-11/1-11.4"
SPEAKER_PCM = "dmix:CARD=Intel,DEV=0"
HEADSET_PCM = "dmix:CARD=Pro,DEV=0"

IN_CLOEXEC, IN_NONBLOCK = 0o2000000, 0o4000
IN_CLOSE_WRITE, IN_MOVED_TO = 0x8, 0x80
libc = ctypes.CDLL(None, use_errno=True)
RUNTIME_DIRS = []
BUSES = []
# The environment of the daemon last started (its private session bus), for clients.
LAST_ENV = {}


class Inotify:
    """Renames into a directory (the daemon's atomic replace of asound.conf)."""

    def __init__(self, directory):
        self.fd = libc.inotify_init1(IN_CLOEXEC | IN_NONBLOCK)
        if self.fd < 0 or libc.inotify_add_watch(self.fd, directory.encode(), IN_MOVED_TO) < 0:
            raise OSError(ctypes.get_errno(), "inotify " + directory)

    def wait(self, name, timeout):
        """CLOCK_MONOTONIC ns when `name` was next renamed into place, or None."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                return None
            now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                continue
            offset = 0
            seen = False
            while offset < len(data):
                _, mask, _, length = struct.unpack_from("iIII", data, offset)
                entry = data[offset + 16:offset + 16 + length].rstrip(b"\0").decode()
                offset += 16 + length
                seen = seen or entry == name
            if seen:
                return now


class StampLog:
    """Stamped entries appended by a reader thread. The main thread blocks on a
    condition until the entry it wants is there: polling it every millisecond took
    CPU and the GIL from the threads doing the stamping (2 cores, 5 busy processes)."""

    def __init__(self):
        self.entries = []  # (CLOCK_MONOTONIC ns, value)
        self.changed = threading.Condition()

    def append(self, t, value):
        with self.changed:
            self.entries.append((t, value))
            self.changed.notify_all()

    def first(self, after, want, timeout):
        """The first stamp at or after `after` with `want`, or None after `timeout` s."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                for t, value in self.entries:
                    if t >= after and value == want:
                        return t
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.changed.wait(left)


class RenameLog(threading.Thread):
    """Stamps every rename of asound.conf as inotify reports it, and reads which PCM
    it routes to, on its own thread: the main thread may be waiting for the emitter
    (an unplug's reply comes after its remove_device and clean-up), and an event
    read only then would be stamped late."""

    def __init__(self, watch, conf):
        super().__init__(daemon=True)
        self.watch, self.conf = watch, conf
        self.log = StampLog()  # (CLOCK_MONOTONIC ns, pcm)
        self.running = True

    def run(self):
        while self.running:
            t = self.watch.wait("asound.conf", 0.2)
            if t is not None:
                self.log.append(t, pcm(self.conf))

    def first(self, after, want, timeout):
        return self.log.first(after, want, timeout)


class ClientLog(threading.Thread):
    """A real client of the D-Bus API, `audioroute monitor --json` (the client library
    over sd-bus) run with --timestamps: each routeChange line carries the time the client
    had the event; the line is also stamped as this script reads it, on its own thread."""

    def __init__(self, command, env):
        super().__init__(daemon=True)
        self.process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.log = StampLog()  # (CLOCK_MONOTONIC ns, reason)
        self.ready = threading.Event()

        self.read = StampLog()  # (CLOCK_MONOTONIC ns when this script read the line, reason)

    def run(self):
        for line in self.process.stdout:
            t = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            event = json.loads(line)
            if event.get("event") == "ready":
                self.ready.set()
            elif event.get("event") == "routeChange":
                # monitor --timestamps stamps the line as the client library hands it the
                # event; this script's own stamp adds the pipe and this thread's wake-up.
                self.log.append(event.get("monotonicNs", t), event.get("reason"))
                self.read.append(t, event.get("reason"))

    def first(self, after, reason, timeout):
        return self.log.first(after, reason, timeout)

    def close(self):
        self.process.kill()
        self.process.wait()


class Emitter:
    def __init__(self):
        self.process = subprocess.Popen(
            ["umockdev-wrapper", "/usr/bin/python3", os.path.join(ROOT, "share", "demo", "emitter.py")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1,
            env=dict(os.environ, PYTHONUNBUFFERED="1"))
        ready = self.process.stdout.readline().strip()
        assert ready.startswith("READY "), ready
        self.root = ready[6:]

    def send(self, command):
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        while True:
            line = self.process.stdout.readline().strip()
            if line.startswith("OK"):
                return line
            if line.startswith("ERR") or not line:
                raise RuntimeError("emitter: %s: %s" % (command, line))

    def close(self):
        try:
            self.send("quit")
        except Exception:
            pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        # The emitter does not remove its testbed when it exits.
        shutil.rmtree(self.root, ignore_errors=True)


def status(pid):
    fields = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


def kib(pid, key="VmRSS"):
    return int(status(pid)[key].split()[0])


def needed_libraries(binary):
    """The shared objects the binary loads on its own (ldd), by file name."""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
    paths = [word for line in out.splitlines() for word in line.split() if word.startswith("/")]
    return {os.path.basename(os.path.realpath(path)) for path in paths}


def rss_by_mapping(pid, binary):
    """(KiB of the daemon's own mappings, KiB of libraries only the testbed brought in
    (umockdev's preload and its GLib), {name: KiB} of the largest) from /proc/PID/smaps."""
    own = needed_libraries(binary)
    totals, name = {}, None
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            fields = line.split()
            if fields and "-" in fields[0] and not fields[0].endswith(":"):
                name = fields[5].split("/")[-1] if len(fields) > 5 else "[anon]"
            elif fields and fields[0] == "Rss:":
                totals[name] = totals.get(name, 0) + int(fields[1])
    base = os.path.basename(binary)
    testbed = sum(v for k, v in totals.items() if ".so" in k and k not in own and not k.startswith("ld-linux"))
    return sum(totals.values()) - testbed, testbed, dict(sorted(totals.items(), key=lambda kv: -kv[1])[:8])


def switches(pid):
    """{tid: (name, voluntary + nonvoluntary context switches)} for every live thread."""
    result = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                fields = dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)
            result[int(tid)] = (fields["Name"], int(fields["voluntary_ctxt_switches"]) + int(fields["nonvoluntary_ctxt_switches"]))
        except (OSError, KeyError):
            pass
    return result


def idle_wakeups(pid, seconds):
    before = switches(pid)
    time.sleep(seconds)
    after = switches(pid)
    rows = []
    for tid in sorted(set(before) | set(after)):
        name = (after.get(tid) or before.get(tid))[0]
        if tid in before and tid in after:
            rows.append("%d %s: %d" % (tid, name, after[tid][1] - before[tid][1]))
        elif tid in after:
            rows.append("%d %s: new (%d)" % (tid, name, after[tid][1]))
        else:
            rows.append("%d %s: exited" % (tid, name))
    total = sum(after[t][1] - before[t][1] for t in after if t in before)
    return total, rows


def pcm(path):
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    marker = "pcm.!audioroute_route {"  # the route file's own name, always defined (docs/alsa.md)
    if marker not in text:
        return None
    body = text.split(marker, 1)[1]
    return body.split('slave.pcm "', 1)[1].split('"', 1)[0]


class SendTrace:
    """The CLOCK_MONOTONIC times (ns) of a process's sendmsg(2) calls, recorded by perf
    (syscalls:sys_enter_sendmsg). stop() returns them sorted, or None with `problem` set
    when perf is missing or cannot trace."""

    def __init__(self, pid):
        self.problem = None
        self.path = tempfile.mktemp(prefix="audioroute-bench-sends-", suffix=".data")
        if shutil.which("perf") is None:
            self.problem = "perf is not installed"
            self.process = None
            return
        self.process = subprocess.Popen(["perf", "record", "-q", "-k", "CLOCK_MONOTONIC", "-e", "syscalls:sys_enter_sendmsg",
                                         "-p", str(pid), "-o", self.path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(1)  # perf attaches asynchronously
        if self.process.poll() is not None:
            self.problem = "perf record failed: " + self.process.stderr.read().decode().strip()[:200]

    def stop(self):
        try:
            if self.process is None or self.problem:
                return None
            self.process.send_signal(signal.SIGINT)
            self.process.wait(30)
            out = subprocess.run(["perf", "script", "--ns", "-i", self.path, "-F", "time"], capture_output=True, text=True)
            if out.returncode != 0:
                self.problem = "perf script failed: " + out.stderr.strip()[:200]
                return None
            # "  35319.831679123:" -> seconds with 9 decimals
            return sorted(int(round(float(line.strip().rstrip(":")) * 1e9)) for line in out.stdout.splitlines() if line.strip())
        finally:
            if os.path.exists(self.path):
                os.unlink(self.path)


class StageTrace:
    """BENCH_STAGES=1: where each plug's or unplug's time goes. perf records, over the whole
    machine, the scheduler's switches and the sendmsg(2) and rename(2) calls; stop() sorts
    them by process: the emitter, the daemon, dbus-daemon and the client. Tracing costs each
    traced event a few microseconds, so the latencies printed beside it come out higher."""

    EVENTS = ["sched:sched_switch", "syscalls:sys_enter_sendmsg", "syscalls:sys_enter_rename",
              "syscalls:sys_enter_renameat", "syscalls:sys_enter_renameat2"]
    NAMES = ("emitter", "daemon", "bus", "client")

    def __init__(self):
        self.problem = None
        self.path = tempfile.mktemp(prefix="audioroute-bench-stages-", suffix=".data")
        command = ["perf", "record", "-q", "-a", "-k", "CLOCK_MONOTONIC", "-o", self.path]
        for event in self.EVENTS:
            command += ["-e", event]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(1)  # perf attaches asynchronously
        if self.process.poll() is not None:
            self.problem = "perf record failed: " + self.process.stderr.read().decode().strip()[:200]

    def stop(self, pids):
        """pids: name -> pid. Returns (calls, states): calls[name] is a sorted list of
        (ns, "send" | "rename"); states[tid] a sorted list of (ns, "run" | "wait" | "sleep"),
        the state each of those processes' threads entered then; or None (see `problem`)."""
        who = {}
        for name, pid in pids.items():
            try:
                for tid in os.listdir("/proc/%d/task" % pid):
                    who[int(tid)] = name
            except OSError:
                pass
        try:
            if self.problem:
                return None
            self.process.send_signal(signal.SIGINT)
            self.process.wait(60)
            out = subprocess.run(["perf", "script", "--ns", "-i", self.path, "-F", "tid,time,event,trace"],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                self.problem = "perf script failed: " + out.stderr.strip()[:200]
                return None
            calls = {name: [] for name in pids}
            states = {}
            for line in out.stdout.splitlines():
                words = line.split()
                if len(words) < 3:
                    continue
                tid, t, event = int(words[0]), int(round(float(words[1].rstrip(":")) * 1e9)), words[2].rstrip(":")
                if event == "sched:sched_switch":
                    # prev_comm=... prev_pid=N prev_prio=P prev_state=S ==> next_comm=... next_pid=M ...
                    fields = dict(w.split("=", 1) for w in words[3:] if "=" in w)
                    prev, nxt = int(fields.get("prev_pid", -1)), int(fields.get("next_pid", -1))
                    if prev in who:
                        # R: preempted, still runnable; anything else: it blocked.
                        states.setdefault(prev, []).append((t, "wait" if fields.get("prev_state", "").startswith("R") else "sleep"))
                    if nxt in who:
                        states.setdefault(nxt, []).append((t, "run"))
                elif tid in who:
                    calls[who[tid]].append((t, "send" if "sendmsg" in event else "rename"))
            for rows in list(calls.values()) + list(states.values()):
                rows.sort()
            return calls, states, who
        finally:
            if os.path.exists(self.path):
                os.unlink(self.path)


def stage_report(trace, flips):
    """flips: (kind, emitter stamp ns, client stamp ns). Prints, from the uevent's send to
    the client's stamp: the segments between the daemon's rename, its last signal and
    dbus-daemon's last send; and how long each process ran and waited for a CPU (runnable,
    preempted or not yet scheduled) inside that time."""
    calls, states, who = trace

    def first(rows, kind, after, before):
        for t, k in rows[bisect.bisect_left(rows, (after, "")):]:
            if t > before:
                return None
            if k == kind:
                return t
        return None

    def last(rows, kind, after, before):
        found = None
        for t, k in rows[bisect.bisect_left(rows, (after, "")):]:
            if t > before:
                break
            if k == kind:
                found = t
        return found

    def time_in(tid, a, b):
        spent = {"run": 0, "wait": 0, "sleep": 0}
        rows = states.get(tid, [])
        i = bisect.bisect_right(rows, (a, "~"))
        state, now = (rows[i - 1][1] if i else "sleep"), a
        while i < len(rows) and rows[i][0] < b:
            spent[state] += rows[i][0] - now
            now, state = rows[i]
            i += 1
        spent[state] += b - now
        return spent

    segments, cpu = [], []
    for kind, stamp, heard in flips:
        t0 = first(calls["emitter"], "send", stamp, heard)
        if t0 is None:
            continue
        renamed = first(calls["daemon"], "rename", t0, heard)
        signalled = last(calls["daemon"], "send", renamed or t0, heard)
        forwarded = last(calls["bus"], "send", signalled or t0, heard)
        points = [t0, renamed, signalled, forwarded, heard]
        if None in points:
            continue
        segments.append([(b - a) / 1e6 for a, b in zip(points, points[1:])])
        row = {}
        for name in ("daemon", "bus", "client"):
            total = {"run": 0, "wait": 0}
            for tid in (t for t, n in who.items() if n == name):
                spent = time_in(tid, t0, heard)
                total["run"] += spent["run"]
                total["wait"] += spent["wait"]
            row[name] = (total["run"] / 1e6, total["wait"] / 1e6)
        cpu.append(row)
    if not segments:
        print("stages: nothing matched")
        return
    print("stages over %d plugs/unplugs, ms (p50 / p99 / max):" % len(segments))
    for i, name in enumerate(["uevent sent -> daemon renamed asound.conf", "-> daemon's last signal sent",
                              "-> dbus-daemon's last send", "-> client's stamp"]):
        values = [s[i] for s in segments]
        print("  %-42s %.3f / %.3f / %.3f" % (name, percentile(values, 50), percentile(values, 99), max(values)))
    for name in ("daemon", "bus", "client"):
        for j, what in enumerate(("running", "waiting for a CPU")):
            values = [row[name][j] for row in cpu]
            print("  %-42s %.3f / %.3f / %.3f" % ("%s %s" % (name, what), percentile(values, 50), percentile(values, 99), max(values)))
    print("  the slowest 1%, segments; then running/waiting for daemon, dbus-daemon, client:")
    order = sorted(range(len(segments)), key=lambda i: -sum(segments[i]))
    for i in order[:max(1, len(segments) // 100)]:
        print("    " + " ".join("%.3f" % v for v in segments[i]) + " = %.3f;  " % sum(segments[i])
              + "  ".join("%.3f/%.3f" % cpu[i][n] for n in ("daemon", "bus", "client")))


def idle_priority(pid):
    """SCHED_IDLE for every thread of `pid`: it then runs only on a CPU the daemon,
    dbus-daemon and the client leave free."""
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            os.sched_setscheduler(int(tid), os.SCHED_IDLE, os.sched_param(0))
        except OSError:
            pass


def latency(binary, emitter, watch, conf, pid, flips, harness_idle):
    """uevent -> asound.conf and uevent -> client latency over FLIPS paced plugs and unplugs.

    harness_idle: this script's threads, the emitter and perf run at SCHED_IDLE, so that on
    a machine with few cores they do not take a CPU from the chain measured (the daemon,
    dbus-daemon, the client). The client stamps its own lines and perf stamps the uevent's
    send, so neither stamp depends on the harness's priority; the rename stamp does (this
    script's inotify thread)."""
    print("-- latency, the harness (this script, the emitter, perf) at %s priority:"
          % ("SCHED_IDLE" if harness_idle else "the default"))
    # Paced plugs and unplugs; each waits for its rewrite.
    latencies = {"plug": [], "unplug": []}
    heard = {"plug": [], "unplug": []}
    read_by_script = []
    renames = RenameLog(watch, conf)
    renames.start()
    client = ClientLog([os.path.join(os.path.dirname(binary), "audioroute"), "monitor", "--json", "--timestamps"], LAST_ENV)
    client.start()
    assert client.ready.wait(20), "audioroute monitor did not connect"
    # When each uevent really leaves the testbed: umockdev sends it with one sendmsg(2)
    # from the emitter to the daemon's event socket. The emitter's own stamp comes
    # before umockdev builds the device's sysfs entries (plug) or reads its uevent file
    # (unplug). Traced in the emitter only, so the daemon runs untraced.
    sends = SendTrace(emitter.process.pid)
    stages = StageTrace() if os.environ.get("BENCH_STAGES") else None
    if harness_idle:
        for harness in (os.getpid(), emitter.process.pid, sends.process.pid if sends.process else None,
                        stages.process.pid if stages else None):
            if harness is not None:
                idle_priority(harness)
    sent_stamps = []
    stage_flips = []
    for i in range(flips):
        plug = i % 2 == 0
        reply = emitter.send(("tload " + HEADSET) if plug else ("tunplug " + HEADSET_USB))
        sent = int(reply.split()[2])
        sent_stamps.append(("plug" if plug else "unplug", sent))
        want = HEADSET_PCM if plug else SPEAKER_PCM
        t = renames.first(sent, want, 10)
        assert t is not None, "no rewrite after %s %d" % ("plug" if plug else "unplug", i)
        latencies["plug" if plug else "unplug"].append((t - sent) / 1e6)
        c = client.first(sent, "newDeviceAvailable" if plug else "oldDeviceUnavailable", 10)
        assert c is not None, "the client heard no RouteChanged after %s %d" % ("plug" if plug else "unplug", i)
        heard["plug" if plug else "unplug"].append((c - sent) / 1e6)
        stage_flips.append(("plug" if plug else "unplug", sent, c))
        r = client.read.first(sent, "newDeviceAvailable" if plug else "oldDeviceUnavailable", 10)
        read_by_script.append((r - sent) / 1e6)
    for kind, values in latencies.items():
        print("uevent -> asound.conf renamed (%s, %d): p50 %.2f ms, p99 %.2f ms, max %.2f ms"
              % (kind, len(values), percentile(values, 50), percentile(values, 99), max(values)))
    both = latencies["plug"] + latencies["unplug"]
    print("uevent -> asound.conf renamed (all %d): p50 %.2f ms, p99 %.2f ms" % (len(both), percentile(both, 50), percentile(both, 99)))
    for kind, values in heard.items():
        print("uevent -> client heard RouteChanged (%s, %d): p50 %.2f ms, p99 %.2f ms, max %.2f ms"
              % (kind, len(values), percentile(values, 50), percentile(values, 99), max(values)))
    both = heard["plug"] + heard["unplug"]
    print("uevent -> client heard RouteChanged (all %d): p50 %.2f ms, p99 %.2f ms" % (len(both), percentile(both, 50), percentile(both, 99)))
    print("uevent -> this script read the client's line (all %d): p50 %.2f ms, p99 %.2f ms"
          % (len(read_by_script), percentile(read_by_script, 50), percentile(read_by_script, 99)))
    if stages is not None:
        trace = stages.stop({"emitter": emitter.process.pid, "daemon": pid, "bus": BUSES[-1].pid, "client": client.process.pid})
        if trace is None:
            print("stages: not measured (%s)" % stages.problem)
        else:
            stage_report(trace, stage_flips)
    emitted = sends.stop()
    if emitted is None:
        print("uevent sent (sendmsg) -> ...: not measured (%s)" % sends.problem)
    else:
        # The first uevent each plug or unplug sends after its stamp completes or breaks the card.
        offsets = {"plug": [], "unplug": []}
        from_send = {"plug": [], "unplug": []}
        heard_all = {"plug": iter(heard["plug"]), "unplug": iter(heard["unplug"])}
        renamed_all = {"plug": iter(latencies["plug"]), "unplug": iter(latencies["unplug"])}
        from_send_renamed = []
        for kind, stamp in sent_stamps:
            first = next((t for t in emitted if t >= stamp), None)
            h, r = next(heard_all[kind]), next(renamed_all[kind])
            if first is None:
                continue
            offset = (first - stamp) / 1e6
            offsets[kind].append(offset)
            from_send[kind].append(h - offset)
            from_send_renamed.append(r - offset)
        for kind in ("plug", "unplug"):
            print("emitter's stamp -> uevent sent (%s, %d): p50 %.2f ms, p99 %.2f ms (the testbed's own work)"
                  % (kind, len(offsets[kind]), percentile(offsets[kind], 50), percentile(offsets[kind], 99)))
        print("uevent sent -> asound.conf renamed (all %d): p50 %.2f ms, p99 %.2f ms"
              % (len(from_send_renamed), percentile(from_send_renamed, 50), percentile(from_send_renamed, 99)))
        for kind in ("plug", "unplug"):
            print("uevent sent -> client heard RouteChanged (%s, %d): p50 %.2f ms, p99 %.2f ms, max %.2f ms"
                  % (kind, len(from_send[kind]), percentile(from_send[kind], 50), percentile(from_send[kind], 99), max(from_send[kind])))
        both = from_send["plug"] + from_send["unplug"]
        print("uevent sent -> client heard RouteChanged (all %d): p50 %.2f ms, p99 %.2f ms" % (len(both), percentile(both, 50), percentile(both, 99)))
    client.close()
    renames.running = False
    renames.join()


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def start(binary, emitter, d, notify=True, extra=None):
    """audiorouted under umockdev-wrapper on the emitter's testbed, on a private session bus of
    its own in `d` (scripts/testbed.py); notify: READY=1 on its own socket (`daemon.notify`).
    (the daemon, the inotify watch of its runtime directory, the route file's path)."""
    # The runtime directory on tmpfs, as $XDG_RUNTIME_DIR is (/run/user/UID): the
    # route file's fsyncs then cost what they cost there. State stays on disk.
    run = tempfile.mkdtemp(prefix="audioroute-bench-run-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    RUNTIME_DIRS.append(run)
    os.makedirs(os.path.join(run, "audioroute"), mode=0o700)
    watch = Inotify(os.path.join(run, "audioroute"))
    # The daemon serves its D-Bus API on the session bus: a private one per run.
    bus = testbed.Bus(d)
    BUSES.append(bus)
    env = {"UMOCKDEV_DIR": emitter.root}
    state = os.path.join(d, "state")
    if os.environ.get("BENCH_STATE_ON_TMPFS"):
        # To see what the state file's fsyncs on disk cost the route service.
        state = os.path.join(run, "state")
    if os.environ.get("BENCH_JOURNAL"):
        # As under systemd: stderr is the journal's stream, which $JOURNAL_STREAM names by
        # device and inode, so the daemon logs in the journald form (JournalLogHandler).
        open(os.path.join(d, "stderr"), "w").close()  # reopened below: the same inode
        info = os.stat(os.path.join(d, "stderr"))
        env["JOURNAL_STREAM"] = "%d:%d" % (info.st_dev, info.st_ino)
    daemon = testbed.Daemon(
        # The daemon's default log level (notice, as the systemd units run it): the logging code
        # is part of what the daemon maps, and a quieter level would hide it until a first warning.
        # No UCM helper: a umockdev card has no control device a UCM profile could open, and
        # libasound's card lookup aborts inside umockdev's preload (docs/decisions.md); the UCM
        # helper's memory is scripts/bench-ucm-helper's, and the real kernel's bench measures both.
        binary, d, bus.address, arguments=extra or ["--ucm-helper", "none"], wrapper=["umockdev-wrapper"], environment=env,
        state_dir=state, runtime_dir=run, notify=notify, stderr=open(os.path.join(d, "stderr"), "w"))
    LAST_ENV.clear()
    LAST_ENV.update(daemon.environment)
    return daemon, watch, os.path.join(run, "audioroute", "asound.conf")


def main(argv):
    try:
        run(argv)
    finally:
        for bus in BUSES:
            bus.stop()
        for directory in RUNTIME_DIRS:
            shutil.rmtree(directory, ignore_errors=True)


def run(argv):
    binary = os.path.abspath(argv[0])
    runs = int(argv[1]) if len(argv) > 1 else 10
    plugs = int(argv[2]) if len(argv) > 2 else 5000
    flips = int(argv[3]) if len(argv) > 3 else 1000
    idle = float(argv[4]) if len(argv) > 4 else 10.0

    ready_ms, first_ms, speaker_ms, rss_start, own_start = [], [], [], [], []
    # Start-up, RUNS times, each with a fresh testbed holding the laptop.
    for _ in range(runs):
        emitter = Emitter()
        daemon = None
        with tempfile.TemporaryDirectory() as d:
            try:
                for command in ("jackdev /dev/input/event8 40 0 HDA_Intel_Line_Out", "jackdev /dev/input/event9 4 0 HDA_Intel_Front_Headphone",
                                "jackdev /dev/input/event10 10 0 HDA_Intel_Front_Mic", "load " + LAPTOP):
                    emitter.send(command)
                daemon, watch, conf = start(binary, emitter, d)
                t0 = daemon.started_ns
                # READY=1 and the rewrites, timed as they arrive (select on both).
                ready = first = speaker = None
                deadline = time.monotonic() + 20
                while (ready is None or speaker is None) and time.monotonic() < deadline:
                    readable = select.select([daemon.notify, watch.fd], [], [], 1)[0]
                    now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
                    if daemon.notify in readable:
                        daemon.ready()
                        ready = now
                    if watch.fd in readable and watch.wait("asound.conf", 0.001) is not None:
                        first = first or now
                        if pcm(conf) == SPEAKER_PCM:
                            speaker = now
                assert ready and speaker, "no READY=1 or no speaker route"
                ready_ms.append((ready - t0) / 1e6)
                first_ms.append((first - t0) / 1e6)
                speaker_ms.append((speaker - t0) / 1e6)
                time.sleep(3)  # past the 2 s restore window, start-up threads retired
                rss_start.append(kib(daemon.pid))
                own_start.append(rss_by_mapping(daemon.pid, binary))
                daemon.stop()
            finally:
                if daemon is not None:
                    daemon.close()
                emitter.close()

    print("%d runs of %s under umockdev (laptop fixture: speaker, mic, 3 jack switches)" % (runs, binary))
    print("exec -> READY=1 received: median %.1f ms, min %.1f, max %.1f" % (statistics.median(ready_ms), min(ready_ms), max(ready_ms)))
    print("exec -> first asound.conf (initial route, before udev enumeration): median %.1f ms, min %.1f, max %.1f"
          % (statistics.median(first_ms), min(first_ms), max(first_ms)))
    print("exec -> asound.conf routing to the speaker (after enumeration): median %.1f ms, min %.1f, max %.1f"
          % (statistics.median(speaker_ms), min(speaker_ms), max(speaker_ms)))
    print("VmRSS 3 s after start: median %.2f MiB, min %.2f, max %.2f"
          % (statistics.median(rss_start) / 1024, min(rss_start) / 1024, max(rss_start) / 1024))
    # umockdev-wrapper preloads libumockdev-preload and GLib into the daemon; on a
    # machine they are not there. The daemon's own mappings are everything else.
    own = [o for o, _, _ in own_start]
    print("  of which the daemon's own mappings: median %.2f MiB, min %.2f, max %.2f; the testbed's preload libraries: median %.2f MiB"
          % (statistics.median(own) / 1024, min(own) / 1024, max(own) / 1024, statistics.median(t for _, t, _ in own_start) / 1024))
    print("  largest mappings (KiB): " + ", ".join("%s %d" % kv for kv in own_start[-1][2].items()))

    # One long run: idle wake-ups, plug/unplug storm with RSS samples, latency.
    emitter = Emitter()
    daemon = None
    with tempfile.TemporaryDirectory() as d:
        try:
            for command in ("jackdev /dev/input/event8 40 0 HDA_Intel_Line_Out", "jackdev /dev/input/event9 4 0 HDA_Intel_Front_Headphone",
                            "jackdev /dev/input/event10 10 0 HDA_Intel_Front_Mic", "load " + LAPTOP):
                emitter.send(command)
            daemon, watch, conf = start(binary, emitter, d, notify=False)
            while pcm(conf) != SPEAKER_PCM:
                assert watch.wait("asound.conf", 20) is not None
            time.sleep(3)
            pid = daemon.pid
            print("threads after start: %s" % status(pid)["Threads"])
            total, rows = idle_wakeups(pid, idle)
            print("context switches in %.0f s idle after start, per thread (voluntary+nonvoluntary): total %d; %s"
                  % (idle, total, "; ".join(rows)))

            samples = [(0, kib(pid), kib(pid, "VmHWM"))]
            chunk = max(1, plugs // 10)
            done = 0
            started = time.monotonic()
            uevents = 0
            while done < plugs:
                n = min(chunk, plugs - done)
                uevents += int(emitter.send("storm %d %s %s" % (n, HEADSET, HEADSET_USB)).split()[2])
                done += n
                samples.append((done, kib(pid), kib(pid, "VmHWM")))
            storm_s = time.monotonic() - started
            # Settle: the daemon may still be draining; the headset is unplugged, so the route ends on the speaker.
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                time.sleep(1)
                if pcm(conf) == SPEAKER_PCM and status(pid)["State"].startswith("S"):
                    break
            time.sleep(2)  # the coalesced state save (500 ms)
            with open(os.path.join(os.path.dirname(os.path.dirname(conf)) if os.environ.get("BENCH_STATE_ON_TMPFS") else d, "state", "state.json")) as f:
                counter = json.load(f)["sequenceCounter"]
            samples.append(("settled", kib(pid), kib(pid, "VmHWM")))
            print("storm: %d plug/unplug cycles of the USB headset (%d port events, %d uevents) sent in %.1f s; "
                  "sequenceCounter afterwards %d (1 laptop + 1 per plug seen = %d expected)"
                  % (plugs, 2 * plugs, uevents, storm_s, counter, 1 + plugs))
            print("VmRSS / VmHWM (MiB) after N cycles: " + ", ".join(
                "%s: %.2f/%.2f" % (n, r / 1024, h / 1024) for n, r, h in samples))
            total, rows = idle_wakeups(pid, idle)
            print("context switches in %.0f s idle after the storm: total %d; %s" % (idle, total, "; ".join(rows)))

            for harness_idle in (False, True):
                latency(binary, emitter, watch, conf, pid, flips, harness_idle)
            print("VmRSS after the latency run: %.2f MiB, VmHWM %.2f MiB" % (kib(pid) / 1024, kib(pid, "VmHWM") / 1024))
            own, testbed, largest = rss_by_mapping(pid, binary)
            print("  of which the daemon's own mappings: %.2f MiB; the testbed's preload libraries: %.2f MiB; largest (KiB): %s"
                  % (own / 1024, testbed / 1024, ", ".join("%s %d" % kv for kv in largest.items())))
            print("exit status after SIGTERM: %d" % daemon.stop(timeout=30))
            with open(os.path.join(d, "stderr")) as f:
                err = f.read()
            refused = err.count("port event refused")
            # "TIME LEVEL label: ..." (swift-log's stream form) or "<N>label: ..." (journald's).
            priorities = {"2": "critical", "3": "error", "4": "warning", "5": "notice", "6": "info", "7": "debug"}

            def level_of(line):
                if line.startswith("<") and line[2:3] == ">":
                    return priorities.get(line[1], "?")
                words = line.split()
                return words[1] if len(words) > 1 else "?"
            levels = {}
            for line in err.splitlines():
                level = level_of(line)
                levels[level] = levels.get(level, 0) + 1
            print("daemon log: %d lines (%s), %d 'port event refused'"
                  % (len(err.splitlines()), ", ".join("%s %d" % kv for kv in sorted(levels.items())), refused))
            loud = [line for line in err.splitlines() if level_of(line) in ("warning", "error", "critical")]
            if loud:
                print("first warnings:\n" + "\n".join(loud[:5]))
        finally:
            if daemon is not None:
                daemon.close()
            emitter.close()
