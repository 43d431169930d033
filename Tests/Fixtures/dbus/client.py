#!/usr/bin/python3
"""A D-Bus client of audiorouted for tests: one process, one bus connection.

usage: client.py ADDRESS
Prints "ready <unique name>", then one JSON line per signal from the daemon
({"signal": member, "path": ..., "args": [...]}) and per command answered
({"reply": [...]} or {"error": name, "message": text}). Commands are JSON lines
on stdin: {"call": [path, interface, member, signature, [args...]]}.
It exits when stdin closes (so a dying test runner takes it along).
"""
import json
import sys

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

NAME = "org.audioroute.AudioRoute1"


def plain(value):
    if isinstance(value, (dbus.Array, list)):
        return [plain(v) for v in value]
    if isinstance(value, (dbus.Struct, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dbus.Dictionary):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, dbus.Boolean):
        return bool(value)
    if isinstance(value, (dbus.String, dbus.ObjectPath, dbus.Signature)):
        return str(value)
    if isinstance(value, (dbus.Byte, dbus.Int16, dbus.UInt16, dbus.Int32, dbus.UInt32, dbus.Int64, dbus.UInt64)):
        return int(value)
    if isinstance(value, dbus.Double):
        return float(value)
    return value


def out(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(sys.argv[1])
    # The test's private bus going away ends this client too.
    bus.set_exit_on_disconnect(True)
    loop = GLib.MainLoop()

    def on_signal(*args, **kw):
        out({"signal": kw["member"], "path": kw["path"], "args": plain(list(args))})

    bus.add_signal_receiver(on_signal, bus_name=NAME, path_keyword="path", member_keyword="member")

    def on_input(source, condition):
        line = sys.stdin.readline()
        if not line:
            loop.quit()
            return False
        command = json.loads(line)
        if "flood" in command:
            # Sends N calls and never reads a reply (a client that misbehaves).
            for _ in range(command["flood"]):
                message = dbus.lowlevel.MethodCallMessage(NAME, "/org/audioroute/AudioRoute1",
                                                          "org.freedesktop.DBus.Properties", "GetAll")
                message.append("org.audioroute.AudioRoute1", signature="s")
                bus.send_message(message)
            bus.flush()
            out({"reply": ["flooded"]})
            return True
        path, interface, member, signature, args = command["call"]
        try:
            reply = bus.call_blocking(NAME, path, interface, member, signature, args, timeout=10)
            out({"reply": plain(reply if isinstance(reply, tuple) else ([] if reply is None else [reply]))})
        except dbus.exceptions.DBusException as error:
            out({"error": error.get_dbus_name(), "message": error.get_dbus_message()})
        return True

    GLib.io_add_watch(sys.stdin, GLib.IO_IN | GLib.IO_HUP, on_input)
    out("ready " + bus.get_unique_name())
    loop.run()


if __name__ == "__main__":
    main()
