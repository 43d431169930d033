"""The UCM phase: the bench's configuration on the HDA card, the daemon's call to the speaker and
back, the USB card as a UCM card, the helper's answers with the system's tree, the daemon's memory."""
import array, json, time
from dataclasses import dataclass

from .analysis import left, levels_between
from .common import Failure, median, phase
from .events import Mark, Report
from .harness import plug_usb
from .reports import Alive, CycleReport, Ports, capture_reports, memory_report, numbered, report_fields, usable_output
from .signals import CALL_HZ, MUSIC_HZ, RATE, WINDOW

# The phase's guest part (bench/guest/).
GUEST_SCRIPT = "kernel/ucm.sh"


# The UCM phase (Tests/Fixtures/ucm2-bench): the Speaker is the Master amp's left channel, the
# Earpiece its right one; each verb sets the amp's volume, which QEMU applies linearly.
UCM_VOLUME = {"HiFi": "74,74", "Voice Call": "37,37"}
UCM_GAIN = {"HiFi": 1.0, "Voice Call": 0.5}
UCM_SWITCH = {"builtInSpeaker": "on,off", "builtInReceiver": "off,on"}
# The daemon's steps: (report, verb, output, mic on). Music (mixable) plays throughout; the
# call's player is interrupted while the mic is muted (before "resumed") and while `audioroute
# override speaker`'s session holds.
UCM_STEPS = [("music", "HiFi", "builtInSpeaker", False), ("call", "Voice Call", "builtInReceiver", True),
             ("resumed", "Voice Call", "builtInReceiver", True), ("speaker", "Voice Call", "builtInSpeaker", True), ("back", "Voice Call", "builtInReceiver", True),
             ("ended", "HiFi", "builtInSpeaker", False)]


# The bench profile's built-in mics, data sources of one port: the ADC amp's volume each one's
# enable sequence sets (Tests/Fixtures/ucm2-bench/Intel), as amixer reads it.
UCM_DATA_SOURCE_VOLUME = {"Mic": "50,50", "Mic2": "10,10"}


@dataclass(frozen=True)
class UcmControls(Report):
    """`WORDS switch=.. volume=.. capture=.. [STATUS]`: the HDA card's Master switch and volume and
    its Capture switch (amixer), and, with the daemon, `audioroute status --json` (None if not JSON)."""
    switch: str
    volume: str
    capture: str
    status: dict

    @classmethod
    def parse(cls, line):
        fields = dict(f.split("=", 1) for f in line.split()[1:4] if "=" in f)
        try:
            status = json.loads(line[line.find("{"):] if "{" in line else "{}")
        except ValueError:
            status = None
        return cls(line, fields.get("switch"), fields.get("volume"), fields.get("capture"), status)

    def route(self):
        """The types of the route's outputs in the status, or None without one."""
        return None if self.status is None else [p.get("type") for p in self.status.get("route", {}).get("outputs", [])]


class UcmConfigSpeaker(UcmControls):
    """`ucm-config-speaker CONTROLS`: alsaucm set HiFi and the Speaker while the tone plays."""
    words, script = "ucm-config-speaker", GUEST_SCRIPT


class UcmConfigSpeakerEnd(Mark):
    """`ucm-config-speaker-end`: 1.5 s later."""
    words, script = "ucm-config-speaker-end", GUEST_SCRIPT


class UcmConfigEarpiece(UcmControls):
    """`ucm-config-earpiece CONTROLS`: alsaucm set Voice Call, the Earpiece and the Mic."""
    words, script = "ucm-config-earpiece", GUEST_SCRIPT


class UcmConfigEarpieceEnd(Mark):
    """`ucm-config-earpiece-end`: 1.5 s later."""
    words, script = "ucm-config-earpiece-end", GUEST_SCRIPT


class UcmPorts(Ports):
    """`ucm-ports PORTS`: the daemon with --ucm-root answers: its ports."""
    words, script = "ucm-ports", GUEST_SCRIPT


class UcmStep(UcmControls):
    """`ucm-STEP CONTROLS STATUS`: a daemon step's controls and status, once the switch is the
    step's (ucm.sh's `step`, which says `ucm-$1`)."""
    said = "ucm-$1"


@dataclass(frozen=True)
class UcmStepEnd(Report):
    """`ucm-STEP-end switch=..`: 1.5 s later, the Master switch."""
    said = "ucm-$1-end"
    switch: str

    @classmethod
    def parse(cls, line):
        return cls(line, dict(f.split("=", 1) for f in cls.fields(line) if "=" in f).get("switch"))


@dataclass(frozen=True)
class UcmDataSourceReport(Report):
    """`WORDS mic=UID cvol=.. STATUS`: the built-in mic's uid, the ADC amp's volume (amixer) and
    `audioroute status --json`."""
    mic: str
    cvol: str
    status: dict

    @classmethod
    def parse(cls, line):
        fields, status = report_fields(line, cls.words)
        return cls(line, fields.get("mic"), fields.get("cvol"), status)

    def input(self):
        """The route's first input in the status, or {}."""
        return (self.status.get("route", {}).get("inputs") or [{}])[0]


class UcmDataSource(UcmDataSourceReport):
    """`ucm-datasource ...`: while `audioroute data-source MIC Mic2` holds the call."""
    words, script = "ucm-datasource", GUEST_SCRIPT


class UcmDataSourceBack(UcmDataSourceReport):
    """`ucm-datasource-back ...`: once it ended, the call's session (no preference) controls again."""
    words, script = "ucm-datasource-back", GUEST_SCRIPT


def check_ucm_data_source(report, expected):
    """A data-source report: the route records from the built-in mic, whose data sources are the
    profile's Mic and Mic2 (by CapturePriority), `expected` selected in the status, and the ADC
    volume `expected`'s enable sequence sets, so the helper enabled it."""
    inputs = report.input()
    sources = [s.get("id") for s in inputs.get("dataSources", [])]
    selected = inputs.get("selectedDataSource")
    print(f"    {report.words}: the route's input {inputs.get('uid')} ({inputs.get('type')}), data sources {sources}, "
          f"selected {selected}; the ADC volume {report.cvol}")
    if inputs.get("type") != "builtInMic" or inputs.get("uid") != report.mic:
        raise Failure(f"UCM data source: the route's input is {inputs.get('uid')} ({inputs.get('type')}), expected the built-in mic {report.mic}")
    if sources != ["Mic", "Mic2"]:
        raise Failure(f"UCM data source: the built-in mic's data sources are {sources}, expected ['Mic', 'Mic2'] (by CapturePriority)")
    if selected != expected:
        raise Failure(f"UCM data source: the status says {selected} is in use, expected {expected}")
    if report.cvol != UCM_DATA_SOURCE_VOLUME[expected]:
        raise Failure(f"UCM data source: the ADC volume is {report.cvol}, expected {UCM_DATA_SOURCE_VOLUME[expected]}: "
                      f"the helper did not enable {expected}")


# Each step's two reports, by the step's name.
STEP_EVENTS = {step: (type(f"UcmStep_{step}", (UcmStep,), {"words": f"ucm-{step}", "script": GUEST_SCRIPT}),
                      type(f"UcmStepEnd_{step}", (UcmStepEnd,), {"words": f"ucm-{step}-end", "script": GUEST_SCRIPT}))
               for step, *_ in UCM_STEPS}


@dataclass(frozen=True)
class UcmMicMute(Report):
    """`WORDS capture=.. KEY=..`: the Capture switch (amixer) and what the mixable recorder beside
    the call heard (`began=REASON`, `ended=shouldResume|none`)."""
    capture: str
    heard: str

    @classmethod
    def parse(cls, line):
        fields = dict(f.split("=", 1) for f in cls.fields(line) if "=" in f)
        return cls(line, fields.get("capture"), fields.get("began", fields.get("ended")))


class UcmMicMuted(UcmMicMute):
    """`ucm-mic-muted capture=.. began=REASON`: the Mic's CaptureSwitch turned off during the call."""
    words, script = "ucm-mic-muted", GUEST_SCRIPT


class UcmMicUnmuted(UcmMicMute):
    """`ucm-mic-unmuted capture=.. ended=shouldResume|none`: and on again."""
    words, script = "ucm-mic-unmuted", GUEST_SCRIPT


def check_ucm_mic_mute(muted, unmuted):
    """The profile's own mute (the Mic device's CaptureSwitch): off interrupts the recorder with
    builtInMicMuted, on ends the interruption with shouldResume."""
    print(f"    mic mute: capture {muted.capture}, the recorder heard {muted.heard or 'nothing'}; "
          f"unmuted: capture {unmuted.capture}, {unmuted.heard or 'nothing'}")
    if muted.capture != "off,off" or muted.heard != "builtInMicMuted":
        raise Failure(f"UCM mic mute: with the Capture Switch {muted.capture}, the recorder's interruption was "
                      f"{muted.heard or 'none'}, expected builtInMicMuted ({muted.report})")
    if unmuted.capture != "on,on" or unmuted.heard != "shouldResume":
        raise Failure(f"UCM mic mute: with the Capture Switch {unmuted.capture}, the recorder's interruption ended "
                      f"{'with ' + unmuted.heard if unmuted.heard else 'never'}, expected with shouldResume ({unmuted.report})")


class UcmAlive(Alive):
    """`ucm-alive alive|exited`: the music's player after the steps."""
    words, script = "ucm-alive", GUEST_SCRIPT


class UcmUsbReady(CycleReport):
    """`ucm-usb-ready N`: cycle N's player plays on the speaker; the host hot-adds the USB card."""
    words, script = "ucm-usb-ready", GUEST_SCRIPT


@dataclass(frozen=True)
class UcmUsbFields(Report):
    """`WORDS N KEY=VALUE... JSON`: a UCM USB cycle's controls, then what the CLI printed."""
    cycle: int
    controls: dict

    @classmethod
    def parse(cls, line):
        cycle, _ = numbered(line, cls.words)
        return cls(line, cycle, *report_fields(line, f"{cls.words} {cycle}"))


@dataclass(frozen=True)
class UcmUsbAdded(UcmUsbFields):
    """`ucm-usb-added N usb-switch=.. usb-volume=.. switch=.. STATUS`: the USB card's output switch
    and volume, the HDA card's Master switch, and `audioroute status --json`."""
    words, script = "ucm-usb-added", GUEST_SCRIPT
    status: dict


@dataclass(frozen=True)
class UcmUsbRemoved(UcmUsbFields):
    """`ucm-usb-removed N switch=.. PORTS`: the HDA card's Master switch and the ports after the removal."""
    words, script = "ucm-usb-removed", GUEST_SCRIPT
    ports: list


@dataclass(frozen=True)
class Memory(Report):
    """`WORDS [N] PROGRAM[PID],VmRSS=..,VmHWM=..,RssAnon=.. ...`: the daemon's and its UCM helper's memory (kB)."""
    processes: list

    @classmethod
    def parse(cls, line):
        return cls(line, memory_report(line))


class DaemonMemoryStart(Memory):
    """`daemon-memory-start MEMORY`: the first daemon's, before the phases."""
    words, script = "daemon-memory-start", "kernel-checks.sh"


class DaemonMemory(Memory):
    """`daemon-memory MEMORY`: the first daemon's, after the player's cycles."""
    words, script = "daemon-memory", "kernel/cycles.sh"


class UcmUsbMemory(Memory):
    """`ucm-usb-memory N MEMORY`: the UCM phase's daemon's and helper's, the USB card up."""
    words, script = "ucm-usb-memory", GUEST_SCRIPT


class UcmUsbMemoryEnd(Memory):
    """`ucm-usb-memory-end MEMORY`: theirs after the last removal."""
    words, script = "ucm-usb-memory-end", GUEST_SCRIPT


@dataclass(frozen=True)
class StockUcm(Report):
    """`stock-ucm LS`: what `ls` said of alsa-ucm-conf's top files in the guest."""
    words, script = "stock-ucm", "kernel-checks.sh"
    listing: str

    @classmethod
    def parse(cls, line):
        return cls(line, line[len(cls.words):].strip())


EVENTS = (UcmConfigSpeaker, UcmConfigSpeakerEnd, UcmConfigEarpiece, UcmConfigEarpieceEnd, UcmPorts,
          *(e for pair in STEP_EVENTS.values() for e in pair), UcmMicMuted, UcmMicUnmuted, UcmDataSource, UcmDataSourceBack, UcmAlive, UcmUsbReady,
          UcmUsbAdded, UcmUsbMemory,
          UcmUsbRemoved, UcmUsbMemoryEnd, DaemonMemoryStart, DaemonMemory, StockUcm)


def ucm_capture(guest, events, seconds=90):
    """capture_reports, both channels: (left, right), each report's place and its event."""
    data, marks, reports = capture_reports(guest, events, seconds)
    samples = array.array("h", bytes(data[:len(data) - len(data) % 4]))
    return (samples[0::2], samples[1::2]), marks, reports


def ucm_levels(channels, marks, step, frequency=MUSIC_HZ):
    """The tone's median level on the left and right channels between ucm-STEP and ucm-STEP-end."""
    return tuple(median(levels_between(c, marks, f"ucm-{step}", f"ucm-{step}-end", frequency) or [0]) for c in channels)


def ucm_check_step(name, controls, levels, reference, verb, output, mic):
    """One step (its UcmControls): the controls as the verb and devices set them, and the tone on
    the output's channel only, at the verb's volume."""
    switch, volume, capture = controls.switch, controls.volume, controls.capture
    expected = (UCM_SWITCH[output], UCM_VOLUME[verb], "on,on" if mic else "off,off")
    left_level, right_level = levels
    loud, quiet = (left_level, right_level) if output == "builtInSpeaker" else (right_level, left_level)
    print(f"    {name}: switch {switch} volume {volume} capture {capture}; music (500 Hz) left {left_level:.0f}, right {right_level:.0f} "
          f"({loud / max(reference, 1):.2f}x on the {'left (Speaker)' if output == 'builtInSpeaker' else 'right (Earpiece)'})")
    if (switch, volume, capture) != expected:
        raise Failure(f"UCM {name}: the controls are switch {switch}, volume {volume}, capture {capture}; expected {verb} with "
                      f"{'Speaker' if output == 'builtInSpeaker' else 'Earpiece'}{' and Mic' if mic else ''}: switch {expected[0]}, "
                      f"volume {expected[1]}, capture {expected[2]}")
    if quiet > reference * 0.02:
        raise Failure(f"UCM {name}: the tone is on the other channel too ({quiet:.0f} against {reference:.0f}): both outputs sound")
    if not 0.75 * UCM_GAIN[verb] <= loud / max(reference, 1) <= 1.25 * UCM_GAIN[verb]:
        raise Failure(f"UCM {name}: the tone is at {loud / max(reference, 1):.2f}x on the expected channel, expected {UCM_GAIN[verb]} ({verb})")


def run_ucm(guest):
    """The UCM phase: the configuration by itself (alsaucm), then the daemon's call to the speaker
    and back. Returns the uids of the daemon's outputs from the HDA card's profile."""
    with phase("UCM configuration", 120):
        channels, marks, reports = ucm_capture(guest, (UcmConfigSpeaker, UcmConfigSpeakerEnd, UcmConfigEarpiece,
                                                       UcmConfigEarpieceEnd))
        speaker = ucm_levels(channels, marks, "config-speaker")
        reference = speaker[0]
        if reference < 100:
            raise Failure(f"UCM configuration: no tone on the left channel with HiFi and Speaker set by alsaucm (level {reference:.0f})")
        ucm_check_step("alsaucm HiFi + Speaker", reports[UcmConfigSpeaker], speaker, reference, "HiFi", "builtInSpeaker", False)
        ucm_check_step("alsaucm Voice Call + Earpiece + Mic", reports[UcmConfigEarpiece], ucm_levels(channels, marks, "config-earpiece"),
                       reference, "Voice Call", "builtInReceiver", True)
    with phase("UCM call", 480):
        # The daemon with --ucm-root answers (ucm-ports), or the guest fails naming why.
        ports = UcmPorts.wait(guest, 240).ports
        kinds = sorted((p.get("type"), p.get("uid")) for p in ports if usable_output(p))
        print(f"    outputs with UCM: {kinds}")
        if not {"builtInSpeaker", "builtInReceiver"} <= {k for k, _ in kinds}:
            raise Failure(f"UCM: the daemon's outputs are {kinds}: no speaker and earpiece from the card's UCM configuration")
        events = [e for step, *_ in UCM_STEPS for e in STEP_EVENTS[step]]
        # The mic's mute comes between the call and its return.
        resumed = events.index(STEP_EVENTS["resumed"][0])
        channels, marks, reports = ucm_capture(guest, events[:resumed] + [UcmMicMuted, UcmMicUnmuted] + events[resumed:])
        check_ucm_mic_mute(reports[UcmMicMuted], reports[UcmMicUnmuted])
        music = ucm_levels(channels, marks, "music")
        reference = music[0]
        for step, verb, output, mic in UCM_STEPS:
            controls = reports[STEP_EVENTS[step][0]]
            route = controls.route()
            call = ucm_levels(channels, marks, step, CALL_HZ)
            print(f"    {step}: the route's outputs {route}; the call (900 Hz) left {call[0]:.0f}, right {call[1]:.0f}")
            if route != [output]:
                raise Failure(f"UCM {step}: the route's outputs are {route}, expected [{output}]")
            ucm_check_step(step, controls, ucm_levels(channels, marks, step), reference, verb, output, mic)
        # The built-in mic's second data source preferred during the call, then none again.
        check_ucm_data_source(UcmDataSource.wait(guest, 60), "Mic2")
        check_ucm_data_source(UcmDataSourceBack.wait(guest, 60), "Mic")
        # Never both outputs at once, in the file: frames with the tone on both channels. Frame by
        # frame, not by window: when the daemon switches within one of QEMU's audio ticks, the
        # left channel stops and the right one starts on the same frame, and a window holding
        # that frame has both (seen with a stand-in that never had both on).
        start, end = marks["ucm-music"], marks["ucm-ended-end"]
        threshold = reference * 0.05
        both = [i for i in range(start, min(end, len(channels[0]), len(channels[1])))
                if abs(channels[0][i]) > threshold and abs(channels[1][i]) > threshold]
        print(f"    frames with the tone on both channels, from the music step to the end: {len(both)}")
        if len(both) > 24:  # 0.5 ms: a state of both on shows as most of its frames
            raise Failure(f"UCM: the speaker and the earpiece both sounded, {len(both)} frames "
                          f"({len(both) * 1000 / RATE:.1f} ms; the first {(both[0] - start) / RATE:.2f} s after the music step)")
        if not UcmAlive.wait(guest, 30).alive:
            raise Failure("UCM: the music's player did not play through the call")
    return sorted(uid for _, uid in kinds)


# The USB card's profile on the bench (Tests/Fixtures/ucm2-bench/USB-Audio/QEMU): HiFi mutes the
# output and sets its volume to 128, which QEMU applies as 128/255 of the samples; the Headphones
# device unmutes it. The tone (write_tone) is at 16384.
UCM_USB_VOLUME = "128,128"
UCM_USB_GAIN = 128 / 255
TONE_LEVEL = 16384


def usb_controls(added):
    """The USB card's output switch and volume and the HDA card's Master switch, as `ucm-usb-added` says them."""
    return added.controls.get("usb-switch"), added.controls.get("usb-volume"), added.controls.get("switch")


def check_ucm_usb_port(added, hda_outputs, usb_uid):
    """A UCM USB cycle's ports with the card up (`ucm-usb-added`): the HDA card's profile's outputs and
    one USB port, the USB profile's Headphones, the same as before (`usb_uid`, when not None), the
    route's output. Returns its uid."""
    n, status = added.cycle, added.status
    outputs = [p for p in status.get("ports", []) if usable_output(p)]
    usb_ports = [p for p in outputs if p.get("uid") not in hda_outputs]
    route = [p.get("uid") for p in status.get("route", {}).get("outputs", [])]
    print(f"    the USB card's ports: {[(p.get('type'), p.get('uid'), p.get('alsa')) for p in usb_ports]}; the route {route}")
    if len(usb_ports) != 1 or sorted(p.get("uid") for p in outputs if p not in usb_ports) != hda_outputs:
        raise Failure(f"UCM USB cycle {n}: the outputs are {[p.get('uid') for p in outputs]}, expected {hda_outputs} and one USB port")
    port = usb_ports[0]
    # The profile's Headphones on its PlaybackPCM, hw:Audio,0, shared through dmix as every
    # card's; udev's classification would give a usbAudio port (uid .../output).
    if port.get("type") != "headphones" or port.get("alsa") != "dmix:CARD=Audio,DEV=0" or not port["uid"].endswith("/headphones"):
        raise Failure(f"UCM USB cycle {n}: the USB card's port is {port}: not the profile's Headphones (type headphones, "
                      f"uid .../headphones, alsa dmix:CARD=Audio,DEV=0)")
    if usb_uid is not None and port["uid"] != usb_uid:
        raise Failure(f"UCM USB cycle {n}: the re-added USB card's port is {port['uid']}, not {usb_uid} as before")
    usb_uid = port["uid"]
    if route != [usb_uid]:
        raise Failure(f"UCM USB cycle {n}: the route's outputs are {route}, expected [{usb_uid}]")
    return usb_uid


def check_ucm_usb_after(added, removed, processes, hda_outputs):
    """A UCM USB cycle's controls with the card up (the USB card's verb and device on, the HDA
    card's devices off), the outputs and the HDA card's switch after the removal, and one helper
    for both cards (`processes`: ucm-usb-memory's)."""
    n, controls = added.cycle, usb_controls(added)
    # The USB card's verb and device on; nothing of the route on the HDA card, so its devices off.
    if controls != ("on", UCM_USB_VOLUME, "off,off"):
        raise Failure(f"UCM USB cycle {n}: the USB card's switch and volume and the HDA card's switch are {controls}, "
                      f"expected ('on', '{UCM_USB_VOLUME}', 'off,off'): HiFi and Headphones on the USB card, no device on the HDA card")
    fields, after = removed.controls, removed.ports
    left_outputs = sorted(p.get("uid") for p in after if usable_output(p))
    if left_outputs != hda_outputs or fields.get("switch") != "on,off":
        raise Failure(f"UCM USB cycle {n}: after the removal the outputs are {left_outputs} and the HDA card's switch "
                      f"{fields.get('switch')}, expected {hda_outputs} and on,off (its Speaker again)")
    helpers = [name for name, _ in processes if name == "audioroute-ucm"]
    if len(helpers) != 1:
        raise Failure(f"UCM USB cycle {n}: {len(helpers)} audioroute-ucm processes with both cards up, expected one for both")


def run_ucm_usb_cycles(guest, cycles, hda_outputs):
    """The USB card as a UCM card (its bench profile), hot-plugged on the UCM phase's daemon with
    the HDA card's profile in the same helper: per cycle, the USB card's one port is the profile's
    headphones on its PCM, the route goes to it and the HDA card's devices go off, the tone is in
    the USB card's file at the level the profile's verb sets (only once its device is enabled), and
    after the removal the HDA card's speaker is back. Returns the moments for the timing and the
    daemon's and the helper's memory, read in the guest with both cards up."""
    files, adds, memory, usb_uid = guest.files, [], [], None
    for n in range(1, cycles + 1):
        with phase(f"UCM USB cycle {n}", 180):
            UcmUsbReady.wait(guest, 120, n)
            files.capture("usb")
            added_at = time.monotonic()
            plug_usb(guest)
            added = UcmUsbAdded.wait(guest, 120, n)
            onset = files.first_onset("usb", added_at)
            usb = left(files.take("usb"))
            memory.append(UcmUsbMemory.wait(guest, 30, n).processes)
            guest.command("device_del", id="usbcard")
            removed = UcmUsbRemoved.wait(guest, 120, n)
            usb_uid = check_ucm_usb_port(added, hda_outputs, usb_uid)
            controls = usb_controls(added)
            # The tone's level in 20 ms windows of the USB card's file: the verb's volume once the
            # device is on. Windows above 0.7 are frames played before the verb's volume was set.
            peaks = [max(abs(x) for x in usb[i:i + WINDOW]) for i in range(0, len(usb) - WINDOW + 1, WINDOW)]
            loud = [p for p in peaks if p > 1000]
            level = median(loud) / TONE_LEVEL if loud else 0.0
            early = sum(1 for p in loud if p > 0.7 * TONE_LEVEL)
            print(f"    USB card: switch {controls[0]}, volume {controls[1]}; the tone at {level:.2f} of its level over "
                  f"{len(loud) * WINDOW / RATE:.2f} s (the profile's volume: {UCM_USB_GAIN:.2f}), {early} windows above 0.7; "
                  f"HDA card: switch {controls[2]}")
            if len(loud) * WINDOW < RATE:
                raise Failure(f"UCM USB cycle {n}: the USB card's file has {len(loud) * WINDOW / RATE:.2f} s of the tone: "
                              f"the player did not follow the route, or the Headphones device was not enabled")
            if not 0.9 * UCM_USB_GAIN <= level <= 1.1 * UCM_USB_GAIN:
                raise Failure(f"UCM USB cycle {n}: the tone is at {level:.2f} of its level in the USB card's file, expected "
                              f"{UCM_USB_GAIN:.2f}, the volume the profile's HiFi sets")
            check_ucm_usb_after(added, removed, memory[-1], hda_outputs)
            adds.append((added_at, None if onset is None else files.guest_time(onset)))
    memory.append(UcmUsbMemoryEnd.wait(guest, 60).processes)
    return adds, memory


def print_memory(memory, lines):
    """The daemon's and the helper's memory with both cards up (the UCM USB cycles), MiB, after
    the first daemon's (udev's ports, no helper running) for comparison."""
    print("    the daemon and its UCM helper in the guest, MiB (the daemon's budget: 9 MiB of RSS):")
    print("    when                                          audiorouted VmRSS (anon, peak)   audioroute-ucm VmRSS (anon, peak)")
    firsts = [(when, event.find(lines)) for when, event in (("first daemon, udev's ports, at start", DaemonMemoryStart),
                                                             ("first daemon, after the player's cycles", DaemonMemory))]
    rows = [(when, report.processes) for when, report in firsts if report] \
        + [(f"UCM cards, cycle {n}, the USB card up", m) for n, m in enumerate(memory[:-1], 1)] \
        + [("UCM cards, after the last removal", memory[-1])]
    for when, processes in rows:
        cells = []
        for program in ("audiorouted", "audioroute-ucm"):
            values = next((v for name, v in processes if name == program), None)
            cells.append("-" if values is None else
                         f"{values['VmRSS'] / 1024:.2f} ({values['RssAnon'] / 1024:.2f}, {values['VmHWM'] / 1024:.2f})")
        print(f"    {when:<45} {cells[0]:<32} {cells[1]}")


def report_stock_ucm(lines):
    """What the first daemon's helper answered with the system's UCM tree (alsa-ucm-conf 1.2.8):
    the HDA card and each USB plug asked, every one without a profile, so udev's ports."""
    stock = StockUcm.find(lines)
    if stock is None or "No such file" in stock.listing:
        raise Failure(f"the guest lacks alsa-ucm-conf's tree (/usr/share/alsa/ucm2): {stock.report if stock else ''}")
    log = [l[len("log daemon "):] for l in lines if l.startswith("log daemon ")]
    started = sum(1 for l in log if "UCM helper started" in l)
    crashed = [l for l in log if "UCM helper ended" in l and "termination=signalled" in l]
    refused = {}
    for l in log:
        if "no UCM profile" in l and "card=" in l:
            card = l.split("card=")[1].split()[0]
            refused[card] = refused.get(card, 0) + 1
    print(f"    the first daemon (the system's UCM tree): the helper started {started} times; answers without a profile "
          f"{refused or 'none'}; ended by a signal {len(crashed)} times")
    for l in crashed:
        print(f"      {l[:200]}")


def check_ucm_controls(lines):
    """Every state of the card's controls while the daemon ran on UCM (guest-controls, read at
    each control event): never the Speaker and the Earpiece both on."""
    states = [l.split()[3:] for l in lines if l.startswith("log controls-ucm controls ")]
    both = [s for s in states if "switch=on,on" in s]  # s: the time (ns), then the controls
    print(f"    {len(states)} states of the controls, read at each control event: " + "; ".join(" ".join(s) for s in states[:40]))
    if not states:
        raise Failure("UCM: guest-controls recorded no state of the card's controls")
    if both:
        raise Failure(f"UCM: the controls had the Speaker and the Earpiece both on ({len(both)} of {len(states)} states)")
