"""The headphone jack phase: a jack control on the HDA card, read by the daemon."""
from dataclasses import dataclass
from typing import ClassVar

from .common import Failure
from .events import Event, ports_field
from .reports import one_more_output, usable_output

# The phase's guest part (bench/guest/).
GUEST_SCRIPT = "kernel/jack.sh"


@dataclass(frozen=True)
class JackPorts(Event):
    """The daemon's ports (`audioroute ports --json`) at a step of the phase."""
    script: ClassVar[str] = GUEST_SCRIPT
    ports: list

    @classmethod
    def parse(cls, line):
        return cls(ports_field(line, cls.words))

    def outputs(self):
        """The uids of the usable outputs: a port whose jack reads unplugged is listed, unavailable."""
        return sorted(p["uid"] for p in self.ports if usable_output(p))


@dataclass(frozen=True)
class JackOn(JackPorts):
    """`jack-on PORTS`: once the Headphone Jack control is on and a headphones port is usable."""
    words: ClassVar[str] = "jack-on"


@dataclass(frozen=True)
class JackOff(JackPorts):
    """`jack-off PORTS`: once the control is off again and no headphones port is usable."""
    words: ClassVar[str] = "jack-off"


EVENTS = (JackOn, JackOff)


def check_jack(guest, speaker):
    """The headphone jack read from the HDA card's controls: a headphones port while it is on,
    none after; returns its uid."""
    on_event, off_event = JackOn.wait(guest, 120), JackOff.wait(guest, 120)
    on, off = on_event.outputs(), off_event.outputs()
    print(f"    outputs with the jack on: {on}")
    headphones = one_more_output(on, off, speaker, "with the Headphone Jack control on,",
                                 "with the Headphone Jack control off again,", "one headphones port")
    # A jack that reads unplugged keeps its port, listed unavailable (never routed).
    listed = {p.get("uid"): p.get("availability") for p in off_event.ports}
    if listed.get(headphones) != "unavailable":
        raise Failure(f"with the Headphone Jack control off again, {headphones} is listed {listed.get(headphones)}, expected unavailable")
    return headphones
