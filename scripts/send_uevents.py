#!/usr/bin/python3
"""Sends uevents as udevd does, for audiorouted's overflow and storm tests.

usage: send_uevents.py PID TESTBED COMMAND ARGS...   (run in PID's network namespace: nsenter --net=/proc/PID/ns/net)
  PID      the daemon, whose NETLINK_KOBJECT_UEVENT socket is looked up in /proc/PID
  TESTBED  a umockdev testbed root: device properties are read from its sys/.../uevent files
  save DEVPATH FILE     the properties of DEVPATH and every device below it, as JSON
  send ACTION FILE      ACTION for each device saved in FILE (parents first; children first for remove)
  cycles N DEVPATH      N x (add, then remove) of the devices at or below DEVPATH
  changes N DEVPATH     N change events of DEVPATH with AUDIOROUTE_PRIORITY 60, 61, ... then one without
  fill N                N change events of a sound device the watcher ignores
  drops                 how many messages the kernel dropped for PID's uevent sockets
  shrink BYTES          SO_RCVBUF of PID's uevent sockets (through pidfd_getfd), printing the result

Messages use libudev's monitor format on the "udev" netlink group (what libudev's monitor
accepts from udevd), sent as root: umockdev cannot overflow a socket (docs/ports.md, "Lost uevents").
"""
import ctypes, json, os, socket, struct, sys, time
if "--help" in sys.argv[1:] or "-h" in sys.argv[1:]:  # the docstring is the usage (ScriptHelpTests)
    print(__doc__.strip())
    sys.exit(0)

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
    emit(s, "change", base)  # back to what the testbed says
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
