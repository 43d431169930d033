"""The sound-server bench's image: test-real-kernel's initramfs with PipeWire, WirePlumber and
pipewire-pulse as Debian 12 ships them (the host's packages, which scripts/bootstrap installs),
the pulse ALSA plugin, the PipeWire helper, and this bench's init and phase scripts."""
import glob, os

from ..common import run
from ..harness import DAEMON, GUEST, build_initramfs, guest_init, MODULE_TREES

# Where the guest has this bench's phase scripts (bench/guest/server/).
GUEST_PHASES = "/usr/share/audioroute-bench/server"
# The helper the daemon starts while the engine is PipeWire, as build-daemon ships it beside the daemon.
PIPEWIRE_HELPER = os.path.join(os.path.dirname(DAEMON), "audioroute-pipewire")
# The programs: the servers, their clients (pw-play is pw-cat by its name; pipewire-pulse is
# pipewire by its name: copied, not linked, each keeps its name), pactl/paplay/parec.
PROGRAMS = ["/usr/bin/pipewire", "/usr/bin/pipewire-pulse", "/usr/bin/wireplumber", "/usr/bin/wpctl", "/usr/bin/pw-cli",
            "/usr/bin/pw-dump", "/usr/bin/pw-metadata", "/usr/bin/pw-play", "/usr/bin/pw-cat", "/usr/bin/pactl",
            "/usr/bin/paplay", "/usr/bin/parec", "/usr/bin/pacat"]
# Read at run time: the servers' configuration, WirePlumber's scripts, the ALSA card profiles.
DATA = ["/usr/share/pipewire", "/usr/share/wireplumber", "/usr/share/alsa-card-profile"]
# What the package manager calls them, for a host that lacks one.
NEEDS = [("/usr/bin/pipewire", "pipewire-bin"), ("/usr/bin/wireplumber", "wireplumber"), ("/usr/bin/pipewire-pulse", "pipewire-pulse"),
         ("/usr/bin/pactl", "pulseaudio-utils"), ("/usr/share/alsa/alsa.conf.d/50-pulseaudio.conf", "libasound2-plugins")]


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


def server_init(explore=False):
    """This bench's init: the boot, the servers and the daemon, then its phases (or --explore's shell)."""
    return guest_init("boot.sh", "server.sh", "explore.sh" if explore else "server-checks.sh", PHASES=GUEST_PHASES)


def phase_files():
    folder = os.path.join(GUEST, "server")
    return [(os.path.join(folder, name), f"{GUEST_PHASES}/{name}") for name in sorted(os.listdir(folder)) if name.endswith(".sh")]


def build_image(root, release, work, bits, explore=False):
    extras = [(p, p) for p in PROGRAMS + loadable_modules() + DATA]
    extras += [(PIPEWIRE_HELPER, "/usr/bin/audioroute-pipewire"), *phase_files(),
               # The `pulse` PCM: Debian links libasound2-plugins' file into /etc/alsa/conf.d, which alsa.conf loads.
               ("/usr/share/alsa/alsa.conf.d/50-pulseaudio.conf", "/etc/alsa/conf.d/50-pulseaudio.conf")]
    return build_initramfs(root, release, work, bits, init=server_init(explore), module_trees=MODULE_TREES, extras=extras)
