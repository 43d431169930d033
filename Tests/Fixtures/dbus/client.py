#!/usr/bin/python3
"""A scripted D-Bus client of audiorouted for the daemon tests.

usage: client.py ADDRESS             interactive: one JSON command a line on stdin
       client.py ADDRESS flood N     send N calls, never read the replies, then sleep
       client.py ADDRESS hangup      send a call and disconnect without waiting
       client.py ADDRESS setters N   N SetSilentMode calls on one connection, 60 awaiting
                                     answers at a time, alternately false and true (the
                                     last true); prints {"set": N, "errors": {NAME: N},
                                     "inOrder": BOOL} once all are answered
       client.py ADDRESS getall N    N GetAll calls, one at a time; prints
                                     {"read": N, "silent": [BOOL...], "ms": [...]}
       client.py ADDRESS sessions C S   open C connections, try S OpenSession calls on each
                                     and print {"opened": N, "errors": {NAME: N}}; then hold
                                     them until stdin closes

Interactive commands (a JSON array each), answered by one JSON line on stdout:
  ["call", PATH, INTERFACE, MEMBER, SIGNATURE, [ARGS...]] -> {"reply": [...]} or {"error": NAME, "message": TEXT}
      an argument {"big": N} becomes a string of N "x"
  ["exit"]
Every signal from org.audioroute.AudioRoute1 (broadcast or sent to us) is printed
as {"signal": MEMBER, "path": PATH, "args": [...]}. First line: {"ready": UNIQUE_NAME}.
Always run with /usr/bin/python3 (Debian's, which has dbus and gi).
"""
import json
import os
import sys
import time

import dbus
import dbus.lowlevel
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

NAME = "org.audioroute.AudioRoute1"
PATH = "/org/audioroute/AudioRoute1"


def plain(value):
    if isinstance(value, dbus.Boolean):
        return bool(value)
    if isinstance(value, (dbus.Dictionary, dict)):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    return value


def out(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def expand(arg):
    if isinstance(arg, dict) and "big" in arg:
        return "x" * arg["big"]
    return arg


def raw_calls(bus, count):
    for _ in range(count):
        message = dbus.lowlevel.MethodCallMessage(NAME, PATH, "org.freedesktop.DBus.Properties", "Get")
        message.append("org.audioroute.AudioRoute1", "Version", signature="ss")
        bus.send_message(message)
    bus.flush()


def main():
    address = sys.argv[1]
    if len(sys.argv) > 2 and sys.argv[2] == "flood":
        bus = dbus.bus.BusConnection(address)
        raw_calls(bus, int(sys.argv[3]))
        out({"flooded": int(sys.argv[3])})
        while True:
            time.sleep(60)
    if len(sys.argv) > 2 and sys.argv[2] == "sessions":
        connections = [dbus.bus.BusConnection(address) for _ in range(int(sys.argv[3]))]
        opened, errors = 0, {}
        for bus in connections:
            for n in range(int(sys.argv[4])):
                try:
                    bus.call_blocking(NAME, PATH, NAME, "OpenSession", "s", ["app%d" % n], timeout=20)
                    opened += 1
                except dbus.exceptions.DBusException as error:
                    errors[error.get_dbus_name()] = errors.get(error.get_dbus_name(), 0) + 1
        out({"opened": opened, "errors": errors})
        sys.stdin.read()
        return
    if len(sys.argv) > 2 and sys.argv[2] == "setters":
        DBusGMainLoop(set_as_default=True)
        bus = dbus.bus.BusConnection(address)
        total, state = int(sys.argv[3]), {"sent": 0, "answered": 0, "errors": {}, "order": []}
        loop = GLib.MainLoop()

        def send_next():
            index = state["sent"]
            state["sent"] += 1

            def done(*_):
                state["order"].append(index)
                state["answered"] += 1
                if state["sent"] < total:
                    send_next()
                elif state["answered"] == total:
                    loop.quit()

            def failed(error):
                name = error.get_dbus_name()
                state["errors"][name] = state["errors"].get(name, 0) + 1
                done()

            bus.call_async(NAME, PATH, NAME, "SetSilentMode", "b", [index % 2 == 1], done, failed, timeout=60)

        out({"flooding": total})
        for _ in range(min(60, total)):
            send_next()
        loop.run()
        out({"set": total, "errors": state["errors"], "inOrder": state["order"] == sorted(state["order"]), "firstOutOfOrder": next(([i, state["order"][i - 1], v] for i, v in enumerate(state["order"]) if i and v < state["order"][i - 1]), None)})
        sys.stdin.read()
        return
    if len(sys.argv) > 2 and sys.argv[2] == "getall":
        bus = dbus.bus.BusConnection(address)
        silent, ms = [], []
        for _ in range(int(sys.argv[3])):
            start = time.monotonic()
            reply = bus.call_blocking(NAME, PATH, "org.freedesktop.DBus.Properties", "GetAll", "s", [NAME], timeout=60)
            ms.append(round((time.monotonic() - start) * 1000, 2))
            silent.append(bool(reply["SilentMode"]))
        out({"read": len(ms), "silent": silent, "ms": ms})
        return
    if len(sys.argv) > 2 and sys.argv[2] == "hangup":
        bus = dbus.bus.BusConnection(address)
        raw_calls(bus, 100)
        bus.close()
        out({"hungup": True})
        return

    DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(address)

    def on_signal(*args, **keywords):
        out({"signal": keywords["member"], "path": keywords["path"], "args": plain(list(args))})

    bus.add_signal_receiver(on_signal, bus_name=NAME, member_keyword="member", path_keyword="path")
    loop = GLib.MainLoop()
    buffer = b""

    def on_input(fd, condition):
        nonlocal buffer
        chunk = os.read(fd, 65536)
        if not chunk:
            loop.quit()
            return False
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            command = json.loads(line)
            if command[0] == "exit":
                loop.quit()
                return False
            _, path, interface, member, signature, args = command
            try:
                # An interface of "" sends a call that names none (D-Bus allows it).
                result = bus.call_blocking(NAME, path, interface or None, member, signature, [expand(a) for a in args], timeout=20)
                out({"reply": plain(result)})
            except dbus.exceptions.DBusException as error:
                out({"error": error.get_dbus_name(), "message": error.get_dbus_message()})
        return True

    GLib.io_add_watch(sys.stdin.fileno(), GLib.IO_IN | GLib.IO_HUP, on_input)
    out({"ready": bus.get_unique_name()})
    loop.run()


main()
