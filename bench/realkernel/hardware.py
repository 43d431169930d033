"""The hardware phase: the route's hardware as a session reads it (`audioroute hardware`), against
the HDA card's own hw_params."""
import json
from dataclasses import dataclass
from typing import ClassVar

from .common import Failure
from .events import Report

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


EVENTS = (HardwareRoute, HardwareIdle, HardwareCard, HardwareOpen, HardwareUsbReady, HardwareUsbRoute, HardwareUsbIdle,
          HardwareUsbCard, HardwareUsbOpen, HardwareUsbDone)


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


def check_hardware(guest, plug_usb):
    """The HDA card, then the USB card (hot-added with `plug_usb(guest)` and removed), each read by
    `audioroute hardware` against the card's own hw_params."""
    check_card("HDA card", HardwareRoute.wait(guest, 60), HardwareIdle.wait(guest, 60), HardwareCard.wait(guest, 60),
               HardwareOpen.wait(guest, 60))
    HardwareUsbReady.wait(guest, 60)
    plug_usb(guest)
    check_card("USB card", HardwareUsbRoute.wait(guest, 180), HardwareUsbIdle.wait(guest, 60), HardwareUsbCard.wait(guest, 60),
               HardwareUsbOpen.wait(guest, 60))
    HardwareUsbDone.wait(guest, 60)
    guest.command("device_del", id="usbcard")
