"""The Bluetooth bench's image: bluez fetched, the guest's init, and the initramfs."""
import os, shutil, subprocess, tempfile

from .. import harness
from ..common import Failure, run
from ..harness import CACHE, GUEST, ROOT, build_guest_program, build_initramfs, guest_init
from ..signals import sequence_bits
from ..server import image as server_image
from . import calls, cycles, floor, pairing, pipewire, plugin, restart, system


BLUEZ_PACKAGES = ["bluez", "bluez-test-tools"]
# Bluetooth in the kernel: the core, the virtual controller, RFCOMM (HFP), and the crypto btvirt's
# emulated controllers use through AF_ALG (without it: "Failed to open Virtual HCI device").
BT_MODULES = ["bluetooth", "hci_vhci", "rfcomm", "af_alg", "algif_hash", "algif_skcipher", "cmac", "ecb", "ecdh_generic"]
MODULE_TREES = harness.MODULE_TREES + ["kernel/net/bluetooth", "kernel/drivers/bluetooth/hci_vhci.ko", "kernel/crypto"]
# The phases after the pairing, in the order bluetooth-checks.sh sources their guest scripts from
# GUEST_PHASES (where the image packs them).
PHASES = (cycles, floor, plugin, calls, restart, system)
GUEST_PHASES = "/usr/share/audioroute-bench/bluetooth"


# --server pipewire: SPA's bluez5 plugin and the codec libraries it needs that the host has not
# (Debian's packages, fetched and unpacked like bluez: never installed on the host).
SPA_BLUETOOTH_PACKAGES = ["libspa-0.2-bluetooth", "libfreeaptx0", "liblc3-0"]


def fetch_debs(name, packages, marker):
    """Debian packages fetched with apt-get download and unpacked once into the cache (CACHE/name);
    `marker` is a file of theirs that says the unpacking is done."""
    root = os.path.join(CACHE, name)
    if os.path.exists(os.path.join(root, marker)):
        return root
    staging = root + ".partial"
    shutil.rmtree(staging, ignore_errors=True)
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o777)  # apt's sandbox user writes the download
        result = subprocess.run(["apt-get", "download", *packages], cwd=d, capture_output=True, text=True, timeout=600)
        debs = [f for f in os.listdir(d) if f.endswith(".deb")]
        if len(debs) != len(packages):
            raise Failure(f"apt-get download {' '.join(packages)} fetched {debs}: {result.stderr.strip()[-300:]}")
        for deb in debs:
            run(["dpkg-deb", "-x", os.path.join(d, deb), staging], 120, "unpacking " + deb)
    os.rename(staging, root)
    return root


def fetch_bluez():
    """bluez (bluetoothd, bluetoothctl) and bluez-test-tools (btvirt), unpacked once into the cache:
    the host needs neither installed (installing bluez would start a bluetooth service)."""
    return fetch_debs("bluez-root", BLUEZ_PACKAGES, "usr/bin/btvirt")


def fetch_spa_bluetooth():
    """SPA's bluez5 plugin (PipeWire's Bluetooth) and its codecs' libraries, unpacked into the cache."""
    return fetch_debs("spa-bluetooth-root", SPA_BLUETOOTH_PACKAGES, "usr/lib/x86_64-linux-gnu/spa-0.2/bluez5/libspa-bluez5.so")


def bluetooth_init(explore=False, server=None):
    """This bench's init (bench/guest/): the boot, the system bus and Bluetooth, the session, the
    pairing, then its phases (or --explore's shell). With server "pipewire": PipeWire, WirePlumber
    and pipewire-pulse as the session (server.sh), no BlueALSA on the computer's side, and the
    PipeWire phase."""
    if server == "pipewire":
        return guest_init("boot.sh", "bluetooth.sh", "server.sh", pipewire.SESSION, pairing.SCRIPT,
                          "explore.sh" if explore else pipewire.SCRIPT,
                          BT_MODULES=" ".join(BT_MODULES), BT_PHASES=GUEST_PHASES, BT_COMPUTER="pipewire", SERVER="pipewire")
    return guest_init("boot.sh", "bluetooth.sh", "session.sh", pairing.SCRIPT, "explore.sh" if explore else "bluetooth-checks.sh",
                      BT_MODULES=" ".join(BT_MODULES), BT_PHASES=GUEST_PHASES, BT_COMPUTER="bluealsa")


def phase_files():
    """The phases' guest scripts, as build_image packs them: (host path, guest path) pairs."""
    return [(os.path.join(GUEST, phase.SCRIPT), f"{GUEST_PHASES}/{phase.SCRIPT}") for phase in PHASES]


def pipewire_extras(spa, work, bluez):
    """--server pipewire: the sound-server bench's PipeWire parts (server/image.py), SPA's bluez5
    plugin with its codecs and the libraries the host lacks, its hardware database, the D-Bus
    policy that keeps PipeWire's endpoints off the headset's controller (bluez_policy_for_pipewire)."""
    lib = os.path.join("usr", "lib", "x86_64-linux-gnu")
    extras = [(p, p) for p in server_image.PROGRAMS + server_image.loadable_modules() + server_image.DATA]
    extras.append((server_image.PIPEWIRE_HELPER, "/usr/bin/audioroute-pipewire"))
    extras += [(os.path.join(spa, lib, "spa-0.2", "bluez5", name), "/" + os.path.join(lib, "spa-0.2", "bluez5", name))
               for name in sorted(os.listdir(os.path.join(spa, lib, "spa-0.2", "bluez5")))]
    extras += [(os.path.join(spa, lib, name), "/" + os.path.join(lib, name))
               for name in sorted(os.listdir(os.path.join(spa, lib))) if name.startswith("lib") and ".so" in name]
    extras.append((os.path.join(spa, "usr/share/spa-0.2/bluez5"), "/usr/share/spa-0.2/bluez5"))
    extras.append((os.path.join(GUEST, pipewire.POLICY), "/etc/dbus-1/system.d/" + pipewire.POLICY))
    extras.append((bluez_policy_for_pipewire(work, bluez), "/etc/dbus-1/system.d/bluetooth.conf"))
    return extras


# PipeWire 0.3.65's bluez5 registers its A2DP endpoints, sinks among them (it has no setting for
# A2DP's roles: bluez5.headset-roles is HSP's and HFP's), on every adapter. One bluetoothd serves both controllers here: with PipeWire's sinks on hci1
# the computer streamed to PipeWire's own aptX HD sink there, not to the headset's BlueALSA, and
# that stream (bluez_input.<computer>) became a session in the tower. So root may not call
# hci1's Media1 (method calls only: a deny rule also matches replies, which carry no interface).
HCI1_MEDIA_DENY = ('<deny send_destination="org.bluez" send_type="method_call" send_interface="org.bluez.Media1" '
                   'send_path="/org/bluez/hci1"/>\n')


def bluez_policy_for_pipewire(work, bluez):
    """bluez's bluetooth.conf with HCI1_MEDIA_DENY last in root's policy."""
    text = open(os.path.join(bluez, "etc/dbus-1/system.d/bluetooth.conf")).read()
    start = text.index('<policy user="root">')
    end = text.index("</policy>", start)
    path = os.path.join(work, "bluetooth.conf")
    with open(path, "w") as f:
        f.write(text[:end] + "  " + HCI1_MEDIA_DENY + "  " + text[end:])
    return path


def build_image(root, release, work, bluez, explore=False, spa=None):
    """The initramfs: test-real-kernel's, with this bench's init, Bluetooth's modules, bluez,
    BlueALSA, the guest's Bluetooth programs (agent.c, ear.c, stamp.c) and its phases' scripts;
    with `spa` (SPA's bluez5, unpacked: --server pipewire) PipeWire's parts and its phase instead."""
    init = bluetooth_init(explore, "pipewire" if spa else None)
    ear = build_guest_program(work, "guest-ear", os.path.join(GUEST, "ear.c"))
    agent = build_guest_program(work, "guest-agent", os.path.join(GUEST, "agent.c"), ["-lsystemd"])
    stamp = build_guest_program(work, "guest-stamp", os.path.join(GUEST, "stamp.c"))
    policy = os.path.join(GUEST, "bluealsa-sink.conf")
    asoundrc = os.path.join(GUEST, "ear.asoundrc")
    alsa_plugins = os.path.join(run(["pkg-config", "--variable=libdir", "alsa"], 30, "pkg-config alsa").strip(), "alsa-lib")
    extras = [
        (os.path.join(bluez, "usr/libexec/bluetooth/bluetoothd"), "/usr/libexec/bluetooth/bluetoothd"),
        (os.path.join(bluez, "usr/bin/bluetoothctl"), "/usr/bin/bluetoothctl"),
        (os.path.join(bluez, "usr/bin/btvirt"), "/usr/bin/btvirt"),
        (os.path.join(bluez, "usr/bin/btmon"), "/usr/bin/btmon"),
        (os.path.join(bluez, "etc/bluetooth"), "/etc/bluetooth"),
        (os.path.join(bluez, "etc/dbus-1/system.d/bluetooth.conf"), "/etc/dbus-1/system.d/bluetooth.conf"),
        ("/usr/bin/bluealsa", "/usr/bin/bluealsa"),
        ("/usr/bin/bluealsa-aplay", "/usr/bin/bluealsa-aplay"),
        ("/usr/bin/dbus-send", "/usr/bin/dbus-send"),
        ("/usr/bin/dbus-monitor", "/usr/bin/dbus-monitor"),
        (os.path.join(alsa_plugins, "libasound_module_pcm_bluealsa.so"), os.path.join(alsa_plugins, "libasound_module_pcm_bluealsa.so")),
        (os.path.join(alsa_plugins, "libasound_module_ctl_bluealsa.so"), os.path.join(alsa_plugins, "libasound_module_ctl_bluealsa.so")),
        ("/etc/alsa/conf.d/20-bluealsa.conf", "/etc/alsa/conf.d/20-bluealsa.conf"),
        ("/etc/dbus-1/system.d/bluealsa.conf", "/etc/dbus-1/system.d/bluealsa.conf"),
        (asoundrc, "/root/.asoundrc"),
        (ear, "/usr/bin/guest-ear"),
        (agent, "/usr/bin/guest-agent"),
        (stamp, "/usr/bin/guest-stamp"),
        # The system instance's bus policy, as scripts/install-daemon installs it: the guest puts it
        # in /usr/share/dbus-1/system.d once the user it names exists, then reloads the bus.
        (os.path.join(ROOT, "dbus", "org.audioroute.AudioRoute1.conf"), "/usr/share/audioroute-bench/dbus/org.audioroute.AudioRoute1.conf"),
        (policy, "/etc/dbus-1/system.d/bluealsa-sink.conf"),
        *phase_files(),
        *(pipewire_extras(spa, work, bluez) if spa else []),
    ]
    return build_initramfs(root, release, work, sequence_bits(), init=init, module_trees=MODULE_TREES, extras=extras)
