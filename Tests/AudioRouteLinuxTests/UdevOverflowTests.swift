import AudioRouteCore
import Foundation
import Testing

/// Lost uevents (issue 14): the udev monitor's receive buffer of the running daemon really
/// overflows (the kernel drops uevents and the next read fails with ENOBUFS), while the
/// hardware changes behind its back; the daemon re-enumerates and its ports become exactly
/// what a fresh enumeration finds, announced to clients as normal port events.
///
/// umockdev cannot produce an overflow: it replaces the netlink socket with a Unix datagram
/// socket, whose sender gets EAGAIN when the queue is full (and umockdev 0.17.16 then aborts);
/// the receiver never sees ENOBUFS. So here the daemon runs without umockdev, in a network
/// namespace of its own (a real NETLINK_KOBJECT_UEVENT socket, which nothing outside the
/// namespace reaches) and a mount namespace where the testbed's sysfs is bind-mounted on
/// /sys. The test sends the uevents itself, from root in that namespace, in udevd's format
/// (what libudev accepts on the "udev" group), with each device's properties from the
/// testbed. Real: the socket, the kernel's overflow and ENOBUFS, libudev, sysfs reads.
/// Staged: the daemon is stopped (SIGSTOP) during the flood so that it cannot drain, and its
/// socket's buffer is shrunk from outside (pidfd_getfd, SO_RCVBUF) so that a small flood fills it.
@Suite(.serialized) struct UdevOverflowTests {
    static let dacUSB = "/devices/pci0000:00/0000:00:12.0/usb2/2-4"
    static let dacOut = "usb-ACTIONS_USB_AUDIO_4512482ADF0FEEEE-00/output"
    /// A sound device that is neither a card nor one of its PCM or control devices: its
    /// events fill the buffer, and the watcher ignores them.
    static let timer = "/devices/virtual/sound/timer"

    @Test func aReceiveBufferOverflowIsRecoveredByReenumerating() throws {
        let bus = try PrivateBus()
        defer { bus.close() }
        let bench = try UmockdevBench()
        defer { bench.close() }
        try bench.load("usb-webcam-logitech-c250")
        try bench.load("usb-headset-razer-blackshark-v3-pro")
        let state = bench.root + "/scratch/daemon"
        let daemon = try bench.start(
            ["--state-dir", state + "/state", "--runtime-dir", state + "/run"], binary: DaemonHotplugTests.daemonBinary,
            // libudev refuses a /sys that is not sysfs, unless told this (systemd's knob for tests).
            environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address, "UMOCKDEV_DIR": "", "SYSTEMD_DEVICE_VERIFY_SYSFS": "0"],
            launcher: [
                "/usr/bin/unshare", "--net", "--mount", "--propagation", "private",
                "/bin/sh", "-ec", "mount --bind \"$0/sys\" /sys; exec \"$@\"", bench.root,
            ])
        defer { _ = try? daemon.stop(SIGKILL) }
        let pid = daemon.process.processIdentifier
        let address = ["--bus-address", bus.address]
        let uevents = Uevents(daemon: pid, testbed: bench.root)

        // The daemon sees the testbed as the machine's hardware.
        let initial = try bench.run(["ports", "--direct", "--json"]).stdout
        try Self.waitForPorts(bench, address, toBe: initial, daemon: daemon)
        #expect(try Self.uids(initial).contains(IDs.usbOut))
        let monitor = try bench.start(["monitor", "--json"] + address)
        defer { _ = try? monitor.stop(SIGTERM) }
        try monitor.waitForLines(1)

        // Normal events reach it through the real socket: a DAC arrives, and leaves.
        try uevents.send("add", Self.dacUSB) { try bench.load("usb-dac-actions-usb-audio") }
        try Self.waitForPorts(bench, address, toBe: try bench.run(["ports", "--direct", "--json"]).stdout, daemon: daemon)
        try uevents.send("remove", Self.dacUSB) { try bench.send("unplug \(Self.dacUSB)") }
        try Self.waitForPorts(bench, address, toBe: initial, daemon: daemon)
        #expect(try uevents.drops() == 0)

        // The overflow: the daemon cannot read, its buffer is small and filled; then the
        // headset leaves and the DAC comes back, and their uevents are dropped by the kernel.
        let buffer = try uevents.shrink(to: 4096)
        kill(pid, SIGSTOP)
        try uevents.fill(200)
        let filled = try uevents.drops()
        try uevents.send("remove", IDs.headsetUSB) { try bench.send("unplug \(IDs.headsetUSB)") }
        try uevents.send("add", Self.dacUSB) { try bench.load("usb-dac-actions-usb-audio") }
        let dropped = try uevents.drops()
        #expect(filled > 0 && dropped > filled, "the kernel dropped \(filled) fill events, then \(dropped - filled) of the headset's and DAC's")
        let heard = monitor.lines.count
        kill(pid, SIGCONT)

        let expected = try bench.run(["ports", "--direct", "--json"]).stdout
        #expect(try !Self.uids(expected).contains(IDs.usbOut))
        try Self.waitForPorts(bench, address, toBe: expected, daemon: daemon)
        try daemon.waitForStderr("uevents were lost")
        // Clients heard it as normal port events: the route left the headset, for the DAC.
        var changes: [JSON] = []
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            changes = monitor.lines.dropFirst(heard).compactMap { try? JSON.parse($0) }.filter { $0["event"]?.string == "routeChange" }
            if changes.last?["current"]?["outputs"]?.strings == [Self.dacOut] { break }
            usleep(10_000)
        }
        #expect(changes.first?["previous"]?["outputs"]?.strings == [IDs.usbOut], "\(monitor.lines)")
        #expect(changes.first?["reason"]?.string == "oldDeviceUnavailable", "\(monitor.lines)")
        #expect(changes.last?["current"]?["outputs"]?.strings == [Self.dacOut], "\(monitor.lines)")

        // And it carries on: the next uevent is handled as usual, with no further resync.
        try uevents.send("remove", Self.dacUSB) { try bench.send("unplug \(Self.dacUSB)") }
        let last = try bench.run(["ports", "--direct", "--json"]).stdout
        try Self.waitForPorts(bench, address, toBe: last, daemon: daemon)
        #expect(daemon.stderr.components(separatedBy: "uevents were lost").count - 1 == 1, "\(daemon.stderr)")
        print("overflow: receive buffer \(buffer) bytes, \(dropped) uevents dropped by the kernel (\(dropped - filled) of them the headset's and DAC's), recovered")
    }

    /// Waits until the daemon's ports (`audioroute ports --json`) are `expected` (the JSON of
    /// `ports --direct`), uid for uid and field for field, except the daemon's sequence numbers.
    static func waitForPorts(_ bench: UmockdevBench, _ address: [String], toBe expected: String, daemon: UmockdevBench.Running) throws {
        let want = try comparable(expected)
        var got: [String] = []
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            let run = try bench.run(["ports", "--json"] + address)
            if run.status == 0 {
                got = try comparable(run.stdout)
                if got == want { return }
            }
            usleep(50_000)
        }
        Issue.record("daemon ports \(got), expected \(want); daemon stderr:\n\(daemon.stderr)")
        throw UmockdevBench.Failure(description: "ports never matched")
    }

    static func comparable(_ text: String) throws -> [String] {
        guard case .array(let ports) = try JSON.parse(text) else { return [] }
        return ports.map { port in
            guard case .object(let members) = port else { return port.text }
            return JSON.object(members.filter { $0.key != "sequence" }).text
        }.sorted()
    }

    static func uids(_ text: String) throws -> Set<String> {
        guard case .array(let ports) = try JSON.parse(text) else { return [] }
        return Set(ports.compactMap { $0["uid"]?.string })
    }
}

/// uevents sent into the daemon's network namespace as udevd sends them (libudev's monitor
/// format on the "udev" netlink group), by a Python helper run there with nsenter.
struct Uevents {
    let daemon: Int32
    let testbed: String

    /// Makes `change` to the testbed, then sends ACTION for every device at or below
    /// `devpath` (parents first for an add, children first for a remove) with its testbed
    /// properties, as the kernel and udevd do: sysfs first, then the uevents. For a remove
    /// the properties are read before the change takes them away.
    func send(_ action: String, _ devpath: String, change: () throws -> Void) throws {
        let saved = testbed + "/scratch/uevents-\(UUID().uuidString).json"
        if action == "add" { try change() }
        _ = try helper(["save", devpath, saved])
        if action != "add" { try change() }
        _ = try helper(["send", action, saved])
    }

    /// Sets the daemon's uevent socket's SO_RCVBUF; returns what the kernel made of it.
    func shrink(to bytes: Int) throws -> Int { Int(try helper(["shrink", String(bytes)])) ?? -1 }

    /// `count` change events of a device the watcher ignores.
    func fill(_ count: Int) throws { _ = try helper(["fill", String(count)]) }

    /// How many messages the kernel dropped for the daemon's uevent socket.
    func drops() throws -> Int { Int(try helper(["drops"])) ?? -1 }

    private func helper(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/nsenter")
        process.arguments = ["--net=/proc/\(daemon)/ns/net", "/usr/bin/python3", "-c", Self.script, String(daemon), testbed] + arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw UmockdevBench.Failure(description: "uevent helper \(arguments): \(String(decoding: errors, as: UTF8.self))")
        }
        return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static let script = #"""
import ctypes, json, os, socket, struct, sys, time

pid, root, command, args = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
NETLINK_KOBJECT_UEVENT, UDEV_GROUP = 15, 2

def murmur2(data):
    # libudev's string_hash32 (MurmurHash2, seed 0), on a little-endian machine.
    m, h = 0x5bd1e995, len(data)
    n = len(data) - len(data) % 4
    for i in range(0, n, 4):
        k = (int.from_bytes(data[i:i + 4], "little") * m) & 0xffffffff
        k = ((k ^ (k >> 24)) * m) & 0xffffffff
        h = ((h * m) & 0xffffffff) ^ k
    rest = data[n:]
    if len(rest) == 3: h ^= rest[2] << 16
    if len(rest) >= 2: h ^= rest[1] << 8
    if rest: h = ((h ^ rest[0]) * m) & 0xffffffff
    h = ((h ^ (h >> 13)) * m) & 0xffffffff
    return h ^ (h >> 15)

def message(properties):
    # struct monitor_netlink_header: "libudev", magic (big-endian), header size, properties
    # offset and length (native), subsystem hash (big-endian, for the socket filter), devtype
    # hash, tag bloom filter (none).
    body = b"".join(("%s=%s" % kv).encode() + b"\0" for kv in properties.items())
    return (b"libudev\0" + struct.pack(">I", 0xfeedcafe) + struct.pack("=III", 40, 40, len(body))
            + struct.pack(">I", murmur2(properties["SUBSYSTEM"].encode())) + struct.pack("=III", 0, 0, 0) + body)

def sender():
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_KOBJECT_UEVENT)
    s.bind((0, 0))
    return s

def emit(s, action, properties):
    properties = dict(properties, ACTION=action, SEQNUM=str(time.monotonic_ns()))
    s.sendto(message(properties), (0, UDEV_GROUP))

def devices(devpath):
    found = []
    for directory, _, files in os.walk(root + "/sys" + devpath):
        if "uevent" in files:
            found.append(directory[len(root) + 4:])
    return sorted(found, key=lambda p: (os.path.basename(p).startswith("controlC"), p.count("/")))

def properties(devpath):
    with open(root + "/sys" + devpath + "/uevent") as f:
        values = dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)
    values["DEVPATH"] = devpath
    return values

def uevent_sockets():
    """(inode, drops) of the daemon's NETLINK_KOBJECT_UEVENT sockets."""
    with open("/proc/%d/net/netlink" % pid) as f:
        rows = [line.split() for line in f.readlines()[1:]]
    # sk Eth Pid Groups Rmem Wmem Dump Locks Drops Inode
    mine = {int(r[9]): int(r[8]) for r in rows if int(r[1]) == NETLINK_KOBJECT_UEVENT}
    result = []
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if target.startswith("socket:[") and int(target[8:-1]) in mine:
            result.append((int(fd), mine[int(target[8:-1])]))
    if not result:
        sys.exit("no uevent socket in process %d" % pid)
    return result

if command == "save":
    devpath, path = args
    with open(path, "w") as f:
        json.dump([properties(device) for device in devices(devpath)], f)
elif command == "send":
    action, path = args
    with open(path) as f:
        found = json.load(f)
    if action == "remove":
        found.reverse()
    s = sender()
    for device in found:
        emit(s, action, device)
elif command == "cycles":
    # count x (add, then remove) of a device tree present in the testbed throughout.
    count, devpath = int(args[0]), args[1]
    found = [properties(device) for device in devices(devpath)]
    s = sender()
    for _ in range(count):
        for device in found:
            emit(s, "add", device)
        for device in reversed(found):
            emit(s, "remove", device)
elif command == "changes":
    # count change events of one device, AUDIOROUTE_PRIORITY alternating 60 and 61: each a port update.
    count, devpath = int(args[0]), args[1]
    base = properties(devpath)
    s = sender()
    for i in range(count):
        emit(s, "change", dict(base, AUDIOROUTE_PRIORITY=str(60 + i % 2)))
elif command == "fill":
    s = sender()
    for _ in range(int(args[0])):
        emit(s, "change", {"DEVPATH": "/devices/virtual/sound/timer", "SUBSYSTEM": "sound"})
elif command == "drops":
    print(sum(drops for _, drops in uevent_sockets()))
elif command == "shrink":
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = os.pidfd_open(pid)
    for fd, _ in uevent_sockets():
        mine = libc.syscall(438, pidfd, fd, 0)  # pidfd_getfd: the daemon's socket, shared
        if mine < 0:
            sys.exit("pidfd_getfd: " + os.strerror(ctypes.get_errno()))
        s = socket.socket(fileno=mine)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, int(args[0]))
        print(s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF))
        s.detach()
        os.close(mine)
"""#
}
