"""The sound-server bench's image: test-real-kernel's initramfs with PipeWire, WirePlumber and
pipewire-pulse, or PulseAudio, as Debian 12 ships them (the host's packages, which
scripts/bootstrap installs), the pulse ALSA plugin, the daemon's helper for that server, and this
bench's init and phase scripts."""
import glob, os

from ..common import run
from ..harness import DAEMON, GUEST, build_initramfs, guest_init, MODULE_TREES

# Where the guest has this bench's phase scripts (bench/guest/server/).
GUEST_PHASES = "/usr/share/audioroute-bench/server"
# The helpers the daemon starts while the engine is PipeWire or PulseAudio, as build-daemon ships them beside the daemon.
PIPEWIRE_HELPER = os.path.join(os.path.dirname(DAEMON), "audioroute-pipewire")
PULSE_HELPER = os.path.join(os.path.dirname(DAEMON), "audioroute-pulse")
# The servers this bench runs, each in a guest of its own.
SERVERS = ("pipewire", "pulseaudio")
# The programs: the servers, their clients (pw-play is pw-cat by its name; pipewire-pulse is
# pipewire by its name: copied, not linked, each keeps its name), pactl/paplay/parec.
PROGRAMS = ["/usr/bin/pipewire", "/usr/bin/pipewire-pulse", "/usr/bin/wireplumber", "/usr/bin/wpctl", "/usr/bin/pw-cli",
            "/usr/bin/pw-dump", "/usr/bin/pw-metadata", "/usr/bin/pw-play", "/usr/bin/pw-cat", "/usr/bin/pactl",
            "/usr/bin/paplay", "/usr/bin/parec", "/usr/bin/pacat"]
# Read at run time: the servers' configuration, WirePlumber's scripts, the ALSA card profiles.
DATA = ["/usr/share/pipewire", "/usr/share/wireplumber", "/usr/share/alsa-card-profile"]
# PulseAudio: the daemon and its clients; its configuration (Debian's default.pa) and ALSA mixer paths and profile sets.
PULSE_PROGRAMS = ["/usr/bin/pulseaudio", "/usr/bin/pactl", "/usr/bin/paplay", "/usr/bin/parec", "/usr/bin/pacat"]
# (The files, not /etc/pulse: Debian's client.conf.d holds a dangling link to the autospawn setting.)
PULSE_DATA = ["/etc/pulse/default.pa", "/etc/pulse/daemon.conf", "/etc/pulse/client.conf", "/usr/share/pulseaudio"]
# PulseAudio's modules that need what the guest has not (Bluetooth, logind, ConsoleKit, X11, GSettings,
# JACK, Rygel): left out, and default.pa loads each only if it is there.
PULSE_LEFT_OUT = ("bluetooth", "bluez", "systemd-login", "console-kit", "x11", "gsettings", "jack", "rygel")
# What the package manager calls them, for a host that lacks one.
NEEDS = [("/usr/bin/pipewire", "pipewire-bin"), ("/usr/bin/wireplumber", "wireplumber"), ("/usr/bin/pipewire-pulse", "pipewire-pulse"),
         ("/usr/bin/pactl", "pulseaudio-utils"), ("/usr/share/alsa/alsa.conf.d/50-pulseaudio.conf", "libasound2-plugins"),
         ("/usr/bin/pulseaudio", "pulseaudio")]


def libdir():
    return run(["pkg-config", "--variable=libdir", "alsa"], 30, "pkg-config alsa").strip()


def loadable_modules():
    """The servers' loadable modules (dlopen'd: ldd of the programs does not see them), each an
    ELF extra so that build_initramfs copies its libraries: PipeWire's modules, SPA's plugins
    (not Bluetooth's, libcamera's, vulkan's, jack's: this guest has none of them), WirePlumber's
    modules, the pulse ALSA plugin."""
    lib = libdir()
    modules = glob.glob(os.path.join(lib, "pipewire-0.3", "*.so"))
    modules += [m for m in glob.glob(os.path.join(lib, "spa-0.2", "*", "*.so"))
                if os.path.basename(os.path.dirname(m)) not in ("bluez5", "libcamera", "vulkan", "jack", "avb", "v4l2", "videoconvert")]
    modules += glob.glob(os.path.join(lib, "wireplumber-0.4", "*.so"))
    modules += glob.glob(os.path.join(lib, "alsa-lib", "libasound_module_*_pulse.so"))
    modules += glob.glob(os.path.join(lib, "alsa-lib", "libasound_module_conf_pulse.so"))
    return sorted(modules)


def pulse_modules():
    """PulseAudio's modules (dlopen'd), but those PULSE_LEFT_OUT names."""
    modules = glob.glob("/usr/lib/pulse-*/modules/*.so")
    return sorted(m for m in modules if not any(word in os.path.basename(m) for word in PULSE_LEFT_OUT))


def server_init(server, explore=False):
    """This bench's init: the boot, the server and the daemon, then its phases (or --explore's shell)."""
    return guest_init("boot.sh", "server.sh", "explore.sh" if explore else "server-checks.sh", PHASES=GUEST_PHASES, SERVER=server)


def phase_files():
    folder = os.path.join(GUEST, "server")
    return [(os.path.join(folder, name), f"{GUEST_PHASES}/{name}") for name in sorted(os.listdir(folder)) if name.endswith(".sh")]


def build_image(root, release, work, bits, server="pipewire", explore=False):
    if server == "pipewire":
        extras = [(p, p) for p in PROGRAMS + loadable_modules() + DATA]
        extras.append((PIPEWIRE_HELPER, "/usr/bin/audioroute-pipewire"))
    else:
        extras = [(p, p) for p in PULSE_PROGRAMS + pulse_modules() + PULSE_DATA]
        extras += [(p, p) for p in glob.glob(os.path.join(libdir(), "alsa-lib", "libasound_module_*_pulse.so"))]
        extras.append((PULSE_HELPER, "/usr/bin/audioroute-pulse"))
    extras += [*phase_files(),
               # The `pulse` PCM: Debian links libasound2-plugins' file into /etc/alsa/conf.d, which alsa.conf loads.
               ("/usr/share/alsa/alsa.conf.d/50-pulseaudio.conf", "/etc/alsa/conf.d/50-pulseaudio.conf")]
    return build_initramfs(root, release, work, bits, init=server_init(server, explore), module_trees=MODULE_TREES, extras=extras)
