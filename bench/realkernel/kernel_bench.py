"""scripts/test-real-kernel: its options, its phases in order, --shell and --explore."""
import os, shutil, sys

from .boot import check_boot
from .capture import check_capture
from .common import Failure, phase
from .cycles import PlayerTrace, PlayerTraceEnd, run_cycles, run_plugin_cycles, trace
from .harness import (APLAY, CAPTURE_MODULES, MODULE_TREES, Guest, build_initramfs, build_programs, fetch_kernel, finish_run,
                      kernel_init, plug_usb, start_run)
from .hardware import check_hardware
from .jack import check_jack
from .multiroute import check_multiroute
from .routes import check_route_changes
from .signals import sequence_bits
from .surround import check_surround
from .sync import check_sync
from .timing import cycle_timings, print_gaps, print_split, print_timings
from .tower import check_call, check_duck, check_silent, check_tower_lost
from .ucm import check_ucm_controls, print_memory, report_stock_ucm, run_ucm, run_ucm_usb_cycles


def shell(kernel, image, work, keep, bits):
    """--shell: the same guest, by hand. The cards' WAV files are kept when it powers off."""
    kept = keep or work + "-shell"
    print(f"""test-real-kernel --shell: the guest's console follows (boot takes about 20 s).
  hot-add the USB card:  Ctrl-a c, then  device_add usb-audio,id=usbcard,bus=xhci.0,port=1,audiodev=usb
  remove it:             device_del usbcard          (Ctrl-a c again returns to the console)
  the cards' WAV files are kept in {kept} when the guest powers off (exit, or Ctrl-a x)""", flush=True)
    guest = Guest(kernel, image, work, 0, shell=True, mic=True, bits=bits)
    try:
        guest.qemu.wait()
    finally:
        guest.kill()
    os.makedirs(kept, exist_ok=True)
    for name, path in guest.wavs.items():
        if os.path.exists(path):
            shutil.copy(path, kept)
    print(f"test-real-kernel: the cards' WAV files are in {kept}")
    return 0


def explore_guest(kernel, image, work, bits):
    """--explore: the guest booted with the daemon running, and a shell on a socket for scripts
    (GuestShell, or socat); the cards' WAV files grow on the host as it plays. QEMU runs until
    the guest powers off (`poweroff -f`) or the script ends (Ctrl-C)."""
    shell_socket = os.path.join(work, "shell.sock")
    guest = Guest(kernel, image, work, 0, mic=True, bits=bits, extra_argv=[
        "-chardev", f"socket,id=shell,path={shell_socket},server=on,wait=off", "-serial", "chardev:shell"])
    try:
        guest.wait_for("explore-shell", 300)
        print(f"test-real-kernel: the guest's shell is on {shell_socket} (e.g. socat - UNIX-CONNECT:{shell_socket});\n"
              f"  its console {guest.console}; the HDA card's WAV file {guest.wavs['hda']}", flush=True)
        try:
            guest.qemu.wait()
        except (KeyboardInterrupt, Failure):  # Ctrl-C, SIGTERM: how an exploration ends
            pass
    finally:
        guest.kill()
    return 0


def collect(problems, name, check, guest):
    """One of the tower's phases, checked on its own: its failure goes to `problems`, so that one
    failing does not hide the others; the guest's own failure ends the run."""
    try:
        with phase(name, 120):
            check(guest)
    except Failure as failure:
        if str(failure).startswith(("the guest: ", "the guest did not say", "QEMU exited")):
            raise
        problems.append(str(failure))
        print("    " + problems[-1])


def main(usage):
    """The bench, as scripts/test-real-kernel runs it; `usage` is what --help prints."""
    args = sys.argv[1:]
    # Before anything else: an unknown flag is ignored, so without this --help ran the whole bench.
    if "--help" in args or "-h" in args:
        print(usage.strip())
        return 0
    keep = args[args.index("--keep-logs") + 1] if "--keep-logs" in args else None
    cycles = int(args[args.index("--cycles") + 1]) if "--cycles" in args else 5
    plugin = "--no-plugin" not in args
    tower = plugin and "--no-plugin-tower" not in args
    # What the run needs from the host, each with the Debian package scripts/bootstrap installs.
    needs = [("qemu-system-x86_64", "qemu-system-x86"), ("/bin/busybox", "busybox-static"), ("depmod", "kmod"),
             ("dpkg-deb", "dpkg"), ("apt-get", "apt"), ("/lib/systemd/systemd-udevd", "udev"),
             ("dbus-daemon", "dbus-daemon"), ("alsactl", "alsa-utils"), (APLAY, "alsa-utils"),
             ("/usr/bin/amixer", "alsa-utils"), ("/usr/bin/alsaucm", "alsa-utils"), ("pkg-config", "pkg-config")]
    work = start_run("test-real-kernel", needs)
    if work is None:
        return 1
    ok = False
    guest = None
    try:
        with phase("kernel", 900):
            root, release, kernel = fetch_kernel()
            print(f"    Debian kernel {release}")
        with phase("builds", 1800):
            build_programs()
        with phase("initramfs", 300):
            bits = sequence_bits()
            explore = "--explore" in args
            image = build_initramfs(root, release, work, bits, init=kernel_init(explore=True) if explore else None,
                                    module_trees=MODULE_TREES + CAPTURE_MODULES)
            print(f"    {os.path.getsize(image) // 1024} KiB")
        if "--shell" in args:
            return shell(kernel, image, work, keep, bits)
        if explore:
            return explore_guest(kernel, image, work, bits)
        jack = "--no-jack" not in args
        ucm = "--no-ucm" not in args
        surround = "--no-surround" not in args
        capture = "--no-capture" not in args
        sync = "--no-sync" not in args
        # The multiRoute phase's stream: its 30 s music repeated; 10 minutes for the drift's figure.
        multiroute = 0 if "--no-multiroute" in args else (
            2 * int(args[args.index("--multiroute-minutes") + 1]) if "--multiroute-minutes" in args else 1)
        # The mic's codec is there with or without the capture phase: every phase sees one card.
        guest = Guest(kernel, image, work, cycles, debug="--debug" in args, jack=jack, plugin=plugin, tower=tower, ucm=ucm,
                      surround=surround, mic=True, capture=capture, bits=bits, sync=sync, multiroute=multiroute)
        with phase("boot", 300):
            guest.wait_for("booted", 300)
            mic = check_boot(guest.lines())
        adds, player_moves, speaker, usb = run_cycles(guest, cycles, bits)
        plugin_adds, problems = [], []
        if plugin:
            plugin_adds, moves, problems, traces = run_plugin_cycles(guest, cycles, bits, tower)
        headphones = None
        if jack:
            with phase("headphone jack", 300):
                headphones = check_jack(guest, speaker)
        if sync:
            with phase("sync", 120):
                check_sync(guest)
        with phase("hardware", 120):
            check_hardware(guest, plug_usb)
        surround_uid = None
        if surround:
            with phase("surround", 420):
                surround_uid = check_surround(guest)
        if capture:
            with phase("capture", 300):
                check_capture(guest, bits, mic, speaker)
        if multiroute:
            with phase("multiRoute", 420 + multiroute * 60):
                check_multiroute(guest, bits, multiroute, speaker, headphones)
        if tower:
            for name, check in (("duck", check_duck), ("silent mode", check_silent), ("call", check_call)):
                collect(problems, name, check, guest)
        ucm_adds = []
        if ucm:
            ucm_adds, ucm_memory = run_ucm_usb_cycles(guest, cycles, run_ucm(guest))
        if tower:
            collect(problems, "tower lost", check_tower_lost, guest)
        guest.wait_for("end", 60)
        guest.wait_exit(60)
        with phase("route changes", 1):
            # The plugin's last cycle plugs the USB card back once under the held aplay.
            check_route_changes(guest.lines(), cycles * (2 if plugin else 1) + (1 if plugin else 0), speaker, usb, headphones,
                                surround_uid, capture, hardware=True, multiroute=bool(multiroute))
        with phase("stock UCM", 1):
            report_stock_ucm(guest.lines())
        with phase("timing", 1):
            rows = cycle_timings(guest.lines(), adds + plugin_adds)
            print("    audioroute play (AudioPlayer):")
            print_timings(rows[:cycles])
            if plugin:
                print("    aplay -D audioroute (the ALSA plugin):")
                print_timings(rows[cycles:])
            # Before the UCM cycles, card1 was also added by the plugin's re-plug of the USB card,
            # by the hardware phase, by the surround phase's multichannel card, by the capture phase, and
            # twice by the multiRoute phase (its drift's stream, and the replug of its unplug step).
            ucm_rows = cycle_timings(guest.lines(), ucm_adds, monitor="monitor-ucm",
                                     first=len(adds + plugin_adds) + (1 if plugin_adds else 0) + 1 + (1 if surround_uid else 0)
                                     + (1 if capture else 0) + (2 if multiroute else 0))
            if ucm:
                print("    audioroute play, the USB card a UCM card (the UCM phase's daemon, --ucm-root):")
                print_timings(ucm_rows)
            print_gaps([("audioroute play", rows[:cycles])] + ([("aplay -D audioroute", rows[cycles:])] if plugin else [])
                       + ([("play, USB card UCM", ucm_rows)] if ucm else []))
            print(f"    frames lost (+) or played twice (-) at the player's moves: {player_moves}")
            player_traces = [trace(guest, PlayerTrace, PlayerTraceEnd, n) for n in range(1, cycles + 1)]
            print_split(player_traces, rows[:cycles], who="the player")
            if plugin:
                print(f"    frames lost (+) or played twice (-) at the plugin's moves: {moves}")
                print_split(traces, rows[cycles:])
            spread, step = guest.files.precision()
            print(f"    (iii) is read on the host: the guest's clock through its console (ticks spread {spread * 1000:.0f} ms "
                  f"past their smallest offset) and the WAV files, which typically grew {step:.0f} bytes at a time "
                  f"({step / 192:.0f} ms at 48 kHz stereo; read every 5 ms)")
        if ucm:
            with phase("UCM controls", 1):
                check_ucm_controls(guest.lines())
            with phase("UCM memory", 1):
                print_memory(ucm_memory, guest.lines())
        if problems:
            raise Failure(f"{len(problems)} of the tower's checks on the plugin's streams failed: " + "; ".join(problems))
        ok = True
        return 0
    except Failure as failure:
        print(f"test-real-kernel: {failure}", file=sys.stderr)
        return 1
    finally:
        finish_run("test-real-kernel", guest, work, keep, ok)
