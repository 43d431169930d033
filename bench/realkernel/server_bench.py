"""scripts/test-real-server: its options and its phases in order (each in server/)."""
import os, sys

from .common import Failure, phase
from .harness import Guest, build_programs, fetch_kernel, finish_run, start_run
from .server.image import NEEDS, SERVERS, build_image
from .server.phases import CLIENTS, PLAYER, VARIANTS, check_alone, check_follow, check_fight, check_plugin, check_profile, check_tower, print_first_audio, print_restarts
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


# The phases --only can run alone, by the names the guest's server-checks.sh gives them (profile:
# PipeWire's guest only).
PHASES = ("alone", "follow", "plugin", "tower", "fight", "profile")


def run_server(server, kernel, root, release, work, bits, guests, only=None):
    """One server's guest, all its phases in order (or `only` that one); the guest is appended to
    `guests` as it starts (the caller stops it and keeps its logs, whatever happens)."""
    name = {"pipewire": "PipeWire", "pulseaudio": "PulseAudio"}[server]
    os.makedirs(work, exist_ok=True)
    with phase(f"initramfs ({name})", 300):
        image = build_image(root, release, work, bits, server=server)
        print(f"    {os.path.getsize(image) // 1024} KiB")
    guest = Guest(kernel, image, work, 0, bits=bits, append=f" AUDIOROUTE_ONLY={only}" if only else "")
    guests.append(guest)
    with phase(f"boot ({name})", 300):
        guest.wait_for("booted", 300)
        print("    " + guest.wait_for("server", 180))
        print_restarts(guest.lines())
    alone = []
    for variant in VARIANTS if only in (None, "alone") else ():
        with phase(f"{name} alone ({variant})", 240):
            alone.append(check_alone(guest, variant))
    frames = []
    for client in CLIENTS[server] if only in (None, "follow") else ():
        with phase(f"{name} follow: {client}", 240):
            frames.append(check_follow(guest, client))
    if only in (None, "plugin"):
        with phase(f"{name} plugin", 120):
            check_plugin(guest)
    if only in (None, "tower"):
        with phase(f"{name} tower", 180):
            check_tower(guest, PLAYER[server])
    if only in (None, "fight"):
        with phase(f"{name}'s switching against the route", 300):
            check_fight(guest)
    if only in (None, "profile"):
        with phase(f"{name} profile", 180):
            check_profile(guest, PLAYER[server])
    guest.wait_for("end", 60)
    guest.wait_exit(60)
    if only is None:
        with phase(f"{name} timing", 1):
            print_first_audio(guest.lines(), alone, frames, CLIENTS[server])


def main(usage):
    args = sys.argv[1:]
    if "--help" in args or "-h" in args:
        print(usage.strip())
        return 0
    keep = args[args.index("--keep-logs") + 1] if "--keep-logs" in args else None
    servers = SERVERS
    if "--server" in args:
        chosen = args[args.index("--server") + 1] if args.index("--server") + 1 < len(args) else ""
        if chosen not in SERVERS:
            print(f"test-real-server: --server takes {' or '.join(SERVERS)}, not {chosen!r}", file=sys.stderr)
            return 64  # EX_USAGE (docs/client.md, "Exit statuses")
        servers = (chosen,)
    only = args[args.index("--only") + 1] if "--only" in args and args.index("--only") + 1 < len(args) else None
    if "--only" in args and only not in PHASES:
        print(f"test-real-server: --only takes one of {', '.join(PHASES)}, not {only!r}", file=sys.stderr)
        return 64
    if only == "profile" and "--server" not in args:
        servers = ("pipewire",)
    needs = [("qemu-system-x86_64", "qemu-system-x86"), ("/bin/busybox", "busybox-static"), *NEEDS]
    work = start_run("test-real-server", needs)
    if work is None:
        return 1
    ok, guests = False, []
    try:
        with phase("kernel", 900):
            root, release, kernel = fetch_kernel()
        with phase("builds", 1800):
            build_programs()
        bits = sequence_bits()
        if "--explore" in args:
            with phase("initramfs", 300):
                image = build_image(root, release, work, bits, server=servers[0], explore=True)
            return explore(kernel, image, work, bits)
        for server in servers:
            run_server(server, kernel, root, release, os.path.join(work, server), bits, guests, only)
        ok = True
        return 0
    except Failure as failure:
        print(f"test-real-server: {failure}", file=sys.stderr)
        return 1
    finally:
        finish_run("test-real-server", guests[-1] if guests else None, work, keep, ok)
