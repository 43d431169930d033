#!/usr/bin/python3
"""A private system bus with python-dbusmock's bluez5 template, driven line by line.

Run with Debian's /usr/bin/python3 (it has dbus-python and dbusmock). It starts
its own dbus-daemon in a temporary directory and the bluez5 mock on it, prints
`ready <bus address>` once org.bluez is owned, then reads one JSON command per
line from stdin and answers each with one line: `ok [result]` or `error <why>`.
The mock's methods emit their signals before they reply, so after `ok` the
signals are on the bus. On `quit`, end of input (the test process died) or
SIGTERM it kills what it started and removes its directory.

Typed values are [signature, value] pairs, so that a test can send exactly the
D-Bus type it means (wrong types included): ["b", true], ["as", ["…"]],
["ay", [255, 254]], ["o", "/org/bluez/hci0"], ["u", 2360344].
"""

import json
import os
import shutil
import signal
import subprocess
import sys
if "--help" in sys.argv[1:] or "-h" in sys.argv[1:]:  # the docstring is the usage (ScriptHelpTests)
    print(__doc__.strip())
    sys.exit(0)
import tempfile
import time

import dbus
import dbus.lowlevel

BUS_CONF = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <policy context="default">
    <allow user="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""

MOCK_IFACE = 'org.freedesktop.DBus.Mock'
BLUEZ_MOCK_IFACE = 'org.bluez.Mock'
OM_IFACE = 'org.freedesktop.DBus.ObjectManager'


def typed(signature, value):
    """A dbus-python value of exactly `signature`."""
    if signature == 'b':
        return dbus.Boolean(value)
    if signature == 's':
        return dbus.String(value)
    if signature == 'o':
        return dbus.ObjectPath(value)
    if signature == 'u':
        return dbus.UInt32(value)
    if signature == 'i':
        return dbus.Int32(value)
    if signature == 'y':
        return dbus.Byte(value)
    if signature == 'a{sv}':
        return props(value)
    if signature == 'a{sa{sv}}':
        return dbus.Dictionary({k: props(v) for k, v in value.items()}, signature='sa{sv}')
    if signature.startswith('a'):
        inner = signature[1:]
        return dbus.Array([typed(inner, v) for v in value], signature=inner)
    raise ValueError('unsupported signature %r' % signature)


def props(spec):
    """{"Name": [sig, value], ...} -> a{sv} (signature given: dbus-python must not guess)."""
    return dbus.Dictionary({k: typed(v[0], v[1]) for k, v in spec.items()}, signature='sv')


class Bench:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix='audioroute-bluez-')
        self.daemon = None
        self.mock = None
        self.bluealsa = None
        self.bus = None
        self.address = None

    def start_daemon(self):
        socket = os.path.join(self.dir, 'system_bus_socket')
        conf = os.path.join(self.dir, 'system-bus.conf')
        with open(conf, 'w') as f:
            f.write(BUS_CONF.format(socket=socket))
        self.daemon = subprocess.Popen(
            ['dbus-daemon', '--config-file=' + conf, '--nofork', '--print-address=1'],
            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
            # It only complains that it cannot raise its fd limit as a normal user.
            stderr=subprocess.DEVNULL)
        # The daemon prints its address once it listens: that is the readiness signal.
        self.address = self.daemon.stdout.readline().decode().strip()
        if not self.address:
            raise RuntimeError('dbus-daemon did not start')
        self.bus = dbus.bus.BusConnection(self.address)

    def start_mock(self):
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.address)
        self.mock = subprocess.Popen(
            ['/usr/bin/python3', '-m', 'dbusmock', '--system', '--template', 'bluez5'],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        # Readiness: the mock owns org.bluez and its template has loaded (/org/bluez exists).
        while True:
            if self.mock.poll() is not None:
                raise RuntimeError('dbusmock exited with %d' % self.mock.returncode)
            if self.bus.name_has_owner('org.bluez'):
                try:
                    self.obj('/org/bluez').Introspect(dbus_interface='org.freedesktop.DBus.Introspectable')
                    break
                except dbus.exceptions.DBusException:
                    pass
            if time.monotonic() > deadline:
                raise RuntimeError('dbusmock did not take org.bluez')
            time.sleep(0.01)

    def start_bluealsa(self):
        template = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'dbusmock-bluealsa.py')
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.address)
        self.bluealsa = subprocess.Popen(
            ['/usr/bin/python3', '-m', 'dbusmock', '--system', '--template', template],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while True:
            if self.bluealsa.poll() is not None:
                raise RuntimeError('bluealsa mock exited with %d' % self.bluealsa.returncode)
            if self.bus.name_has_owner('org.bluealsa'):
                try:
                    self.bus.get_object('org.bluealsa', '/org/bluealsa').Introspect(
                        dbus_interface='org.freedesktop.DBus.Introspectable')
                    break
                except dbus.exceptions.DBusException:
                    pass
            if time.monotonic() > deadline:
                raise RuntimeError('bluealsa mock did not take org.bluealsa')
            time.sleep(0.01)

    def stop_bluealsa(self):
        if self.bluealsa is not None:
            self.bluealsa.kill()
            self.bluealsa.wait()
            self.bluealsa = None
        deadline = time.monotonic() + 10
        while self.bus.name_has_owner('org.bluealsa') and time.monotonic() < deadline:
            time.sleep(0.01)

    def stop_mock(self):
        if self.mock is not None:
            self.mock.kill()
            self.mock.wait()
            self.mock = None
        # Readiness the other way: the bus has dropped the name.
        deadline = time.monotonic() + 10
        while self.bus.name_has_owner('org.bluez') and time.monotonic() < deadline:
            time.sleep(0.01)

    def cleanup(self):
        # A mock whose bus died exits by itself; kill it anyway in case it did not.
        for proc in (self.mock, self.bluealsa, self.daemon):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def obj(self, path):
        return self.bus.get_object('org.bluez', path)

    def emit_added(self, path, iface, properties):
        self.obj('/').EmitSignal(OM_IFACE, 'InterfacesAdded', 'oa{sa{sv}}',
                                 [dbus.ObjectPath(path),
                                  dbus.Dictionary({iface: properties}, signature='sa{sv}')],
                                 dbus_interface=MOCK_IFACE)

    def command(self, c):
        cmd = c['cmd']
        if cmd == 'kill_bus':
            # The system bus itself goes away (dbus-daemon dies); only quit makes sense after this.
            self.daemon.kill()
            self.daemon.wait()
            return ''
        if cmd == 'connections':
            # Unique names on the bus: who is connected (the bench, the mocks, watchers).
            return str(len([n for n in self.bus.list_names() if n.startswith(':')]))
        if cmd == 'start_bluealsa':
            self.start_bluealsa()
            return ''
        if cmd == 'stop_bluealsa':
            self.stop_bluealsa()
            return ''
        if cmd in ('bluealsa_pcm', 'bluealsa_pcm_remove'):
            manager = self.bus.get_object('org.bluealsa', '/org/bluealsa')
            if cmd == 'bluealsa_pcm':
                p = props({'Device': ['o', c['device']], 'Transport': ['s', c['transport']], 'Mode': ['s', c['mode']]})
                manager.AddObject(c['path'], 'org.bluealsa.PCM1', p, dbus.Array([], signature='(ssss)'),
                                  dbus_interface=MOCK_IFACE)
                manager.EmitSignal(OM_IFACE, 'InterfacesAdded', 'oa{sa{sv}}',
                                   [dbus.ObjectPath(c['path']),
                                    dbus.Dictionary({'org.bluealsa.PCM1': p}, signature='sa{sv}')],
                                   dbus_interface=MOCK_IFACE)
            else:
                manager.RemoveObject(c['path'], dbus_interface=MOCK_IFACE)
                manager.EmitSignal(OM_IFACE, 'InterfacesRemoved', 'oas',
                                   [dbus.ObjectPath(c['path']), dbus.Array(['org.bluealsa.PCM1'], signature='s')],
                                   dbus_interface=MOCK_IFACE)
            return ''
        if cmd in ('kill_mock', 'start_mock'):
            self.stop_mock() if cmd == 'kill_mock' else self.start_mock()
            return ''
        mock = dbus.Interface(self.obj('/'), BLUEZ_MOCK_IFACE)
        if cmd == 'adapter':
            return str(mock.AddAdapter(c['name'], c.get('alias', 'audioroute-test')))
        if cmd == 'remove_adapter':
            mock.RemoveAdapter(c['name'])
            return ''
        if cmd == 'device':
            return str(mock.AddDevice(c['adapter'], c['address'], c['alias']))
        if cmd == 'connect':
            mock.ConnectDevice(c['adapter'], c['address'])
            return ''
        if cmd == 'disconnect':
            mock.DisconnectDevice(c['adapter'], c['address'])
            return ''
        if cmd == 'remove_device':
            self.obj('/org/bluez/' + c['adapter']).RemoveDevice(
                dbus.ObjectPath(c['path']), dbus_interface='org.bluez.Adapter1')
            return ''
        if cmd == 'get_property':
            return str(self.obj(c['path']).Get(c['iface'], c['name'], dbus_interface='org.freedesktop.DBus.Properties'))
        if cmd == 'props':
            # UpdateProperties stores the values and emits one PropertiesChanged.
            self.obj(c['path']).UpdateProperties(c['iface'], props(c['props']), dbus_interface=MOCK_IFACE)
            return ''
        if cmd == 'add_object':
            p = props(c['props'])
            self.obj('/').AddObject(c['path'], c['iface'], p, dbus.Array([], signature='(ssss)'),
                                    dbus_interface=MOCK_IFACE)
            # AddObject emits nothing: announce it as BlueZ would.
            self.emit_added(c['path'], c['iface'], p)
            return ''
        if cmd == 'remove_object':
            self.obj('/').RemoveObject(c['path'], dbus_interface=MOCK_IFACE)
            self.obj('/').EmitSignal(OM_IFACE, 'InterfacesRemoved', 'oas',
                                     [dbus.ObjectPath(c['path']), dbus.Array([c['iface']], signature='s')],
                                     dbus_interface=MOCK_IFACE)
            return ''
        if cmd == 'mock_emit':
            # A signal sent by the mock (org.bluez's owner) with arbitrary, possibly wrong, arguments.
            args = [typed(s, v) for s, v in c['args']]
            self.obj(c['path']).EmitSignal(c['iface'], c['member'], ''.join(s for s, _ in c['args']), args,
                                           dbus_interface=MOCK_IFACE)
            return ''
        if cmd == 'foreign_emit':
            # The same, from this process's own connection: not org.bluez's owner.
            msg = dbus.lowlevel.SignalMessage(c['path'], c['iface'], c['member'])
            for s, v in c['args']:
                msg.append(typed(s, v), signature=s)
            self.bus.send_message(msg)
            self.bus.flush()
            return ''
        if cmd == 'toggle':
            # For the benchmark: n Connected toggles, each stamped just before the call.
            stamps = []
            o = self.obj(c['path'])
            for i in range(c['count']):
                value = (i % 2) == 0
                p = props({'Connected': ['b', value]})
                stamps.append(time.clock_gettime_ns(time.CLOCK_MONOTONIC))
                o.UpdateProperties('org.bluez.Device1', p, dbus_interface=MOCK_IFACE)
            return ' '.join(str(s) for s in stamps)
        raise ValueError('unknown command %r' % cmd)


def main():
    bench = Bench()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        bench.start_daemon()
        bench.start_mock()
        print('ready ' + bench.address, flush=True)
        for line in sys.stdin:
            line = line.strip()
            if not line:
                continue
            c = json.loads(line)
            if c.get('cmd') == 'quit':
                break
            try:
                result = bench.command(c)
                print(('ok ' + result).rstrip(), flush=True)
            except Exception as e:  # the test reads the reason
                print('error ' + str(e).replace('\n', ' '), flush=True)
    finally:
        bench.cleanup()


if __name__ == '__main__':
    main()
