"""scripts/test-real-server: its options and its phases in order (each in server/)."""
import os, sys

from .common import Failure, phase
from .harness import Guest, build_programs, fetch_kernel, finish_run, start_run
from .server.image import NEEDS, build_image
from .server.phases import CLIENTS, VARIANTS, check_alone, check_follow, check_fight, check_plugin, check_profile, check_tower, print_first_audio, print_restarts
from .signals import sequence_bits


def explore(kernel, image, work, bits):
    """--explore: the guest booted with the session bus, a shell on a socket (GuestShell, or socat)."""
    shell_socket = os.path.join(work, "shell.sock")
    guest = Guest(kernel, image, work, 0, bits=bits, extra_argv=[
        "-chardev", f"socket,id=shell,path={shell_socket},server=on,wait=off", "-serial", "chardev:shell"])
    try:
        guest.wait_for("explore-shell", 300)
        print(f"test-real-server: the guest's shell is on {shell_socket}; console {guest.console}; "
              f"HDA {guest.wavs['hda']}; USB {guest.wavs['usb']}; QMP {guest.qmp_path}", flush=True)
        try:
            guest.qemu.wait()
        except (KeyboardInterrupt, Failure):
            pass
    finally:
        guest.kill()
    return 0


# The phases --only can run alone, by the name the guest's server-checks.sh gives them.
PHASES = ("alone", "follow", "plugin", "tower", "fight", "profile")


def main(usage):
    args = sys.argv[1:]
    if "--help" in args or "-h" in args:
        print(usage.strip())
        return 0
    keep = args[args.index("--keep-logs") + 1] if "--keep-logs" in args else None
    needs = [("qemu-system-x86_64", "qemu-system-x86"), ("/bin/busybox", "busybox-static"), *NEEDS]
    work = start_run("test-real-server", needs)
    if work is None:
        return 1
    ok, guest = False, None
    try:
        with phase("kernel", 900):
            root, release, kernel = fetch_kernel()
        with phase("builds", 1800):
            build_programs()
        with phase("initramfs", 300):
            bits = sequence_bits()
            image = build_image(root, release, work, bits, explore="--explore" in args)
            print(f"    {os.path.getsize(image) // 1024} KiB")
        if "--explore" in args:
            return explore(kernel, image, work, bits)
        only = args[args.index("--only") + 1] if "--only" in args else None
        if only is not None and only not in PHASES:
            raise Failure(f"--only takes one of {', '.join(PHASES)}, not {only!r}")
        guest = Guest(kernel, image, work, 0, bits=bits, append=f" AUDIOROUTE_ONLY={only}" if only else "")
        with phase("boot", 300):
            guest.wait_for("booted", 300)
            print("    " + guest.wait_for("server", 180))
            print_restarts(guest.lines())
        alone = []
        for variant in VARIANTS if only in (None, "alone") else ():
            with phase(f"the server alone ({variant})", 240):
                alone.append(check_alone(guest, variant))
        frames = []
        for client in CLIENTS if only in (None, "follow") else ():
            with phase(f"follow: {client}", 240):
                frames.append(check_follow(guest, client))
        if only in (None, "plugin"):
            with phase("plugin", 120):
                check_plugin(guest)
        if only in (None, "tower"):
            with phase("tower", 180):
                check_tower(guest)
        if only in (None, "fight"):
            with phase("the server's switching against the route", 300):
                check_fight(guest)
        if only in (None, "profile"):
            with phase("profile", 180):
                check_profile(guest)
        guest.wait_for("end", 60)
        guest.wait_exit(60)
        if only is None:
            with phase("timing", 1):
                print_first_audio(guest.lines(), alone, frames)
        ok = True
        return 0
    except Failure as failure:
        print(f"test-real-server: {failure}", file=sys.stderr)
        return 1
    finally:
        finish_run("test-real-server", guest, work, keep, ok)
