"""The headphone jack phase: a jack control on the HDA card, read by the daemon."""
import json

from .common import Failure
from .reports import port_uids


def check_jack(guest, speaker):
    """The headphone jack read from the HDA card's controls: a headphones port while it is on,
    none after; returns its uid."""
    on = port_uids(guest.wait_for("jack-on", 120), "jack-on")
    off_line = guest.wait_for("jack-off", 120)
    off = port_uids(off_line, "jack-off")
    extra = [u for u in on if u not in speaker]
    print(f"    outputs with the jack on: {on}")
    if len(extra) != 1 or sorted(speaker + extra) != on:
        raise Failure(f"with the Headphone Jack control on, the outputs are {on}, expected {speaker} and one headphones port")
    if off != speaker:
        raise Failure(f"with the Headphone Jack control off again, the outputs are {off}, expected exactly {speaker}")
    # A jack that reads unplugged keeps its port, listed unavailable (never routed).
    listed = {p.get("uid"): p.get("availability") for p in json.loads(off_line[len("jack-off"):].strip())}
    if listed.get(extra[0]) != "unavailable":
        raise Failure(f"with the Headphone Jack control off again, {extra[0]} is listed {listed.get(extra[0])}, expected unavailable")
    return extra[0]
