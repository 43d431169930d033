"""The Bluetooth bench's image: bluez fetched, the guest's init, and the initramfs."""
import os, shutil, subprocess, tempfile

from .. import harness
from ..common import Failure, run
from ..harness import CACHE, GUEST, ROOT, build_guest_program, build_initramfs, guest_init
from ..signals import sequence_bits
from . import calls, cycles, floor, pairing, plugin, restart, system


BLUEZ_PACKAGES = ["bluez", "bluez-test-tools"]
# Bluetooth in the kernel: the core, the virtual controller, RFCOMM (HFP), and the crypto btvirt's
# emulated controllers use through AF_ALG (without it: "Failed to open Virtual HCI device").
BT_MODULES = ["bluetooth", "hci_vhci", "rfcomm", "af_alg", "algif_hash", "algif_skcipher", "cmac", "ecb", "ecdh_generic"]
MODULE_TREES = harness.MODULE_TREES + ["kernel/net/bluetooth", "kernel/drivers/bluetooth/hci_vhci.ko", "kernel/crypto"]
# The phases after the pairing, in the order bluetooth-checks.sh sources their guest scripts from
# GUEST_PHASES (where the image packs them).
PHASES = (cycles, floor, plugin, calls, restart, system)
GUEST_PHASES = "/usr/share/audioroute-bench/bluetooth"


def fetch_bluez():
    """bluez (bluetoothd, bluetoothctl) and bluez-test-tools (btvirt), unpacked once into the cache:
    the host needs neither installed (installing bluez would start a bluetooth service)."""
    root = os.path.join(CACHE, "bluez-root")
    if os.path.exists(os.path.join(root, "usr", "bin", "btvirt")):
        return root
    staging = root + ".partial"
    shutil.rmtree(staging, ignore_errors=True)
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o777)  # apt's sandbox user writes the download
        result = subprocess.run(["apt-get", "download", *BLUEZ_PACKAGES], cwd=d, capture_output=True, text=True, timeout=600)
        debs = [f for f in os.listdir(d) if f.endswith(".deb")]
        if len(debs) != len(BLUEZ_PACKAGES):
            raise Failure(f"apt-get download {' '.join(BLUEZ_PACKAGES)} fetched {debs}: {result.stderr.strip()[-300:]}")
        for deb in debs:
            run(["dpkg-deb", "-x", os.path.join(d, deb), staging], 120, "unpacking " + deb)
    os.rename(staging, root)
    return root


def bluetooth_init(explore=False):
    """This bench's init (bench/guest/): the boot, the system bus and Bluetooth, the session, the
    pairing, then its phases (or --explore's shell)."""
    return guest_init("boot.sh", "bluetooth.sh", "session.sh", pairing.SCRIPT, "explore.sh" if explore else "bluetooth-checks.sh",
                      BT_MODULES=" ".join(BT_MODULES), BT_PHASES=GUEST_PHASES)


def phase_files():
    """The phases' guest scripts, as build_image packs them: (host path, guest path) pairs."""
    return [(os.path.join(GUEST, phase.SCRIPT), f"{GUEST_PHASES}/{phase.SCRIPT}") for phase in PHASES]


def build_image(root, release, work, bluez, explore=False):
    """The initramfs: test-real-kernel's, with this bench's init, Bluetooth's modules, bluez,
    BlueALSA, the guest's Bluetooth programs (agent.c, ear.c, stamp.c) and its phases' scripts."""
    init = bluetooth_init(explore)
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
    ]
    return build_initramfs(root, release, work, sequence_bits(), init=init, module_trees=MODULE_TREES, extras=extras)
