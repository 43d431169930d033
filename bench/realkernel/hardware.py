"""The hardware phase: the route's hardware as a session reads it (`audioroute hardware`), against
the HDA card's own hw_params."""
import json
import math
import re
from dataclasses import dataclass
from typing import ClassVar

from .analysis import left, tone_frequency
from .common import Failure
from .events import Mark, Report
from .signals import MUSIC_HZ

# The phase's guest part (bench/guest/).
GUEST_SCRIPT = "kernel/hardware.sh"


@dataclass(frozen=True)
class HardwareRoute(Report):
    """`hardware-route LINE`: the route file's first slave.pcm line: the device the session reads
    (`hardware-usb-route`: on the USB card)."""
    script: ClassVar[str] = GUEST_SCRIPT
    words: ClassVar[str] = "hardware-route"
    line: str

    @classmethod
    def parse(cls, line):
        return cls(line, line[len(cls.words):].strip())


@dataclass(frozen=True)
class HardwareValues(Report):
    """The `audioroute hardware --json` a report carries after its words."""
    script: ClassVar[str] = GUEST_SCRIPT
    values: dict

    @classmethod
    def parse(cls, line):
        text = line[len(cls.words):].strip()
        try:
            return cls(line, json.loads(text))
        except ValueError:
            raise Failure(f"'{cls.words}': `audioroute hardware --json` printed no JSON: {text[:300]}")


@dataclass(frozen=True)
class HardwareIdle(HardwareValues):
    """`hardware-idle JSON`: with nothing playing on the card."""
    words: ClassVar[str] = "hardware-idle"


@dataclass(frozen=True)
class HardwareOpen(HardwareValues):
    """`hardware-open JSON`: while a stream plays on the card through the plugin."""
    words: ClassVar[str] = "hardware-open"


# alsa-lib's dB value for a mute (SND_CTL_TLV_DB_GAIN_MUTE), in hundredths of a dB.
DB_GAIN_MUTE = -9999999
# alsamixer's mapping is linear in dB over a range this narrow (hundredths of a dB), its cube-root
# curve (10^(dB/60)) over a wider one (alsa-utils' alsamixer/volume_mapping.c).
LINEAR_DB_RANGE = 2400


def hundredths(text):
    """`-20.40` (amixer's dB) in hundredths of a dB."""
    return round(float(text) * 100)


def tlv_range(tlv, raw_min, raw_max):
    """One TLV as amixer prints it (`dBscale-min=-74.00dB,step=1.00dB,mute=0`, `dBminmax-min=..,max=..`)
    over raw_min..raw_max: its dB minimum and maximum (hundredths) as alsa-lib's tlv.c derives them
    (a dBscale with mute=1 or a dBminmaxmute starts at a mute), and its step; Nones for another."""
    if scale := re.fullmatch(r"dBscale-min=(-?[\d.]+)dB,step=([\d.]+)dB,mute=(\d)", tlv):
        step = hundredths(scale.group(2))
        low = DB_GAIN_MUTE if scale.group(3) == "1" else hundredths(scale.group(1))
        return low, hundredths(scale.group(1)) + step * (raw_max - raw_min), step
    if minmax := re.fullmatch(r"dB(minmaxmute|minmax|linear)-min=(-?[\d.]+)dB,max=(-?[\d.]+)dB", tlv):
        low = DB_GAIN_MUTE if minmax.group(1) == "minmaxmute" else hundredths(minmax.group(2))
        return low, hundredths(minmax.group(3)), None
    return None, None, None


@dataclass(frozen=True)
class HardwareMixer(Report):
    """`hardware-mixer ELEMENT|SGET|CGET`: the card's playback element as amixer shows it, lines
    joined by `|`: `Limits: Playback 0 - 127`, the first channel's `Front Left: Playback 100 [79%]
    [-6.75dB]`, and its volume control's TLV from cget (`| dBscale-min=-95.25dB,step=0.75dB,mute=0`,
    `dBminmax-`/`dBminmaxmute-`/`dBlinear-min=..,max=..`). Fields: the element, the raw range, the
    first channel's raw value and dB (hundredths; None without dB), the dB range (hundredths; None
    without a dB TLV) as alsa-lib derives it from the TLV (tlv.c: a mute flag makes the minimum a mute)."""
    script: ClassVar[str] = GUEST_SCRIPT
    words: ClassVar[str] = "hardware-mixer"
    element: str
    raw_min: int
    raw_max: int
    raw: int
    dB: object
    dB_min: object
    dB_max: object
    dB_step: object

    @classmethod
    def parse(cls, line):
        text = line[len(cls.words):].strip()
        element, _, rest = text.partition("|")
        limits = re.search(r"Limits:(?: Playback)? (-?\d+) - (-?\d+)", rest)
        value = re.search(r"\|\s*(?:Mono|Front Left|[A-Za-z ]+):(?: Playback)? (-?\d+) \[\d+%\](?: \[(-?[\d.]+)dB\])?", rest)
        if not element or not limits or not value:
            raise Failure(f"'{cls.words}': amixer shows no playback element with a raw range and value: {text[:400]}")
        raw_min, raw_max = int(limits.group(1)), int(limits.group(2))
        dB = hundredths(value.group(2)) if value.group(2) else None
        dB_min = dB_max = step = None
        if "dBrange-" in rest:
            # A dB range (BlueALSA's): the sub-ranges' widest extent, as alsa-lib's tlv.c takes it.
            ranges = [tlv_range(tlv, int(low), int(high))
                      for low, high, tlv in re.findall(r"rangemin=(\d+),,rangemax=(\d+)\|\s*\| (dB[^|]*)", rest)]
            ranges = [r for r in ranges if r[0] is not None]
            if ranges:
                dB_min, dB_max = min(r[0] for r in ranges), max(r[1] for r in ranges)
        elif tlv := re.search(r"\| (dB(?:scale|minmaxmute|minmax|linear)-[^|]*)", rest):
            dB_min, dB_max, step = tlv_range(tlv.group(1), raw_min, raw_max)
        return cls(line, element, raw_min, raw_max, int(value.group(1)), dB, dB_min, dB_max, step)

    def perceptual(self):
        """alsamixer's 0...1 value of the element's first channel, re-derived from its mapping: the raw
        fraction without a dB range; linear in dB over a range of 24 dB or less; else 10^((dB-max)/60),
        rescaled so the range's minimum is 0 unless that minimum is a mute."""
        if self.dB_min is None or self.dB is None or self.dB_min >= self.dB_max:
            return (self.raw - self.raw_min) / (self.raw_max - self.raw_min) if self.raw_max != self.raw_min else 0.0
        if self.dB_max - self.dB_min <= LINEAR_DB_RANGE:
            return (self.dB - self.dB_min) / (self.dB_max - self.dB_min)
        normalized = 10 ** ((self.dB - self.dB_max) / 6000)
        if self.dB_min != DB_GAIN_MUTE:
            floor = 10 ** ((self.dB_min - self.dB_max) / 6000)
            normalized = (normalized - floor) / (1 - floor)
        return normalized


@dataclass(frozen=True)
class HardwareMixerSet(HardwareMixer):
    """`hardware-mixer-set ...`: the element after `amixer sset ELEMENT 50%`."""
    words: ClassVar[str] = "hardware-mixer-set"


@dataclass(frozen=True)
class HardwareSet(HardwareValues):
    """`hardware-set JSON`: `audioroute hardware --json` after the element was set."""
    words: ClassVar[str] = "hardware-set"


@dataclass(frozen=True)
class HardwareCard(Report):
    """`hardware-card HW_PARAMS`: the card's /proc/asound/<card>/pcmNp/sub0/hw_params while the
    stream plays, its lines joined by `|`: `rate: 48000 (48000/1)`, `channels: 2`, `period_size: N`..."""
    script: ClassVar[str] = GUEST_SCRIPT
    words: ClassVar[str] = "hardware-card"
    params: dict

    @classmethod
    def parse(cls, line):
        params = {}
        for item in line[len(cls.words):].strip().split("|"):
            name, colon, value = item.partition(":")
            if colon and value.strip():
                params[name.strip()] = value.split()[0]
        if "rate" not in params or "channels" not in params:
            raise Failure(f"'{cls.words}': the card's hw_params have no rate or channels: {line[:300]}")
        return cls(line, params)


@dataclass(frozen=True)
class HardwareUsbReady(Report):
    """`hardware-usb-ready`: the guest waits for the USB card."""
    script: ClassVar[str] = GUEST_SCRIPT
    words: ClassVar[str] = "hardware-usb-ready"

    @classmethod
    def parse(cls, line):
        return cls(line)


@dataclass(frozen=True)
class HardwareUsbDone(HardwareUsbReady):
    """`hardware-usb-done`: the USB card may go."""
    words: ClassVar[str] = "hardware-usb-done"


@dataclass(frozen=True)
class HardwareUsbRoute(HardwareRoute):
    words: ClassVar[str] = "hardware-usb-route"


@dataclass(frozen=True)
class HardwareUsbIdle(HardwareValues):
    words: ClassVar[str] = "hardware-usb-idle"


@dataclass(frozen=True)
class HardwareUsbOpen(HardwareValues):
    words: ClassVar[str] = "hardware-usb-open"


@dataclass(frozen=True)
class HardwareUsbCard(HardwareCard):
    words: ClassVar[str] = "hardware-usb-card"


@dataclass(frozen=True)
class HardwareUsbMixer(HardwareMixer):
    words: ClassVar[str] = "hardware-usb-mixer"


@dataclass(frozen=True)
class HardwareUsbMixerSet(HardwareMixer):
    words: ClassVar[str] = "hardware-usb-mixer-set"


@dataclass(frozen=True)
class HardwareUsbSet(HardwareValues):
    words: ClassVar[str] = "hardware-usb-set"


class HardwareRateReady(Mark):
    """`hardware-rate-ready`: the host keeps the HDA card's file from here, for the two streams at
    the preferred rate."""
    words, script = "hardware-rate-ready", GUEST_SCRIPT


@dataclass(frozen=True)
class HardwareRateDmixDone(Report):
    """`hardware-rate-dmix-done LOG`: that aplay ended; its standard error (the plugin's trace
    without its pieces and underruns), lines joined by `|`."""
    script: ClassVar[str] = GUEST_SCRIPT
    words: ClassVar[str] = "hardware-rate-dmix-done"
    log: str

    @classmethod
    def parse(cls, line):
        return cls(line, line[len(cls.words):].strip())


@dataclass(frozen=True)
class HardwareRateDmixCard(HardwareCard):
    """`hardware-rate-dmix-card HW_PARAMS`: the same preference on the daemon's route, the card's dmix."""
    words: ClassVar[str] = "hardware-rate-dmix-card"


@dataclass(frozen=True)
class HardwareRateDmixOpen(HardwareValues):
    """`hardware-rate-dmix-open JSON`: `audioroute hardware --rate 44100 --json` while it plays."""
    words: ClassVar[str] = "hardware-rate-dmix-open"


@dataclass(frozen=True)
class HardwareBusyIdle(HardwareValues):
    """`hardware-busy-idle JSON`: `audioroute hardware --json` on the step's own route, the HDA card's
    hw device, with nothing playing."""
    words: ClassVar[str] = "hardware-busy-idle"


@dataclass(frozen=True)
class HardwareBusyCard(HardwareCard):
    """`hardware-busy-card HW_PARAMS`: the card's hw_params while aplay holds its hw device."""
    words: ClassVar[str] = "hardware-busy-card"


@dataclass(frozen=True)
class HardwareBusyOpen(HardwareValues):
    """`hardware-busy-open JSON`: a fresh `audioroute hardware --json` on that route meanwhile."""
    words: ClassVar[str] = "hardware-busy-open"


@dataclass(frozen=True)
class HardwareIoCard(HardwareCard):
    """`hardware-io-default-card HW_PARAMS`: the card's hw_params while aplay plays through the
    plugin on its hw device, without AUDIOROUTE_IO_BUFFER_DURATION."""
    words: ClassVar[str] = "hardware-io-default-card"


@dataclass(frozen=True)
class HardwareIoDone(Report):
    """`hardware-io-default-done LOG`: that aplay's standard error, lines joined by `|`: the plugin's
    trace of its pieces (`pieces of 480 frames, 4800 ahead`) and aplay's setup (`period_size : 4800`).
    Fields: the piece and the queue ahead, and aplay's period (frames)."""
    script: ClassVar[str] = GUEST_SCRIPT
    words: ClassVar[str] = "hardware-io-default-done"
    log: str
    piece: int
    ahead: int
    app_period: int

    @classmethod
    def parse(cls, line):
        log = line[len(cls.words):].strip()
        pieces = re.search(r"pieces of (\d+) frames, (\d+) ahead", log)
        period = re.search(r"period_size\s*:\s*(\d+)", log)
        if not pieces or not period:
            raise Failure(f"'{cls.words}': no trace of the plugin's pieces or no period of aplay's in: {log[:400]}")
        return cls(line, log, int(pieces.group(1)), int(pieces.group(2)), int(period.group(1)))


@dataclass(frozen=True)
class HardwareIo5msCard(HardwareIoCard):
    """`hardware-io-5ms-card`: the same with AUDIOROUTE_IO_BUFFER_DURATION=5000."""
    words: ClassVar[str] = "hardware-io-5ms-card"


@dataclass(frozen=True)
class HardwareIo5msDone(HardwareIoDone):
    words: ClassVar[str] = "hardware-io-5ms-done"


EVENTS = (HardwareRoute, HardwareIdle, HardwareMixer, HardwareMixerSet, HardwareSet, HardwareCard, HardwareOpen,
          HardwareUsbReady, HardwareUsbRoute, HardwareUsbIdle, HardwareUsbMixer, HardwareUsbMixerSet, HardwareUsbSet,
          HardwareUsbCard, HardwareUsbOpen, HardwareUsbDone, HardwareRateReady, HardwareRateDmixCard,
          HardwareRateDmixOpen, HardwareRateDmixDone, HardwareBusyIdle, HardwareBusyCard, HardwareBusyOpen, HardwareIoCard,
          HardwareIoDone, HardwareIo5msCard, HardwareIo5msDone)

# The preferred rate the guest asks for (AUDIOROUTE_PREFERRED_SAMPLE_RATE); the music is 48 kHz.
PREFERRED_RATE = 44100
# How far the music's tone in the card's file may be from MUSIC_HZ: played at the wrong rate, it
# would be 8 % off (44.1 against 48 kHz).
PITCH_TOLERANCE = 0.01
# The least of each stream's 3 s of music the card's file must hold.
LEAST_MUSIC_SECONDS = 2.0

# How far `outputVolume` (a Float) may be from alsamixer's value computed here.
VOLUME_TOLERANCE = 0.005


def check_volume(what, idle, mixer, mixer_set, after):
    """outputVolume against the element as amixer shows it, before and after `amixer sset 50%`:
    the set raw value is the middle of the raw range (amixer rounds), its dB is the TLV's for that
    raw value (dBscale: min + step per raw step), and outputVolume follows to alsamixer's value."""
    for name, values, element in (("as found", idle.values, mixer), ("after amixer sset 50%", after.values, mixer_set)):
        expected = element.perceptual()
        got = values.get("outputVolume")
        print(f"    {what} ({name}): '{element.element}' raw {element.raw} in {element.raw_min}..{element.raw_max}, "
              f"{element.dB} in {element.dB_min}..{element.dB_max} (1/100 dB): alsamixer's {expected:.4f}; outputVolume {got}")
        if not isinstance(got, (int, float)) or abs(got - expected) > VOLUME_TOLERANCE:
            raise Failure(f"hardware, {what} ({name}): outputVolume {got}, alsamixer's value of '{element.element}' is "
                          f"{expected:.4f} (raw {element.raw}, {element.dB} hundredths of a dB in {element.dB_min}..{element.dB_max})")
    middle = mixer_set.raw_min + (mixer_set.raw_max - mixer_set.raw_min) / 2
    if abs(mixer_set.raw - middle) > 0.5:
        raise Failure(f"hardware, {what}: after amixer sset 50% '{mixer_set.element}' is at raw {mixer_set.raw}, "
                      f"not the middle of {mixer_set.raw_min}..{mixer_set.raw_max}")
    if mixer_set.dB_step is not None and mixer_set.dB_min != DB_GAIN_MUTE:
        dB = mixer_set.dB_min + mixer_set.dB_step * (mixer_set.raw - mixer_set.raw_min)
        if mixer_set.dB is None or abs(mixer_set.dB - dB) > 1:
            raise Failure(f"hardware, {what}: raw {mixer_set.raw} is {dB} hundredths of a dB by the TLV, amixer shows {mixer_set.dB}")


def check_card(what, route, idle, card, opened):
    """The session's rate, channel count and I/O buffer (ioBufferDuration: the period) are the
    card's as the kernel opened it, idle and while a stream plays on it (the probe opens the same
    dmix, whose clients' periods are the card's). The buffer is printed: a dmix client's is its own
    (what its frames wait), not the card's."""
    rate, channels = int(card.params["rate"]), int(card.params["channels"])
    print(f"    {what}: route {route.line}")
    print(f"    {what}: the card's hw_params {card.params}")
    for name, values in (("idle", idle.values), ("while playing", opened.values)):
        print(f"    {what}: audioroute hardware ({name}): {values}")
        if values.get("sampleRate") != rate:
            raise Failure(f"hardware, {what} ({name}): sampleRate {values.get('sampleRate')}, the card runs at {rate}")
        if values.get("outputNumberOfChannels") != channels:
            raise Failure(f"hardware, {what} ({name}): outputNumberOfChannels {values.get('outputNumberOfChannels')}, "
                          f"the card has {channels}")
        period = round(values.get("ioBufferDuration", 0) * rate)
        buffer = round(values.get("outputLatency", 0) * rate)
        print(f"    {what} ({name}): period {period} frames, buffer {buffer} frames; the card's {card.params.get('period_size')} "
              f"and {card.params.get('buffer_size')}")
        if str(period) != card.params.get("period_size"):
            raise Failure(f"hardware, {what} ({name}): ioBufferDuration is {period} frames, the card's period "
                          f"{card.params.get('period_size')}")


def check_music(what, samples, least=LEAST_MUSIC_SECONDS):
    """The music (MUSIC_HZ) is in `samples` (the card's file, at its 48 kHz) at its pitch, at least `least` s."""
    frequency, seconds = tone_frequency(samples)
    print(f"    {what}: the card's file holds {seconds:.2f} s of a {frequency:.1f} Hz tone (the music's {MUSIC_HZ:.0f} Hz)")
    if seconds < least:
        raise Failure(f"hardware, {what}: the card's file holds {seconds:.2f} s of the music, not {least} s")
    if abs(frequency - MUSIC_HZ) > MUSIC_HZ * PITCH_TOLERANCE:
        raise Failure(f"hardware, {what}: the music's tone is {frequency:.1f} Hz in the card's file, not {MUSIC_HZ:.0f} Hz: "
                      f"played at the wrong rate")


def check_preferred_rate(guest):
    """The preferred 44.1 kHz on the card's dmix, which runs at its own rate: the stream plays at
    that, says so on standard error, the session's sampleRate is that rate, and the card's file
    holds the music at its pitch."""
    files = guest.files
    HardwareRateReady.wait(guest, 60)
    files.capture("hda")
    dmix_card = HardwareRateDmixCard.wait(guest, 60)
    opened = HardwareRateDmixOpen.wait(guest, 60)
    dmix_done = HardwareRateDmixDone.wait(guest, 60)
    samples = left(files.take("hda"))
    rate = int(dmix_card.params["rate"])
    print(f"    preferred {PREFERRED_RATE} Hz, the card's dmix: its hw_params {dmix_card.params}; "
          f"audioroute hardware --rate {PREFERRED_RATE}: sampleRate {opened.values.get('sampleRate')}")
    if opened.values.get("sampleRate") != rate:
        raise Failure(f"hardware, the preferred rate on dmix: sampleRate {opened.values.get('sampleRate')}, the card runs at {rate}")
    said = f"does not run at the session's preferred {PREFERRED_RATE} Hz: it runs at {rate} Hz"
    if rate != PREFERRED_RATE and said not in dmix_done.log:
        raise Failure(f"hardware, the preferred rate on dmix: the stream's standard error does not say it {said}: {dmix_done.log[:400]}")
    check_music("the preferred rate, the card's dmix", samples)


# The values a session reads from the route's device (`audioroute hardware --json`): 0 each when
# nothing can be read.
DEVICE_VALUES = ("sampleRate", "ioBufferDuration", "outputLatency", "outputNumberOfChannels", "maximumOutputNumberOfChannels")


def check_busy(idle, card, opened):
    """A busy exclusive device: the step's route (the HDA card's hw device) reads the card's rate
    idle, and 0 for each device value from a fresh process while aplay holds the device: it answers
    EBUSY and that process has no last values; any other number is made up."""
    rate = int(card.params["rate"])
    print(f"    busy hw device: idle {idle.values}")
    print(f"    busy hw device: the card's hw_params while aplay holds it {card.params}; a fresh audioroute hardware: {opened.values}")
    if idle.values.get("sampleRate") != rate or not idle.values.get("ioBufferDuration"):
        raise Failure(f"hardware, busy hw device: idle, the route reads sampleRate {idle.values.get('sampleRate')}, "
                      f"ioBufferDuration {idle.values.get('ioBufferDuration')}: not the card's {rate} Hz (the step's route file is not read)")
    made_up = {name: opened.values.get(name) for name in DEVICE_VALUES if opened.values.get(name) != 0}
    if made_up:
        raise Failure(f"hardware, busy hw device: a fresh process read {made_up} while aplay held the device "
                      f"(EBUSY, no last values in that process): expected 0 (unknown)")


# The I/O buffer the guest asks for the second stream (AUDIOROUTE_IO_BUFFER_DURATION, µs), and the
# plugin's without one (AR_IO_PIECE_DEFAULT_US).
IO_BUFFER_US = 5000
DEFAULT_PIECE_US = 10000
# How far the card's period may be from the one asked: an HDA controller that aligns its buffers
# takes periods in steps of 128 bytes (hda_controller.c, azx_pcm_open), 32 frames of S16_LE stereo.
HDA_PERIOD_STEP = 32


def check_io_buffer(default_card, default_done, set_card, set_done):
    """The plugin's pieces are the I/O buffer asked (10 ms without one, 5 ms with
    AUDIOROUTE_IO_BUFFER_DURATION=5000), and they reach the card: the plugin gives its device
    aplay's period, at most half its queue (ten pieces, device.c), which the kernel's hw_params show
    within the card's period step; so the card's period is shorter with 5 ms."""
    periods = []
    for name, us, card, done in (("default", DEFAULT_PIECE_US, default_card, default_done), ("5 ms", IO_BUFFER_US, set_card, set_done)):
        rate, period = int(card.params["rate"]), int(card.params.get("period_size", 0))
        piece = rate * us // 1_000_000
        slave = min(done.app_period, done.ahead // 2) if done.ahead > 1 else done.app_period
        print(f"    I/O buffer {name}: the plugin's pieces {done.piece} frames, {done.ahead} ahead; aplay's period {done.app_period}; "
              f"the card's hw_params {card.params}")
        if piece != done.piece:
            raise Failure(f"hardware, I/O buffer {name}: the plugin's pieces are {done.piece} frames, {us} µs at {rate} Hz is {piece}")
        if abs(period - slave) > HDA_PERIOD_STEP:
            raise Failure(f"hardware, I/O buffer {name}: the card's period is {period} frames, the plugin's device period "
                          f"{slave} (aplay's {done.app_period}, half of {done.ahead} ahead)")
        periods.append(period)
    if periods[1] >= periods[0]:
        raise Failure(f"hardware, I/O buffer: the card's period with {IO_BUFFER_US} µs is {periods[1]} frames, "
                      f"without it {periods[0]}: the preferred I/O buffer does not reach the card")


def check_hardware(guest, plug_usb):
    """The HDA card, then the USB card (hot-added with `plug_usb(guest)` and removed), each read by
    `audioroute hardware` against the card's own hw_params."""
    route, idle = HardwareRoute.wait(guest, 60), HardwareIdle.wait(guest, 60)
    check_volume("HDA card", idle, HardwareMixer.wait(guest, 60), HardwareMixerSet.wait(guest, 60), HardwareSet.wait(guest, 60))
    check_card("HDA card", route, idle, HardwareCard.wait(guest, 60), HardwareOpen.wait(guest, 60))
    check_busy(HardwareBusyIdle.wait(guest, 60), HardwareBusyCard.wait(guest, 60), HardwareBusyOpen.wait(guest, 60))
    check_io_buffer(HardwareIoCard.wait(guest, 60), HardwareIoDone.wait(guest, 60), HardwareIo5msCard.wait(guest, 60),
                    HardwareIo5msDone.wait(guest, 60))
    check_preferred_rate(guest)
    HardwareUsbReady.wait(guest, 60)
    plug_usb(guest)
    route, idle = HardwareUsbRoute.wait(guest, 180), HardwareUsbIdle.wait(guest, 60)
    check_volume("USB card", idle, HardwareUsbMixer.wait(guest, 60), HardwareUsbMixerSet.wait(guest, 60),
                 HardwareUsbSet.wait(guest, 60))
    check_card("USB card", route, idle, HardwareUsbCard.wait(guest, 60), HardwareUsbOpen.wait(guest, 60))
    HardwareUsbDone.wait(guest, 60)
    guest.command("device_del", id="usbcard")
