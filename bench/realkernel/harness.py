"""The bench's machine: Debian's kernel, the builds, the guest's parts (bench/guest/), the initramfs,
QEMU with its cards, QMP (hot-plug), the guest's shell on a socket."""
import array, ctypes, json, os, shutil, signal, socket, subprocess, sys, tempfile, time

from .common import Failure, run
from .files import Files
from .signals import AMBIENT_HZ, CALL_HZ, MUSIC_HZ, PROMPT_HZ, SIGNAL_LEVEL, SURROUND_HZ, SURROUND_SECONDS, SURROUND_STEREO_HZ, SYNC_HZ, SYNC_LEVEL, SYNC_SECONDS, write_channels, write_mono_tone, write_multiroute_music, write_signal, write_tone


# bench/realkernel/harness.py: the repository is three folders up.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "scripts")
CACHE = os.path.join(ROOT, ".cache", "real-kernel")
# The modules the guest needs, with everything they depend on (modules.dep): sound (ALSA,
# HDA, USB audio), USB host controllers and core, input (evdev: jack switches), HID.
MODULE_TREES = ["kernel/sound", "kernel/drivers/usb", "kernel/drivers/input", "kernel/drivers/hid"]
# Host programs copied with their library closure.
PROGRAMS = ["/lib/systemd/systemd-udevd", "/usr/bin/udevadm", "/usr/bin/kmod", "/usr/bin/dbus-daemon", "/usr/sbin/alsactl",
            # The UCM phase's and --explore's view of the card's controls and UCM configuration.
            "/usr/bin/amixer", "/usr/bin/alsaucm"]
# The project's programs, as they ship (static Swift runtime), and where they go in the guest.
DAEMON = os.path.join(ROOT, ".build-daemon", "release", "audiorouted")
CLI = os.path.join(ROOT, ".build-rel", "release", "audioroute")
# The UCM helper the daemon starts for a UCM card (docs/ucm.md), as build-daemon ships it beside the daemon.
UCM_HELPER = os.path.join(ROOT, ".build-daemon", "release", "audioroute-ucm")
# The ALSA plugin as scripts/build-alsa-plugin builds it, and a plain ALSA client to open it.
PLUGIN = os.path.join(ROOT, ".build", "alsa-plugin", "libasound_module_pcm_audioroute.so")
APLAY = "/usr/bin/aplay"
# The UCM configuration written for the HDA card (its phase), and where the guest has it.
UCM_BENCH = os.path.join(ROOT, "Tests", "Fixtures", "ucm2-bench")
GUEST_UCM_ROOT = "/usr/share/audioroute-bench/ucm2"
# The built-in card's codec: QEMU's hda-micro has a speaker pin and a microphone pin (no headphone pin).
HDA_CODEC = os.environ.get("AUDIOROUTE_HDA_CODEC", "hda-micro")
# The guest's parts are files in bench/guest/: the shell fragments of its init (boot.sh and
# session.sh shared with scripts/test-real-bluetooth, then a bench's phases) and small C programs.
GUEST = os.path.join(ROOT, "bench", "guest")
# Where the guest has this bench's phase scripts (bench/guest/kernel/, sourced by kernel-checks.sh).
GUEST_PHASES = "/usr/share/audioroute-bench/kernel"


def guest_text(name):
    """A file of bench/guest/."""
    with open(os.path.join(GUEST, name)) as f:
        return f.read()


def guest_init(*parts, **values):
    """The guest's init: bench/guest/'s shell fragments in order, each @NAME@ in them replaced by values[NAME]."""
    text = "\n".join(guest_text(part) for part in parts)
    for name, value in values.items():
        text = text.replace(f"@{name}@", value)
    return text


def kernel_init(explore=False):
    """This bench's init: the boot, the session, then its phases (or --explore's shell)."""
    if explore:
        return guest_init("boot.sh", "session.sh", "explore.sh")
    return guest_init("boot.sh", "session.sh", "kernel-checks.sh", PHASES=GUEST_PHASES, UCM_ROOT=GUEST_UCM_ROOT,
                      CAPTURE_SLOT=str(CAPTURE_SLOT))


def kernel_phase_files():
    """The phases' guest scripts (bench/guest/kernel/), which kernel-checks.sh sources: (host path,
    guest path) pairs for the initramfs."""
    folder = os.path.join(GUEST, "kernel")
    return [(os.path.join(folder, name), f"{GUEST_PHASES}/{name}") for name in sorted(os.listdir(folder)) if name.endswith(".sh")]


def fetch_kernel():
    """Debian's kernel package for linux-image-amd64, unpacked once into the cache."""
    os.makedirs(CACHE, exist_ok=True)
    def kernel_packages():
        result = subprocess.run(["apt-cache", "depends", "linux-image-amd64"], capture_output=True, text=True, timeout=60)
        return [line.split()[-1] for line in result.stdout.splitlines() if "Depends: linux-image-" in line]
    names = kernel_packages()
    if not names:
        # A fresh machine (or a CI image) may have no package lists yet.
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        subprocess.run(sudo + ["apt-get", "update", "-qq"], capture_output=True, timeout=600)
        names = kernel_packages()
    if not names:
        raise Failure("apt knows no kernel package behind linux-image-amd64, even after apt-get update (apt sources?)")
    package = names[0]
    release = package[len("linux-image-"):]
    root = os.path.join(CACHE, "root-" + release)
    kernel = os.path.join(root, "boot", "vmlinuz-" + release)
    if os.path.exists(kernel):
        return root, release, kernel
    debs = [f for f in os.listdir(CACHE) if f.startswith(package + "_") and f.endswith(".deb")]
    if not debs:
        # apt's sandbox user cannot write the project's folder; download in a temporary one.
        with tempfile.TemporaryDirectory() as d:
            os.chmod(d, 0o777)
            subprocess.run(["apt-get", "download", package], cwd=d, capture_output=True, timeout=600)
            got = [f for f in os.listdir(d) if f.endswith(".deb")]
            if not got:
                raise Failure(f"apt-get download {package} fetched nothing (network or apt sources?)")
            shutil.move(os.path.join(d, got[0]), os.path.join(CACHE, got[0]))
            debs = [got[0]]
    staging = root + ".partial"
    shutil.rmtree(staging, ignore_errors=True)
    run(["dpkg-deb", "-x", os.path.join(CACHE, debs[0]), staging], 300, "unpacking the kernel package")
    os.rename(staging, root)
    return root, release, kernel


def build_programs():
    """The ALSA plugin, the shipped daemon and a release CLI with the Swift runtime linked in:
    the guest has no Swift libraries. Incremental when nothing changed."""
    run([os.path.join(SCRIPTS, "build-alsa-plugin"), os.path.dirname(PLUGIN)], 300, "scripts/build-alsa-plugin")
    run([os.path.join(SCRIPTS, "build-daemon")], 1800, "scripts/build-daemon")
    run(["swift", "build", "-c", "release", "--static-swift-stdlib", "--scratch-path", os.path.join(ROOT, ".build-rel"),
         "--product", "audioroute"], 1800, "the release audioroute build")


def library_closure(programs):
    """Every shared library the programs load (ldd), with the dynamic loader."""
    libraries = set()
    for program in programs:
        for line in run(["ldd", program], 30, "ldd").splitlines():
            parts = line.split()
            for part in parts:
                if part.startswith("/"):
                    libraries.add(part)
    return sorted(libraries)


def build_guest_program(work, name, source, libraries=()):
    """A small C program for the guest from its source file, built with the toolchain's clang (or cc)."""
    compiler = shutil.which("clang") or shutil.which("cc")
    if compiler is None:
        raise Failure(f"no C compiler (clang comes with Swift) to build the guest's {name}")
    binary = os.path.join(work, name)
    run([compiler, "-O2", "-o", binary, source, *libraries], 120, f"building the guest's {name}")
    return binary


# The microphone. QEMU gives one audiodev per codec, and the wav audiodev has no input (its
# voice `adc' fails), so the speaker's codec (on hda.wav) cannot record. A second hda-micro on
# the same controller has an alsa audiodev: it records alsa-lib's file PCM, whose infile is the
# mic's signal (raw: the plugin reads only raw input) over the null PCM, and whose file is what
# QEMU read of it; its output goes to the null PCM. The pace: null is always ready, and with
# QEMU's mixing engine on, QEMU read the backend as fast as it gave (hundreds of MB in seconds,
# the guest starved). With the mixing engine off (and so no fixed settings: qapi/audio.json),
# audio_run_in only calls the codec's callback, which reads no more than its ring has room for
# (hw/audio/hda-codec.c, hda_audio_input_cb), and the ring empties at the guest's DMA pace: the
# file is read at the guest's pace. Without the mixing engine QEMU applies no volume to what it
# records, so the frames are the file's whatever the codec's Capture controls say.
# QEMU opens the mic's PCM anew whenever the guest sets the codec's stream format (a new voice:
# at each stream set-up, also when the kernel resumes the codec), and each open reads the infile
# from its start. Without `truncate`, the file PCM writes each open's reads to a new file (the
# first, then FILE.0001, ...: pcm_file.c), so the one the capture phase read is kept.
# The two codecs are one card with the pins it had with one codec: snd_hda_intel's patch
# (hda_sysfs.c, as hdajackretask writes it) marks the mic codec's speaker pin (node 3) and the
# speaker codec's mic pin (node 5) unconnected (0x411111f0). The mic codec is cad 0: the kernel's
# generic parser gives a codec without an output no playback PCM, but one without an input still
# a capture PCM (its ADC), and the watcher's mic is the first capture PCM. So the mic is PCM 0's
# capture (cad 0) and the speaker PCM 2's playback (cad 1: HDA numbers a second codec's analog
# PCM 2); PCM 2's capture is the speaker codec's ADC, with no pin.
MIC_FIRMWARE = "audioroute-bench-mic.fw"
MIC_PATCH = """[codec]
0x1af40032 0x1af40032 0
[pincfg]
0x03 0x411111f0
[codec]
0x1af40032 0x1af40032 1
[pincfg]
0x05 0x411111f0
"""
MIC_PCM = "audioroute_bench_mic"
# The guest's recordings come back on a virtio disk (the console is too slow for 2 MB):
# each in its own slot, its length in the guest's report.
CAPTURE_SLOT = 32 << 20
CAPTURE_MODULES = ["kernel/drivers/virtio", "kernel/drivers/block/virtio_blk.ko"]


def mic_argv(work, bits):
    """QEMU's arguments for the mic's codec, and its files: the signal (the sequence, the same
    on both channels, one period), the ALSA configuration of its PCM, the recordings' disk."""
    mono = array.array("h", (SIGNAL_LEVEL if b else -SIGNAL_LEVEL for b in bits))
    stereo = array.array("h", bytes(4 * len(mono)))
    stereo[0::2], stereo[1::2] = mono, mono
    signal_path, read_path = os.path.join(work, "mic-signal.raw"), os.path.join(work, "mic-read.raw")
    with open(signal_path, "wb") as f:
        stereo.tofile(f)
    with open(os.path.join(work, ".asoundrc"), "w") as f:
        f.write(f'pcm.{MIC_PCM} {{\n  type file\n  slave.pcm null\n  file "{read_path}"\n  infile "{signal_path}"\n'
                f'  format raw\n  truncate false\n}}\n')
    disk = os.path.join(work, "capture.img")
    with open(disk, "wb") as f:
        f.truncate(2 * CAPTURE_SLOT)
    return ["-audiodev", f"alsa,id=mic,in.dev={MIC_PCM},in.mixing-engine=off,in.fixed-settings=off,in.try-poll=off,"
                         "out.dev=null,out.frequency=48000,out.try-poll=off",
            "-device", "hda-micro,audiodev=mic,cad=0",
            "-drive", f"file={disk},format=raw,if=virtio,cache=writethrough"]


def write_cpio(entries, path):
    """A newc cpio archive (the kernel's initramfs format) of (name, mode, data or link target)."""
    with open(path, "wb") as out:
        inode = 1
        for name, mode, data in entries + [("TRAILER!!!", 0, b"")]:
            encoded = name.encode() + b"\0"
            fields = [inode, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(encoded), 0]
            header = b"070701" + b"".join(b"%08X" % f for f in fields)
            out.write(header + encoded)
            out.write(b"\0" * ((4 - (len(header) + len(encoded)) % 4) % 4))
            out.write(data)
            out.write(b"\0" * ((4 - len(data) % 4) % 4))
            inode += 1


def build_initramfs(root, release, work, bits, init=None, module_trees=None, extras=()):
    """The guest's initramfs: by default this bench's init and its phase scripts. Another bench
    (scripts/test-real-bluetooth) passes its own init, more module trees, and extras: (host path,
    guest path) pairs, programs among them with their libraries."""
    if init is None:
        init, extras = kernel_init(), [*extras, *kernel_phase_files()]
    module_trees = MODULE_TREES if module_trees is None else module_trees
    stage = os.path.join(work, "initramfs")
    modules = os.path.join(stage, "lib", "modules", release)
    source = os.path.join(root, "lib", "modules", release)
    if not os.path.exists(os.path.join(source, "modules.dep")):
        run(["depmod", "-b", root, release], 300, "depmod of the whole kernel package")
    dependencies = {}
    for line in open(os.path.join(source, "modules.dep")):
        module, _, needs = line.partition(":")
        dependencies[module] = needs.split()
    wanted = [m for m in dependencies if any(m.startswith(tree + "/") or m == tree for tree in module_trees)]
    chosen = set()
    while wanted:
        module = wanted.pop()
        if module not in chosen:
            chosen.add(module)
            wanted += dependencies.get(module, [])
    for module in chosen:
        os.makedirs(os.path.dirname(os.path.join(modules, module)), exist_ok=True)
        shutil.copy(os.path.join(source, module), os.path.join(modules, module))
    run(["depmod", "-b", stage, release], 120, "depmod")
    # The ALSA plugin, where the guest's libasound (the host's) looks for plugins, and its
    # configuration in /etc/alsa/conf.d, which alsa.conf loads; aplay, a plain ALSA client.
    plugin_dir = os.path.join(run(["pkg-config", "--variable=libdir", "alsa"], 30, "pkg-config alsa").strip(), "alsa-lib")
    os.makedirs(os.path.join(stage, plugin_dir.lstrip("/")), exist_ok=True)
    shutil.copy(PLUGIN, os.path.join(stage, plugin_dir.lstrip("/"), os.path.basename(PLUGIN)))
    os.makedirs(os.path.join(stage, "etc/alsa/conf.d"), exist_ok=True)
    shutil.copy(os.path.join(ROOT, "share/alsa/50-audioroute.conf"), os.path.join(stage, "etc/alsa/conf.d"))
    if "/etc/alsa/conf.d" not in open("/usr/share/alsa/alsa.conf").read():
        raise Failure("/usr/share/alsa/alsa.conf does not load /etc/alsa/conf.d: the guest would not see the plugin's configuration")
    clock = build_guest_program(work, "guest-clock", os.path.join(GUEST, "clock.c"))
    jack = build_guest_program(work, "guest-jack", os.path.join(GUEST, "jack.c"), ["-lasound"])
    controls = build_guest_program(work, "guest-controls", os.path.join(GUEST, "controls.c"), ["-lasound"])
    chmaps = build_guest_program(work, "chmap-probe", os.path.join(ROOT, "Tests/Helpers/chmap-probe/chmap-probe.c"), ["-lasound"])
    for program, target in ((DAEMON, "usr/bin/audiorouted"), (UCM_HELPER, "usr/bin/audioroute-ucm"), (CLI, "usr/bin/audioroute"),
                            (clock, "usr/bin/guest-clock"), (jack, "usr/bin/guest-jack"), (controls, "usr/bin/guest-controls"),
                            (chmaps, "usr/bin/chmap-probe"), (APLAY, "usr/bin/aplay")):
        os.makedirs(os.path.join(stage, "usr/bin"), exist_ok=True)
        shutil.copy(program, os.path.join(stage, target))
    for data in ("/usr/share/alsa", "/usr/share/dbus-1"):
        shutil.copytree(data, os.path.join(stage, data.lstrip("/")), dirs_exist_ok=True)
    # The UCM phase's configuration for the HDA card (Tests/Fixtures/ucm2-bench), found through
    # ALSA_CONFIG_UCM2 by the processes that are given it only.
    shutil.copytree(UCM_BENCH, os.path.join(stage, GUEST_UCM_ROOT.lstrip("/")), dirs_exist_ok=True)
    os.makedirs(os.path.join(stage, "root"), exist_ok=True)
    # The pin patch snd_hda_intel loads when the kernel's command line names it (mic_argv).
    os.makedirs(os.path.join(stage, "lib", "firmware"), exist_ok=True)
    with open(os.path.join(stage, "lib", "firmware", MIC_FIRMWARE), "w") as f:
        f.write(MIC_PATCH)
    # No ~/.asoundrc hook (docs/alsa.md): with the plugin installed, the route file loaded last
    # would replace the plugin's `audioroute` (that block is tested without a kernel).
    write_tone(os.path.join(stage, "root", "tone.wav"), seconds=30)
    write_signal(os.path.join(stage, "root", "signal.wav"), bits)
    write_mono_tone(os.path.join(stage, "root", "music.wav"), 20, MUSIC_HZ)
    write_mono_tone(os.path.join(stage, "root", "prompt.wav"), 3.5, PROMPT_HZ)
    write_mono_tone(os.path.join(stage, "root", "ambient.wav"), 20, AMBIENT_HZ)
    write_mono_tone(os.path.join(stage, "root", "call.wav"), 3.5, CALL_HZ)
    # The UCM phase's music and call, in stereo: the HDA card's two channels are two devices there.
    write_tone(os.path.join(stage, "root", "ucm-music.wav"), seconds=10, frequency=MUSIC_HZ)
    write_tone(os.path.join(stage, "root", "ucm-call.wav"), seconds=10, frequency=CALL_HZ)
    # The surround phase's streams: a tone of its own on each channel.
    write_channels(os.path.join(stage, "root", "surround-six.wav"), SURROUND_SECONDS, SURROUND_HZ)
    write_channels(os.path.join(stage, "root", "surround-stereo.wav"), SURROUND_SECONDS, SURROUND_STEREO_HZ)
    # The sync phase's two players: a tone on one side each (0 Hz: the other side silent).
    write_channels(os.path.join(stage, "root", "sync-left.wav"), SYNC_SECONDS, (SYNC_HZ, 0.0), level=SYNC_LEVEL)
    write_channels(os.path.join(stage, "root", "sync-right.wav"), SYNC_SECONDS, (0.0, SYNC_HZ), level=SYNC_LEVEL)
    # The multiRoute phase's music with its markers (raw mono: the guest repeats it into one stream).
    write_multiroute_music(os.path.join(stage, "root", "multiroute.raw"), bits)
    os.makedirs(os.path.join(stage, "etc"), exist_ok=True)
    with open(os.path.join(stage, "etc", "passwd"), "w") as f:
        f.write("root:x:0:0:root:/root:/bin/sh\nmessagebus:x:100:101::/nonexistent:/bin/false\n")
    with open(os.path.join(stage, "etc", "group"), "w") as f:
        f.write("root:x:0:\naudio:x:29:\nmessagebus:x:101:\n")
    for source, target in extras:
        os.makedirs(os.path.dirname(os.path.join(stage, target.lstrip("/"))), exist_ok=True)
        if os.path.isdir(source):
            shutil.copytree(source, os.path.join(stage, target.lstrip("/")), dirs_exist_ok=True)
        else:
            shutil.copy(source, os.path.join(stage, target.lstrip("/")))
    def elf(path):
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    executables = [source for source, _ in extras if os.path.isfile(source) and elf(source)]
    for program in PROGRAMS + library_closure(PROGRAMS + [DAEMON, UCM_HELPER, CLI, clock, jack, controls, APLAY, PLUGIN] + executables):
        target = os.path.join(stage, program.lstrip("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy(program, target)
    for rules in ("/lib/udev/rules.d", "/etc/udev/rules.d"):
        if os.path.isdir(rules):
            shutil.copytree(rules, os.path.join(stage, rules.lstrip("/")), dirs_exist_ok=True)
    shutil.copytree(os.path.join(ROOT, "udev-rules"), os.path.join(stage, "etc/udev/rules.d"), dirs_exist_ok=True)
    os.makedirs(os.path.join(stage, "bin"), exist_ok=True)
    shutil.copy("/bin/busybox", os.path.join(stage, "bin", "busybox"))
    # The kernel loads the HDA codec drivers through /sbin/modprobe (request_module): kmod's.
    os.makedirs(os.path.join(stage, "sbin"), exist_ok=True)
    shutil.copy("/usr/bin/kmod", os.path.join(stage, "sbin", "modprobe"))
    for d in ("usr/sbin", "usr/bin"):
        os.makedirs(os.path.join(stage, d), exist_ok=True)
    entries = []
    for directory in ("dev", "proc", "sys", "run", "tmp", "etc", "root", "var"):
        entries.append((directory, 0o040755, b""))
    for current, dirs, files in os.walk(stage):
        relative = os.path.relpath(current, stage)
        for d in sorted(dirs):
            name = os.path.normpath(os.path.join(relative, d))
            if name not in ("dev", "proc", "sys", "run", "tmp", "etc", "root", "var"):
                entries.append((name, 0o040755, b""))
        for f in sorted(files):
            path = os.path.join(current, f)
            with open(path, "rb") as handle:
                entries.append((os.path.normpath(os.path.join(relative, f)), 0o100755, handle.read()))
    entries.append(("init", 0o100755, init.encode()))
    # /lib64/ld-linux-x86-64.so.2 is where programs look for the loader.
    image = os.path.join(work, "initramfs.cpio")
    write_cpio(entries, image)
    return image


def die_with_parent(own_group=True):
    """In QEMU's child before exec: its own process group (killed as one), and SIGKILL from the
    kernel if this script dies, even by SIGKILL, so no QEMU outlives a run."""
    if own_group:
        os.setsid()
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_PDEATHSIG = 1
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def report_lines(text):
    """The guest's reports in its console's text: the `say` lines (AUDIOROUTE-GUEST ...), without
    their prefix and without the clock's ticks."""
    # QEMU writes the console a character at a time: the last line may not be whole yet.
    complete = text[:text.rfind("\n") + 1]
    return [line[len("AUDIOROUTE-GUEST "):].strip() for line in complete.splitlines()
            if line.startswith("AUDIOROUTE-GUEST ") and not line.startswith("AUDIOROUTE-GUEST tick ")]


class Guest:
    """QEMU running the guest: its console (a file the guest's init writes markers to) and
    QMP (hot-plug). Killed with its process group, whatever happens."""

    def __init__(self, kernel, initramfs, work, cycles, debug=False, shell=False, jack=False, plugin=False, tower=False,
                 append="", extra_argv=(), ucm=False, surround=False, mic=False, capture=False, bits=None, sync=False, multiroute=0):
        self.console = os.path.join(work, "console.log")
        self.qmp_path = os.path.join(work, "qmp.sock")
        self.wavs = {"hda": os.path.join(work, "hda.wav"), "usb": os.path.join(work, "usb.wav")}
        # The surround phase's card: not watched by Files (it reads stereo frames); read at the end.
        self.surround_wav = os.path.join(work, "surround.wav")
        # The capture phase's files (mic_argv): what QEMU read of the mic's signal, and the disk
        # the guest writes its recordings to.
        self.mic_read, self.capture_disk = os.path.join(work, "mic-read.raw"), os.path.join(work, "capture.img")
        argv = [
            "qemu-system-x86_64", "-machine", "pc", "-accel", "tcg", "-m", "768", "-smp", "2",
            "-no-reboot", "-display", "none",
            # By hand, the console and QEMU's monitor share the terminal (Ctrl-a c switches).
            *(["-serial", "mon:stdio"] if shell else ["-monitor", "none", "-serial", "file:" + self.console]),
            "-serial", "file:" + os.path.join(work, "guest-logs.txt"),
            "-qmp", f"unix:{self.qmp_path},server=on,wait=off",
            "-kernel", kernel, "-initrd", initramfs,
            "-append", f"console=ttyS0 rdinit=/init panic=-1 loglevel={6 if shell else 4} CYCLES={cycles}" + (" JACK=1" if jack else "")
                       + (" PLUGIN=1" if plugin else "") + (" TOWER=1" if tower else "") + (" UCM=1" if ucm else "")
                       + (" SURROUND=1" if surround else "") + (" CAPTURE=1" if capture else "") + (" SYNC=1" if sync else "")
                       + (f" MULTIROUTE={multiroute}" if multiroute else "")
                       + (f" snd_hda_intel.patch={MIC_FIRMWARE} HDA_PCM=2" if mic else " HDA_PCM=0") + (" AUDIOROUTE_DEBUG=1" if debug else "") + (" AUDIOROUTE_SHELL=1 quiet" if shell else "") + append,
            "-audiodev", "wav,id=hda,out.frequency=48000,path=" + self.wavs["hda"],
            "-device", "intel-hda", "-device", f"{HDA_CODEC},audiodev=hda" + (",cad=1" if mic else ""),
            "-audiodev", "wav,id=usb,out.frequency=48000,path=" + self.wavs["usb"],
            "-device", "qemu-xhci,id=xhci",
            # The multichannel card's audiodev: QEMU's mixing engine is mono or stereo, so it is
            # off (and with it the fixed settings: qapi/audio.json), and the voice's own format
            # (8 channels at 48 kHz) goes to the backend. Not the wav backend: its wav_init_out
            # (audio/wavaudio.c) takes its format from the audiodev's out.* settings, never the
            # voice's (2 channels at 44100 Hz, which fixed-settings=off forbids changing), paces
            # and cuts the data by that format, and so keeps about 23% of an 8-channel stream,
            # out of frame alignment. The alsa backend opens its PCM at the voice's format; here
            # alsa-lib's file plugin on its null slave (alsa.conf's pcm.file), which writes a WAV
            # file of the voice's channels. No poll: null is always ready (a busy loop).
            *(["-audiodev", "alsa,id=surround,out.mixing-engine=off,out.fixed-settings=off,out.try-poll=off,"
                            "out.dev=file:FILE=" + self.surround_wav.replace(",", ",,") + ",,FORMAT=wav"] if surround else []),
            *(mic_argv(work, bits) if mic else []),
            *extra_argv,
        ]
        if shell:
            # In the terminal's foreground, so that it reads the keyboard; still killed with the script.
            self.qemu = subprocess.Popen(argv, preexec_fn=lambda: die_with_parent(own_group=False))
        else:
            # HOME: alsa-lib loads ~/.asoundrc, where mic_argv defines the mic's PCM.
            self.qemu = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, preexec_fn=die_with_parent,
                                         env=dict(os.environ, HOME=work) if mic else None)
        self.qmp = None
        self.files = Files(self.console, self.wavs)

    def lines(self):
        text = open(self.console, errors="replace").read() if os.path.exists(self.console) else ""
        return report_lines(text)

    def wait_for(self, words, seconds):
        """The guest's first report starting with `words`, waiting up to `seconds`; a Failure
        with the guest's own words when it reports a failure first."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for line in self.lines():
                if line == words or line.startswith(words + " "):
                    return line
                if line.startswith("fail "):
                    raise Failure("the guest: " + line[5:])
            if self.qemu.poll() is not None:
                raise Failure(f"QEMU exited ({self.qemu.returncode}) before the guest said '{words}': "
                              + self.qemu.stdout.read().decode(errors="replace")[-400:])
            time.sleep(0.05)
        raise Failure(f"the guest did not say '{words}' within {seconds} s")

    def command(self, execute, **arguments):
        """One QMP command; its return value, or a Failure naming QEMU's error."""
        if self.qmp is None:
            self.qmp = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.qmp.settimeout(30)
            self.qmp.connect(self.qmp_path)
            self.qmp_file = self.qmp.makefile("r")
            json.loads(self.qmp_file.readline())  # the greeting
            self.command("qmp_capabilities")
        self.qmp.sendall(json.dumps({"execute": execute, "arguments": arguments}).encode() + b"\n")
        while True:
            reply = json.loads(self.qmp_file.readline())
            if "return" in reply:
                return reply["return"]
            if "error" in reply:
                raise Failure(f"QMP {execute}: {reply['error'].get('desc')}")

    def wait_exit(self, seconds):
        try:
            self.qemu.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            raise Failure(f"the guest did not power off within {seconds} s")

    def kill(self):
        if self.qemu.poll() is None:
            try:
                os.killpg(self.qemu.pid, signal.SIGKILL)
            except ProcessLookupError:  # --shell: QEMU shares the script's group
                self.qemu.kill()
            self.qemu.wait()
        if self.qmp is not None:
            self.qmp.close()
        self.files.stop()


class GuestShell:
    """The guest's shell on a socket (--explore): run(command) sends one line and returns its exit
    status and what it printed (stdout; stderr too when redirected), without the echo and prompts."""

    def __init__(self, path, seconds=60):
        deadline = time.monotonic() + seconds
        while True:
            try:
                self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.socket.connect(path)
                break
            except OSError:
                self.socket.close()
                if time.monotonic() > deadline:
                    raise Failure(f"no guest shell on {path} within {seconds} s")
                time.sleep(0.2)
        self.buffer, self.count = b"", 0

    def run(self, command, seconds=60):
        self.count += 1
        # The marks are printed by the command line, not echoed with it: quotes split them in the line.
        n = self.count
        start, done = f"@@START{n}\n".encode(), f"@@DONE{n}:".encode()
        self.socket.sendall(f'echo "@@ST""ART{n}"; {command}; echo "@@DO""NE{n}:$?"\n'.encode())
        deadline = time.monotonic() + seconds
        while done not in self.buffer or b"\n" not in self.buffer.split(done, 1)[1]:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise Failure(f"the guest's shell: no answer to '{command}' within {seconds} s")
            self.socket.settimeout(remaining)
            try:
                data = self.socket.recv(65536)
            except socket.timeout:
                continue
            if not data:
                raise Failure("the guest's shell closed")
            self.buffer += data.replace(b"\r", b"")
        before, after = self.buffer.split(done, 1)
        status, self.buffer = after.split(b"\n", 1)
        output = before.split(start, 1)[1] if start in before else before
        return int(status.strip() or b"-1"), output.decode(errors="replace").rstrip("\n")


def plug_usb(guest):
    """Hot-adds the USB card, always into the same socket, as a user re-plugging into it: QEMU
    derives the device's USB serial number from its port, and the port's uid from that."""
    guest.command("device_add", driver="usb-audio", id="usbcard", bus="xhci.0", port="1", audiodev="usb")


def start_run(bench, needs):
    """The entry points' common start: None, with what the host lacks named with the Debian
    package scripts/bootstrap installs (`needs`: a path or a command, and its package); else
    SIGTERM (a CI timeout) and SIGHUP made to end the run through the same clean-up as a
    failure, and the run's new work directory."""
    missing = [f"{tool} (package {package})" for tool, package in needs
               if not (os.path.exists(tool) if tool.startswith("/") else shutil.which(tool))]
    if missing:
        print(f"{bench}: cannot run, not installed: " + ", ".join(missing) + "; scripts/bootstrap installs them",
              file=sys.stderr)
        return None

    def interrupted(number, frame):
        raise Failure(f"stopped by signal {signal.Signals(number).name}")
    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGHUP, interrupted)
    return tempfile.mkdtemp(prefix=f"audioroute-{bench.removeprefix('test-')}-")


def finish_run(bench, guest, work, keep, ok):
    """A bench's end, passed or not: the guest stopped (after a second for what its logs still
    had on their way to the second port, when it failed), its work directory kept as
    WORK-logs (or KEEP) when it failed or was asked for, then removed."""
    if guest is not None:
        if not ok:
            time.sleep(1)
        guest.kill()
    if not ok or keep:
        logs = keep or work + "-logs"
        shutil.copytree(work, logs, dirs_exist_ok=True, ignore=shutil.ignore_patterns("initramfs", "*.cpio", "*.sock"))
        print(f"{bench}: the guest's logs are in {logs}", file=sys.stderr)
    shutil.rmtree(work, ignore_errors=True)
