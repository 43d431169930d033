"""The surround phase: a multichannel USB card, its port, and a 6-channel and a stereo stream in its file."""
import array, os, re, struct

from .analysis import goertzel
from .common import Failure, median
from .events import Mark
from .reports import Ports, Text
from .signals import RATE, SURROUND_HZ, SURROUND_LEVEL, SURROUND_SECONDS, SURROUND_STEREO_HZ

# The phase's guest part (bench/guest/).
GUEST_SCRIPT = "kernel/surround.sh"


class SurroundReady(Mark):
    """`surround-ready`: the host hot-adds the multichannel card."""
    words, script = "surround-ready", GUEST_SCRIPT


class SurroundAdded(Text):
    """`surround-added STREAM0`: the card is up and the route names its CHANNELS; its
    /proc/asound/card1/stream0."""
    words, script = "surround-added", GUEST_SCRIPT

    def playback(self):
        """The channel counts of the playback altsets the kernel lists, and their channel maps."""
        return ([int(x) for x in re.findall(r"Channels: (\d+)", self.text.split("|Capture:")[0])],
                re.findall(r"Channel map: ([A-Z ]+)", self.text))


class SurroundPorts(Ports):
    """`surround-ports PORTS`: the ports with the card up."""
    words, script = "surround-ports", GUEST_SCRIPT


class SurroundExplain(Text):
    """`surround-explain TEXT`: the card's lines of `audioroute ports --direct --explain`."""
    words, script = "surround-explain", GUEST_SCRIPT


class SurroundRoute(Text):
    """`surround-route TEXT`: the route file's first slave.pcm."""
    words, script = "surround-route", GUEST_SCRIPT


class SurroundChmaps(Text):
    """`surround-chmaps SIX TWO`: the plugin's channel maps for a 6-channel and a stereo stream (chmap-probe)."""
    words, script = "surround-chmaps", GUEST_SCRIPT


class SurroundSix(Mark):
    """`surround-six`: 1 s after the 6-channel stream's aplay ended."""
    words, script = "surround-six", GUEST_SCRIPT


class SurroundStereo(Mark):
    """`surround-stereo`: 1 s after the stereo stream's aplay ended."""
    words, script = "surround-stereo", GUEST_SCRIPT


class SurroundRemoved(Ports):
    """`surround-removed PORTS`: the card gone and the route without CHANNELS."""
    words, script = "surround-removed", GUEST_SCRIPT


EVENTS = (SurroundReady, SurroundAdded, SurroundPorts, SurroundExplain, SurroundRoute, SurroundChmaps, SurroundSix,
          SurroundStereo, SurroundRemoved)


def surround_header(path):
    """The card's WAV file's channels, rate and where its data starts (alsa-lib's file plugin
    writes RIFF, fmt and data chunks), or a Failure naming what is wrong with it."""
    with open(path, "rb") as f:
        head = f.read(4096)
    if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
        raise Failure(f"surround: the card's file {path} is not a WAV file ({len(head)} bytes)")
    at, fmt = 12, None
    while at + 8 <= len(head):
        name, size = head[at:at + 4], struct.unpack("<I", head[at + 4:at + 8])[0]
        if name == b"fmt " and size >= 16 and at + 24 <= len(head):
            fmt = struct.unpack("<HHI", head[at + 8:at + 16])
        if name == b"data":
            if fmt is None:
                raise Failure(f"surround: the card's file has data before its fmt chunk")
            return fmt[1], fmt[2], at + 8
        at += 8 + size
    raise Failure(f"surround: the card's file has no data chunk in its first {len(head)} bytes")


def surround_frames(path, offset, start, end, channels):
    """The card's file from byte `start` to `end` of its data (which begins at `offset`), as one
    array of samples per channel."""
    with open(path, "rb") as f:
        f.seek(offset + start)
        data = f.read(end - start)
    frame = 2 * channels
    samples = array.array("h", data[:len(data) - len(data) % frame])
    return [samples[c::channels] for c in range(channels)]


def surround_data_size(path, offset):
    return max(0, os.path.getsize(path) - offset) if os.path.exists(path) else 0


def check_channels(what, chans, frequencies):
    """Each of the stream's tones on its own channel of the card, in order, and the card's other
    channels silent: the levels, per channel, of every tone, over the middle of where it plays."""
    loud = [i for i in range(len(chans[0])) if any(abs(c[i]) > 1000 for c in chans[:len(frequencies)])]
    if not loud:
        raise Failure(f"surround: nothing reached the multichannel card's file during the {what}")
    # The whole stream, not a part: its frames from the first loud one to the last. 50 ms of
    # slack: the stream's end can lose what is still on the way when the card's stream stops
    # (seen: 9 ms); QEMU's wav backend kept 23% (docs/testing.md, "surround").
    span = (loud[-1] - loud[0] + 1) / RATE
    print(f"    the {what} in the card's file: {span:.3f} s from its first loud frame to its last (played: {SURROUND_SECONDS} s)")
    if span < SURROUND_SECONDS - 0.05 or span > SURROUND_SECONDS + 0.05:
        raise Failure(f"surround: the {what} spans {span:.3f} s of the card's file, played {SURROUND_SECONDS} s")
    trim = RATE // 4
    start, end = loud[0] + trim, loud[-1] - trim
    rows = []
    for c, samples in enumerate(chans):
        levels = [median(goertzel(samples, start, end, f)) for f in frequencies]
        peak = max(abs(x) for x in samples[start:end])
        rows.append((levels, peak))
        print(f"    card channel {c}: " + ", ".join(f"{f:.0f} Hz {l:.0f}" for f, l in zip(frequencies, levels)) + f" (peak {peak})")
    for c, (levels, peak) in enumerate(rows):
        if c < len(frequencies):
            own = levels[c]
            if own < SURROUND_LEVEL / 2:
                raise Failure(f"surround: the {what}'s channel {c} ({frequencies[c]:.0f} Hz) reached card channel {c} at {own:.0f}, expected about {SURROUND_LEVEL}")
            others = [l for k, l in enumerate(levels) if k != c]
            if max(others) > own / 20:
                raise Failure(f"surround: card channel {c} carries more than the {what}'s channel {c}: {levels}")
        elif peak > 300:
            raise Failure(f"surround: card channel {c} is not silent during the {what} (peak {peak})")


def check_surround_port(added, ports):
    """The multichannel card's output port (`surround-ports`): dmix at the channels of the widest
    playback altset its stream file lists (`surround-added`). Returns those channels and the port."""
    stream = added.text
    print("    the card's /proc/asound/card1/stream0: " + stream)
    # The widest playback altset the kernel lists (QEMU's 7.1, hw/usb/dev-audio.c: 8 channels).
    counts, _ = added.playback()
    if not counts:
        raise Failure(f"surround: the card's stream file lists no playback channels: {stream}")
    widest = max(counts)
    outputs = [p for p in ports.ports if p.get("type") == "usbAudio" and p.get("direction") == "output"]
    expected = f",CHANNELS={widest}"
    if len(outputs) != 1 or not outputs[0].get("alsa", "").endswith(expected):
        raise Failure(f"surround: the multichannel card's output port is {outputs}, expected one whose ALSA name ends with {expected}")
    print(f"    its output port: {outputs[0]['alsa']}")
    return widest, outputs[0]


def check_surround_chmaps(added, chmaps):
    """The plugin offers the card's channel map of its widest altset (`surround-chmaps`)."""
    counts, maps = added.playback()
    widest = max(counts)
    print(f"    the plugin's channel maps, 6 and 2 channels: {chmaps.text}")
    wide_map = maps[counts.index(widest)].strip() if len(maps) == len(counts) else None
    if wide_map is not None and f"query FIXED {wide_map}|" not in chmaps.text:
        raise Failure(f"surround: the plugin does not offer the card's {widest}-channel map ({wide_map}): {chmaps.text}")


def check_surround(guest):
    """The multichannel USB card: its port's ALSA name (dmix at the channels its stream file says),
    the plugin's channel maps on it, then a 6-channel stream and a stereo one, read per channel
    from the card's own WAV file; then it is removed."""
    SurroundReady.wait(guest, 300)
    guest.command("device_add", driver="usb-audio", id="usbsurround", bus="xhci.0", port="2", audiodev="surround", multi=True)
    added = SurroundAdded.wait(guest, 180)
    widest, port = check_surround_port(added, SurroundPorts.wait(guest, 60))
    for event in (SurroundExplain, SurroundRoute):
        print(f"    {event.words[len('surround-'):]}: " + event.wait(guest, 60).text)
    check_surround_chmaps(added, SurroundChmaps.wait(guest, 60))
    path = guest.surround_wav
    SurroundSix.wait(guest, 120)
    channels, rate, offset = surround_header(path)
    six_end = surround_data_size(path, offset)
    print(f"    the card's WAV file: {channels} channels at {rate} Hz, {six_end} bytes of data after the 6-channel stream "
          f"({six_end / (2 * channels * RATE) if channels else 0:.3f} s)")
    if channels != widest or rate != RATE:
        raise Failure(f"surround: the card's file is {channels} channels at {rate} Hz, expected the port's {widest} at {RATE}")
    check_channels("6-channel stream", surround_frames(path, offset, 0, six_end, channels), SURROUND_HZ)
    SurroundStereo.wait(guest, 120)
    stereo_end = surround_data_size(path, offset)
    print(f"    {stereo_end - six_end} bytes of data after the stereo stream ({(stereo_end - six_end) / (2 * channels * RATE):.3f} s)")
    check_channels("stereo stream", surround_frames(path, offset, six_end - six_end % (2 * channels), stereo_end, channels), SURROUND_STEREO_HZ)
    guest.command("device_del", id="usbsurround")
    removed = SurroundRemoved.wait(guest, 180).ports
    if any(p.get("type") == "usbAudio" for p in removed):
        raise Failure(f"surround: a USB port is still listed after the card left: {removed}")
    return port["uid"]
