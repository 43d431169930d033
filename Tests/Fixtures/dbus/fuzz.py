#!/usr/bin/python3
"""A seeded D-Bus fuzzer of audiorouted for the reliability tests.

usage: fuzz.py ADDRESS SEED CALLS [MAX_BYTES]

Sends CALLS method calls to org.audioroute.AudioRoute1 built from SEED: real and
unknown paths (one longer than any the daemon serves), interfaces (the API's, others,
none at all), members, signatures and values (strings, byte arrays and nested
containers, of the right and the wrong shape; each call's body at most MAX_BYTES,
default 1 MiB), with
up to 32 calls in flight on each of 4 connections. It never reads what it gets back
beyond counting replies and errors. Its last line on stdout is one JSON object:
{"sent": N, "replies": N, "errors": {NAME: N}, "noReply": N}.
Always run with /usr/bin/python3 (Debian's, which has dbus and gi).
"""
import json
import random
import sys

import dbus
import dbus.lowlevel
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

NAME = "org.audioroute.AudioRoute1"
ROOT = "/org/audioroute/AudioRoute1"
INTERFACES = [
    "org.audioroute.AudioRoute1", "org.audioroute.Session1", "org.freedesktop.DBus.Properties",
    "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Peer", "org.example.Nothing", None,
]
MEMBERS = [
    "OpenSession", "SetPortPriority", "SetSilentMode", "Explain", "SetCategory", "SetActive", "OverrideOutput",
    "SetPreferredInput", "SetPrefersInterruptionOnRouteDisconnect", "Close", "Get", "GetAll", "Set", "Introspect",
    "Ping", "Nope",
]
# The API's methods: a share of the calls take one of these shapes, to pass the server's checks
# and reach the daemon's own (names, ranges, owners, the tower).
METHODS = [
    ("org.audioroute.AudioRoute1", "OpenSession", "s"), ("org.audioroute.AudioRoute1", "SetPortPriority", "si"),
    ("org.audioroute.AudioRoute1", "SetSilentMode", "b"), ("org.audioroute.AudioRoute1", "Explain", ""),
    ("org.audioroute.Session1", "SetCategory", "ssas"), ("org.audioroute.Session1", "SetActive", "bb"),
    ("org.audioroute.Session1", "OverrideOutput", "s"), ("org.audioroute.Session1", "SetPreferredInput", "s"),
    ("org.audioroute.Session1", "SetPrefersInterruptionOnRouteDisconnect", "b"), ("org.audioroute.Session1", "Close", ""),
    ("org.freedesktop.DBus.Properties", "Get", "ss"), ("org.freedesktop.DBus.Properties", "GetAll", "s"),
    ("org.freedesktop.DBus.Properties", "Set", "ssv"), ("org.freedesktop.DBus.Introspectable", "Introspect", ""),
]
# Signatures of every shape, so that a share of the calls fail the signature check or reach the limits.
SIGNATURES = ["", "s", "si", "b", "ssas", "bb", "ss", "ssv", "ay", "as", "a{sv}", "(si)", "i", "u", "x", "t", "d", "v", "aay", "a(ss)"]
WORDS = ["playback", "playAndRecord", "ambient", "default", "voiceChat", "mixWithOthers", "duckOthers", "speaker", "none",
         "org.audioroute.AudioRoute1", "Route", "Ports", "SilentMode", "Version", "spk", "mic", "", "\u00e9\u00e8", "x"]


class Maker:
    def __init__(self, rng, max_bytes):
        self.rng = rng
        self.max_bytes = max_bytes
        self.left = max_bytes

    def start_call(self):
        """A new call's budget: its body stays within max_bytes."""
        self.left = self.max_bytes

    def size(self):
        # Mostly small; now and then up to what the call has left.
        r = self.rng.random()
        if r < 0.8:
            n = self.rng.randint(0, 64)
        elif r < 0.95:
            n = self.rng.randint(64, 8192)
        else:
            n = self.rng.randint(8192, self.max_bytes)
        n = max(0, min(n, self.left - 16))
        self.left -= n + 16
        return n

    def count(self, each):
        """How many items of about `each` bytes an array gets."""
        n = min(self.size(), 4096, max(0, self.left) // (each + 8))
        self.left -= n * (each + 8)
        return n

    def string(self):
        if self.rng.random() < 0.6:
            return self.rng.choice(WORDS)
        return "y" * self.size()

    def value(self, code, depth=0):
        r = self.rng
        if code == "s":
            return dbus.String(self.string())
        if code == "b":
            return dbus.Boolean(r.random() < 0.5)
        if code == "i":
            return dbus.Int32(r.choice([0, 1, -1, 1000, 1001, -1001, 2**31 - 1, -(2**31)]))
        if code == "u":
            return dbus.UInt32(r.randint(0, 2**32 - 1))
        if code == "x":
            return dbus.Int64(r.choice([0, -(2**63), 2**63 - 1]))
        if code == "t":
            return dbus.UInt64(r.randint(0, 2**64 - 1))
        if code == "d":
            return dbus.Double(r.random())
        if code == "v":
            inner = r.choice(["s", "i", "b", "as", "ay"]) if depth < 3 else "s"
            return self.value(inner, depth + 1) if inner in ("as", "ay") else self.variant(inner, depth)
        if code == "ay":
            return dbus.ByteArray(b"z" * self.size())
        if code == "as":
            return dbus.Array([self.string()[:256] for _ in range(self.count(256))], signature="s")
        if code == "aay":
            return dbus.Array([dbus.ByteArray(b"q" * r.randint(0, 64)) for _ in range(self.count(64))], signature="ay")
        if code == "a{sv}":
            return dbus.Dictionary({self.string()[:64] + str(i): dbus.String("v") for i in range(self.count(80))}, signature="sv")
        if code == "(si)":
            return dbus.Struct((self.string(), dbus.Int32(1)), signature="si")
        if code == "a(ss)":
            return dbus.Array([dbus.Struct(("a", "b"), signature="ss") for _ in range(self.count(16))], signature="(ss)")
        raise ValueError(code)

    def variant(self, inner, depth):
        value = self.value(inner, depth + 1)
        return value.__class__(value, variant_level=1)


def split(signature):
    """The complete types of a signature."""
    types, i = [], 0
    while i < len(signature):
        j = i
        depth = 0
        while True:
            c = signature[j]
            if c in "({":
                depth += 1
            elif c in ")}":
                depth -= 1
            j += 1
            if depth == 0 and c != "a":
                break
        types.append(signature[i:j])
        i = j
    return types


def main():
    address, seed, calls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    max_bytes = int(sys.argv[4]) if len(sys.argv) > 4 else 1 << 20
    rng = random.Random(seed)
    maker = Maker(rng, max_bytes)
    DBusGMainLoop(set_as_default=True)
    loop = GLib.MainLoop()
    connections = [dbus.bus.BusConnection(address) for _ in range(4)]
    counts = {"sent": 0, "replies": 0, "errors": {}, "noReply": 0}
    in_flight = [0] * len(connections)
    sessions = []

    def on_reply(index):
        def handler(*args):
            counts["replies"] += 1
            for arg in args:
                if isinstance(arg, dbus.ObjectPath) and "/session/" in arg:
                    sessions.append(str(arg))
            done(index)
        return handler

    def on_error(index):
        def handler(error):
            name = error.get_dbus_name() or "?"
            counts["errors"][name] = counts["errors"].get(name, 0) + 1
            done(index)
        return handler

    def done(index):
        in_flight[index] -= 1
        pump()

    def pick_path():
        r = rng.random()
        if r < 0.5 or not sessions:
            return ROOT
        if r < 0.8:
            return rng.choice(sessions)
        if r < 0.9:
            return ROOT + "/session/" + str(rng.randint(0, 10**6))
        if r < 0.97:
            return "/org/example/x"
        return "/" + "p" * rng.randint(300, 4000)

    def pump():
        while counts["sent"] < calls:
            index = min(range(len(connections)), key=lambda i: in_flight[i])
            if in_flight[index] >= 32:
                return
            if rng.random() < 0.4:
                interface, member, signature = rng.choice(METHODS)
                if rng.random() < 0.2:
                    interface = None
            else:
                interface = rng.choice(INTERFACES)
                member = rng.choice(MEMBERS)
                signature = rng.choice(SIGNATURES)
            maker.start_call()
            args = [maker.value(code) for code in split(signature)]
            try:
                connections[index].call_async(
                    NAME, pick_path(), interface, member, signature, args, on_reply(index), on_error(index), timeout=30)
            except (dbus.exceptions.DBusException, ValueError, TypeError, OverflowError) as error:
                # A message dbus-python itself refuses to build is not sent.
                counts["noReply"] += 1
                counts["sent"] += 1
                continue
            in_flight[index] += 1
            counts["sent"] += 1
        if sum(in_flight) == 0:
            loop.quit()

    GLib.idle_add(lambda: pump() and False)
    loop.run()
    sys.stdout.write(json.dumps(counts) + "\n")
    sys.stdout.flush()


main()
