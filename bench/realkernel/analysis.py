"""Audio analysis on the cards' files and the recordings: the signal's runs (locate), tones' levels
(Goertzel), where a timeline breaks, a move's frames, a recording against the mic's signal."""
import array, math

from .common import Failure
from .signals import RATE, SEQUENCE_PERIOD, SIGNAL_LEVEL, WINDOW


def left(data):
    """The left channel of S16 stereo frames (the cards' files; the guest plays mono, copied to both)."""
    samples = array.array("h", bytes(data[:len(data) - len(data) % 4]))
    return samples[0::2]


def locate(samples, bits, threshold=300, misses=None):
    """The runs of the sequence in `samples`: (index in samples, place in the sequence, frames),
    each run as long as the samples continue the sequence without a break; silence and anything
    else ends a run. Runs shorter than 32 frames are not placed. With `misses`, the search stops
    after that many windows of loud samples found nowhere in the sequence (each costs a search
    of the whole sequence: a recording of foreign data would take hours)."""
    marks = bytes(1 if x > threshold else 0 if x < -threshold else 2 for x in samples)
    runs, i, n = [], 0, len(marks)
    while i + 32 <= n:
        window = marks[i:i + 32]
        if 2 in window:
            i += window.rindex(2) + 1
            continue
        place = bits.find(window)
        if place < 0:
            if misses is not None:
                misses -= 1
                if misses < 0:
                    break
            i += 1
            continue
        j = i + 32
        # Compare in blocks; the first block that differs is walked frame by frame.
        while j < n:
            block = min(4096, n - j, SEQUENCE_PERIOD - (place + j - i))
            if block <= 0:
                break
            if marks[j:j + block] == bits[place + j - i:place + j - i + block]:
                j += block
                continue
            while marks[j] == bits[place + j - i]:
                j += 1
            break
        runs.append((i, place, j - i))
        i = j
    return runs


def goertzel(samples, start, end, frequency):
    """The tone's amplitude in each 20 ms window of samples[start:end]."""
    coefficient = 2 * math.cos(2 * math.pi * frequency / RATE)
    levels = []
    for w in range(max(0, start), min(end, len(samples)) - WINDOW + 1, WINDOW):
        s1 = s2 = 0.0
        for x in samples[w:w + WINDOW]:
            s1, s2 = x + coefficient * s1 - s2, s1
        levels.append(2 * math.sqrt(max(0.0, s1 * s1 + s2 * s2 - coefficient * s1 * s2)) / WINDOW)
    return levels


def tone_frequency(samples, rate=RATE, threshold=1000):
    """The frequency of the tone in `samples` (one channel) and the seconds it lasts: its rising zero
    crossings from the first loud sample (above `threshold`) to the last, counted against `rate`
    (the card's file's). (0.0, 0.0) without two crossings."""
    loud = [i for i in (next((i for i, x in enumerate(samples) if abs(x) > threshold), None),
                        next((i for i in range(len(samples) - 1, -1, -1) if abs(samples[i]) > threshold), None)) if i is not None]
    if len(loud) < 2:
        return 0.0, 0.0
    crossings = [i for i in range(loud[0] + 1, loud[1] + 1) if samples[i - 1] < 0 <= samples[i]]
    if len(crossings) < 2:
        return 0.0, 0.0
    return (len(crossings) - 1) * rate / (crossings[-1] - crossings[0]), (loud[1] - loud[0]) / rate


def signed_frames(difference):
    """A difference of places in the sequence, taken the short way round."""
    difference %= SEQUENCE_PERIOD
    return difference - SEQUENCE_PERIOD if difference > SEQUENCE_PERIOD // 2 else difference


def timeline_breaks(runs):
    """Where a card's runs of the signal break while it plays: (jumps, glitches). A glitch keeps the
    card's timeline: the frames in the file between two runs are as many as the signal skipped (an
    underrun under dmix, whose late frames are lost in place, or QEMU's isochronous path under TCG),
    up to 10 ms. A jump is a skip or a repeat that moves the timeline."""
    jumps, glitches = [], []
    for a, b in zip(runs, runs[1:]):
        jump, gap = signed_frames(b[1] - (a[1] + a[2])), b[0] - (a[0] + a[2])
        if jump == gap and 0 < jump <= RATE // 100:
            glitches.append(jump)
        elif jump != 0:
            jumps.append(jump)
    return jumps, glitches


def frames_at_move(before, after, on_usb, cycle, client):
    """A move's frames, from the signal's runs in the old card's file (before the add, and after it:
    its last 4 KiB may reach the file only when the card plays again) and in the new card's: the
    first place the new card played, the place after the last one the old card played before it,
    and the frames lost (+) or played twice (-) between them."""
    first = on_usb[0][1]
    # A client that started over plays frame 0 again: its first frames on the new card would come
    # before everything the old one played.
    if first < RATE // 2:
        raise Failure(f"{cycle}: the USB card's signal starts at frame {first} of the file: {client} started over")
    last = max(r[1] + r[2] for r in before + after if r[1] < first)
    return first, last, signed_frames(first - last)


def levels_between(samples, marks, start, end, frequency, trim=0.25):
    """The tone's levels in the windows between two reports (their places in the capture),
    trimmed at both ends: a report and the file's data reach the host up to tens of ms apart."""
    return goertzel(samples, marks[start] + int(trim * RATE), marks[end] - int(trim * RATE), frequency)


def heard(samples, start, end, frequency):
    """A tone's loudest level between two places, and the windows where it is at half that."""
    levels = goertzel(samples, start, end, frequency)
    loud = max(levels or [0])
    return loud, [i for i, level in enumerate(levels) if level > max(loud / 2, 50)]


def check_recording(data, bits, what):
    """A recording (S16 stereo frames) against the mic's signal: silence allowed before the
    signal starts (the stated start), then every frame the next one of the sequence, on both
    channels, at the signal's level. Returns (summary, faults, first place, place after the last)."""
    samples = array.array("h", bytes(data[:len(data) - len(data) % 4]))
    left_, right_ = samples[0::2], samples[1::2]
    frames = len(left_)
    start = 0
    while start < frames and left_[start] == 0 and right_[start] == 0:
        start += 1
    # A clean recording has no miss; 200 cost about 2 s of searching, and fail it: what is not
    # searched counts as junk.
    runs = [(i + start, place, n) for i, place, n in locate(left_[start:], bits, misses=200)]
    placed = sum(n for _, _, n in runs)
    lost = repeated = 0
    for a, b in zip(runs, runs[1:]):
        jump = signed_frames(b[1] - (a[1] + a[2]))
        lost, repeated = lost + max(jump, 0), repeated + max(-jump, 0)
    junk = frames - start - placed
    zeros = sum(1 for i in range(start, frames) if left_[i] == 0 and right_[i] == 0)
    # Both channels the file's value, exactly: QEMU's mixing engine is off for the mic (mic_argv).
    off_level = sum(1 for i, _, n in runs for k in range(i, i + n)
                    if right_[k] != left_[k] or abs(left_[k]) != SIGNAL_LEVEL)
    faults = []
    if not runs:
        faults.append(f"{what}: none of its {frames} frames is the mic's signal")
    else:
        if runs[0][0] != start:
            faults.append(f"{what}: {runs[0][0] - start} frames of foreign data before the signal")
        if len(runs) > 1:
            faults.append(f"{what}: the signal breaks {len(runs) - 1} times: {lost} frames lost, {repeated} repeated "
                          f"({[(i, place, n) for i, place, n in runs[:6]]})")
        if junk:
            faults.append(f"{what}: {junk} frames after the start are not the signal ({zeros} of them zeros)")
        if off_level:
            faults.append(f"{what}: {off_level} frames of the signal differ between channels or from the level {SIGNAL_LEVEL}")
        if start > RATE:
            faults.append(f"{what}: {start} frames of silence before the signal, more than 1 s")
    first = runs[0][1] if runs else None
    end = runs[-1][1] + runs[-1][2] if runs else None
    summary = (f"{frames} frames ({frames / RATE:.2f} s): {start} frames of silence first, then {placed} located "
               f"(places {first}..{end}), lost {lost}, repeated {repeated}, junk {junk} ({zeros} zeros), "
               f"off level {off_level}")
    return summary, faults, first, end
