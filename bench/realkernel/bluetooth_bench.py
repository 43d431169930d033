"""scripts/test-real-bluetooth: its options and its phases in order (each in bluetooth/)."""
import os, sys

from .bluetooth import calls, cycles as bt_cycles, floor, pipewire, plugin, restart, system
from .bluetooth.image import build_image, fetch_bluez, fetch_spa_bluetooth
from .bluetooth.logs import route_changes
from .bluetooth.pairing import check_pairing
from .bluetooth.timing import print_timing
from .common import Failure, phase, run
from .harness import Guest, build_programs, fetch_kernel, finish_run, start_run


def check_run(guest, cycles):
    """The phases, as the guest runs them: follows its reports, and reads the speaker's file at
    the moments that matter. Returns the headset's address."""
    with phase("pair", 240):
        headset, computer = check_pairing(guest)
    for n in range(1, cycles + 1):
        with phase(f"cycle {n}", 180):
            bt_cycles.check_cycle(guest, n, headset, computer)
    with phase("floor", 60 + 60 * cycles):
        # A plain aplay on BlueALSA's PCM per Connect (its first frame: print_timing).
        floor.check_floor(guest, cycles, headset)
    with phase("plugin", 120):
        plugin.check_plugin(guest)
    with phase("call", 120):
        calls.check_call(guest)
    with phase("plugin call", 120):
        calls.check_plugin_call(guest)
    with phase("bluetoothd restarted", 180):
        restart.check_restart(guest, headset, computer)
    with phase("system instance", 240):
        system.check_system(guest)
    guest.wait_for("end", 120)
    guest.wait_exit(60)
    return headset


def check_logs(lines, cycles, headset):
    """What the guest's logs say, once it has powered off: the route changes, the headset's ear,
    SCO (each phase's part of them). Returns the problems."""
    changes = route_changes(lines)
    problems = []
    with phase("route changes", 1):
        problems += bt_cycles.check_arrivals(changes, cycles, headset)
        problems += calls.check_route_changes(changes, headset)
    with phase("the headset's ear", 1):
        problems += bt_cycles.check_heard(lines, cycles)
        problems += plugin.check_heard(lines)
        problems += calls.check_music_back(lines)
        problems += system.check_heard(lines)
        problems += system.check_trace(lines)
        calls.print_call_trace(lines)
        problems += calls.check_sco(lines)
    return problems


def main():
    """The bench, as scripts/test-real-bluetooth runs it."""
    args = sys.argv[1:]
    keep = args[args.index("--keep-logs") + 1] if "--keep-logs" in args else None
    server = args[args.index("--server") + 1] if "--server" in args and args.index("--server") + 1 < len(args) else None
    if "--server" in args and server != "pipewire":
        print(f"test-real-bluetooth: --server takes pipewire, not {server!r}", file=sys.stderr)
        return 2
    # What the run needs from the host beyond test-real-kernel's, each with the package
    # scripts/bootstrap installs: BlueALSA runs in the guest as the host has it.
    alsa_plugins = os.path.join(run(["pkg-config", "--variable=libdir", "alsa"], 30, "pkg-config alsa").strip(), "alsa-lib")
    needs = [*(pipewire.NEEDS if server else []), ("/usr/bin/bluealsa", "bluez-alsa-utils"), ("/usr/bin/bluealsa-aplay", "bluez-alsa-utils"),
             ("/etc/alsa/conf.d/20-bluealsa.conf", "bluez-alsa-utils"), ("/etc/dbus-1/system.d/bluealsa.conf", "bluez-alsa-utils"),
             (os.path.join(alsa_plugins, "libasound_module_pcm_bluealsa.so"), "libasound2-plugin-bluez"),
             ("/usr/bin/dbus-send", "dbus-bin"), ("/usr/bin/dbus-monitor", "dbus-bin"),
             ("/usr/share/dbus-1/system.conf", "dbus-system-bus-common"), ("/usr/include/systemd/sd-bus.h", "libsystemd-dev"),
             ("/usr/bin/qemu-system-x86_64", "qemu-system-x86"), ("/bin/busybox", "busybox-static")]
    work = start_run("test-real-bluetooth", needs)
    if work is None:
        return 1
    ok, guest = False, None
    try:
        with phase("kernel", 900):
            root, release, kernel = fetch_kernel()
        with phase("bluez", 600):
            bluez = fetch_bluez()
        spa = None
        if server:
            with phase("PipeWire's bluez5", 600):
                spa = fetch_spa_bluetooth()
        with phase("builds", 1800):
            build_programs()
        with phase("initramfs", 300):
            image = build_image(root, release, work, bluez, explore="--explore" in args, spa=spa)
            print(f"    {os.path.getsize(image) // 1024} KiB")
        shell_socket = os.path.join(work, "shell.sock")
        cycles = int(args[args.index("--cycles") + 1]) if "--cycles" in args else 5
        # PipeWire's parts make the initramfs about 240 MB: unpacked beside itself it does not fit
        # the harness's 768 MB ("Initramfs unpacking failed: write error"); QEMU takes the last -m.
        guest = Guest(kernel, image, work, cycles, extra_argv=[
            "-chardev", f"socket,id=shell,path={shell_socket},server=on,wait=off", "-serial", "chardev:shell",
            *(["-m", "1536"] if server else [])])
        with phase("boot", 300):
            guest.wait_for("booted", 300)
        if "--explore" in args:
            guest.wait_for("explore-shell", 300)
            print(f"test-real-bluetooth: the guest's shell is on {shell_socket}; its console {guest.console}", flush=True)
            guest.qemu.wait()
            return 0
        if server:
            problems = pipewire.check_run(guest)
        else:
            headset = check_run(guest, cycles)
            lines = guest.lines()
            problems = check_logs(lines, cycles, headset)
            print_timing(lines, headset, cycles)
        if problems:
            raise Failure(f"{len(problems)} checks failed: " + "; ".join(problems))
        ok = True
        return 0
    except Failure as failure:
        print(f"test-real-bluetooth: {failure}", file=sys.stderr)
        return 1
    finally:
        finish_run("test-real-bluetooth", guest, work, keep, ok)
