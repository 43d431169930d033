"""The boot phase's checks: the HDA card as the watcher read it against the kernel's own tools."""
import json, re

from .common import Failure


def check_card_says(lines):
    """The HDA card as the watcher read it (`ports --direct --explain --json`: CARD_INFO, PCM_INFO,
    the codec file) against the kernel's own tools in the guest: /proc/asound/cards, `amixer info`,
    `aplay -l`, `arecord -l` and the codec file's pin lines. Returns a summary."""
    text = next((l[len("explain "):] for l in lines if l.startswith("explain ")), None)
    if text is None:
        raise Failure("the guest did not report `audioroute ports --direct --explain --json`")
    try:
        cards = {c["card"]: c for c in json.loads(text)}
    except (ValueError, KeyError, TypeError):
        raise Failure(f"`audioroute ports --direct --explain --json` printed no JSON array of cards: {text[:300]}")
    card = cards.get("card0")
    if card is None or not card.get("info"):
        raise Failure(f"the watcher read no card info for card0 (its control device): {text[:300]}")
    info = card["info"]
    kernel = {}
    cards_lines = [l[len("card "):] for l in lines if l.startswith("card ")]
    for index, line in enumerate(cards_lines):
        m = re.match(r"\s*0 \[(\S+)\s*\]: (\S+) - (.*)$", line)
        if m and index + 1 < len(cards_lines):
            kernel.update(id=m.group(1), driver=m.group(2), name=m.group(3).strip(), longName=cards_lines[index + 1].strip())
    for line in (l[len("amixer "):] for l in lines if l.startswith("amixer ")):
        m = re.match(r"(Mixer name|Components)\s*: '(.*)'$", line.strip())
        if m:
            kernel["mixerName" if m.group(1) == "Mixer name" else "components"] = m.group(2)
    if set(kernel) != {"id", "driver", "name", "longName", "mixerName", "components"}:
        raise Failure(f"the guest's /proc/asound/cards and `amixer info` did not give card0's id, driver, names, mixer and components: {kernel}")
    differ = [f"{key}: {info.get(key)!r} read, {value!r} in the kernel's" for key, value in kernel.items() if info.get(key) != value]
    if differ:
        raise Failure("the card info the watcher read differs from the kernel's: " + "; ".join(differ))
    listed = set()
    for prefix, stream in (("aplay ", "playback"), ("arecord ", "capture")):
        for line in (l[len(prefix):] for l in lines if l.startswith(prefix)):
            m = re.match(r"card 0: \S+ \[.*?\], device (\d+): (.*) \[(.*)\]$", line.strip())
            if m:
                listed.add((int(m.group(1)), stream, m.group(2), m.group(3)))
    read = {(p["device"], p["stream"], p["id"] or "", p["name"] or "") for p in card.get("pcms", []) if p.get("id") is not None}
    if not listed or read != listed:
        raise Failure(f"the PCM names the watcher read {sorted(read)} are not the ones aplay -l and arecord -l list {sorted(listed)}")
    pins, node, caps = set(), None, None
    for line in (l[len("codec "):] for l in lines if l.startswith("codec ")):
        m = re.search(r"Node 0x([0-9a-f]+) \[Pin Complex\]", line)
        if m:
            node, caps = (int(line.split()[0]), int(m.group(1), 16)), None
            continue
        m = re.search(r"Pincap 0x([0-9a-f]+)", line)
        if m and node is not None:
            caps = int(m.group(1), 16)
            continue
        m = re.search(r"Pin Default 0x([0-9a-f]+):", line)
        if m and node is not None:
            pins.add(node + (int(m.group(1), 16), caps))
            node = None
    read_pins = {(p["codec"], p["node"], p["defaultConfig"], p.get("capabilities")) for p in card.get("hdaPins", [])}
    if not pins or read_pins != pins:
        raise Failure(f"the HDA pins the watcher read {sorted(read_pins)} are not the codec file's {sorted(pins)}")
    return (f"card0 {info['id']} [{info['name']}] driver {info['driver']}, mixer {info['mixerName']!r}, "
            f"PCMs {sorted((d, s[0], i) for d, s, i, _ in read)}, {len(pins)} HDA pins: as the kernel's tools say")


def check_boot(lines):
    """The guest as booted, from its reports up to `booted` (printed): the HDA card, udev's
    SOUND_INITIALIZED, the speaker's PCM, the daemon's two ports and the PCMs they open, the card
    info the watcher read (check_card_says), the plugin's channel maps. Returns the mic port."""
    for line in lines:
        print("    guest: " + line[:300])
    cards = [l for l in lines if l.startswith("card ") and "]:" in l]
    if not any("HDA-Intel" in l for l in cards):
        raise Failure("the guest's kernel found no HDA card: " + repr(cards))
    if not any(l.startswith("udev card0") and "SOUND_INITIALIZED=1" in l for l in lines):
        raise Failure("udev never marked the HDA card SOUND_INITIALIZED=1: " + repr(lines))
    if not any(l.startswith("pcm pcmC0D2p") for l in lines):
        raise Failure("no playback PCM pcmC0D2p (the speaker codec's) in the guest's /dev/snd")
    ports = json.loads(next(l for l in lines if l.startswith("ports "))[len("ports "):])
    kinds = sorted((p["type"], p["direction"]) for p in ports)
    print(f"    the daemon's ports at boot: {kinds}")
    # hda-micro's two pins, a speaker and a microphone. QEMU's codecs have no pin with
    # presence detection: the kernel makes "Speaker Phantom Jack" and "Mic Phantom Jack"
    # controls, and no headphone jack, so there is no headphones port to list.
    if kinds != [("builtInMic", "input"), ("builtInSpeaker", "output")]:
        raise Failure(f"the daemon's ports for the HDA card are {kinds}, expected its speaker and its microphone")
    print("    " + check_card_says(lines))
    # The mic port opens the first capture PCM arecord -l lists (the mic codec's, cad 0:
    # mic_argv), the speaker port the one playback PCM aplay -l lists (the speaker codec's).
    listed = {kind: [m.groups() for m in (re.match(r"card 0: (\S+) \[.*?\], device (\d+):", l[len(kind) + 1:])
                                           for l in lines if l.startswith(kind + " ")) if m]
              for kind in ("aplay", "arecord")}
    mic = next(p for p in ports if p["type"] == "builtInMic")
    speaker_alsa = next(p.get("alsa") for p in ports if p["type"] == "builtInSpeaker")
    if (listed["arecord"][:1] != [("Intel", "0")] or mic.get("alsa") != "dsnoop:CARD=Intel,DEV=0"):
        raise Failure(f"the mic port opens {mic.get('alsa')}, expected dsnoop of the first capture PCM arecord -l lists: {listed['arecord']}")
    if (listed["aplay"] != [("Intel", "2")] or speaker_alsa != "dmix:CARD=Intel,DEV=2"):
        raise Failure(f"the speaker port opens {speaker_alsa}, expected dmix of the one playback PCM aplay -l lists: {listed['aplay']}")
    print(f"    the mic port: {mic.get('alsa')}; the speaker's: {speaker_alsa}")
    # QEMU's HDA codec is stereo, and dmix runs it at two channels: the plugin offers
    # that layout alone; a 5.1 stream's map, through the route's plug, says that its
    # first two channels play and the other four go nowhere (NA).
    chmaps = next(l for l in lines if l.startswith("chmaps "))[len("chmaps "):]
    expected = "query FIXED FL FR|get FL FR| query FIXED FL FR|get FL FR NA NA NA NA|"
    print(f"    the plugin's channel maps on the HDA card, 2 and 6 channels: {chmaps}")
    if chmaps != expected:
        raise Failure(f"the plugin's channel maps on the HDA card are {chmaps}, expected {expected}")
    return mic
