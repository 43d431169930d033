"""What the guest plays, written on the host into its initramfs: the rate, the numbered signal
(a maximal-length sequence: any 32 frames name their place), the phases' tones, the surround streams."""
import array, math, wave


def write_tone(path, seconds, rate=48000, frequency=440.0):
    """A stereo 16-bit tone at half scale: what the guest plays."""
    samples = array.array("h")
    for n in range(rate * seconds):
        value = int(16384 * math.sin(2 * math.pi * frequency * n / rate))
        samples.append(value)
        samples.append(value)
    with wave.open(path, "wb") as out:
        out.setnchannels(2)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(samples.tobytes())


RATE = 48000
# The plugin cycles' signal: a maximal-length sequence (LFSR x^21 + x^19 + 1), one bit a frame,
# played as +/-SIGNAL_LEVEL. Any 32 frames in a row name their place in the sequence, whatever
# gain the cards' mixers apply, so the host can tell, frame by frame, what reached each card:
# frames lost or played twice at a move, a restarted stream (it would start over at 0).
SEQUENCE_DEGREE, SEQUENCE_TAP = 21, 19
SEQUENCE_PERIOD = (1 << SEQUENCE_DEGREE) - 1
SIGNAL_LEVEL = 24000
SIGNAL_SECONDS = 40  # under the period (43.7 s): every place in the file is unique
# The tones of the tower's phases: each on an exact bin of a 960-frame (20 ms) window.
MUSIC_HZ, PROMPT_HZ, AMBIENT_HZ, CALL_HZ = 500.0, 1250.0, 700.0, 900.0
WINDOW = 960


def sequence_bits():
    """The sequence as bytes of 0 and 1, its first SEQUENCE_PERIOD frames."""
    state, bits = 1, bytearray(SEQUENCE_PERIOD)
    for n in range(SEQUENCE_PERIOD):
        bit = state & 1
        bits[n] = bit
        feedback = bit ^ ((state >> (SEQUENCE_DEGREE - SEQUENCE_TAP)) & 1)
        state = (state >> 1) | (feedback << (SEQUENCE_DEGREE - 1))
    return bytes(bits)


# The surround phase's streams: each channel a tone of its own, on exact bins of the 960-frame
# window, so that the host tells, per channel of the card's file, which stream channel it carries.
SURROUND_HZ = (400.0, 600.0, 800.0, 1000.0, 1200.0, 1400.0)
SURROUND_STEREO_HZ = (MUSIC_HZ, PROMPT_HZ)
SURROUND_LEVEL = 8000
SURROUND_SECONDS = 3
# The sync phase's two players: a 1 kHz tone, one on the left, one on the right.
SYNC_HZ, SYNC_LEVEL, SYNC_SECONDS = 1000.0, 8000, 1


def write_channels(path, seconds, frequencies, level=SURROUND_LEVEL):
    """A 16-bit file of len(frequencies) channels, channel c a tone at frequencies[c]."""
    samples = array.array("h")
    for n in range(int(RATE * seconds)):
        for frequency in frequencies:
            samples.append(int(level * math.sin(2 * math.pi * frequency * n / RATE)))
    with wave.open(path, "wb") as out:
        out.setnchannels(len(frequencies))
        out.setsampwidth(2)
        out.setframerate(RATE)
        out.writeframes(samples.tobytes())


def write_mono(path, samples):
    with wave.open(path, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(RATE)
        out.writeframes(samples.tobytes())


def write_signal(path, bits):
    samples = array.array("h", (SIGNAL_LEVEL if b else -SIGNAL_LEVEL for b in bits[:RATE * SIGNAL_SECONDS]))
    write_mono(path, samples)


def write_mono_tone(path, seconds, frequency, level=10000):
    write_mono(path, array.array("h", (int(level * math.sin(2 * math.pi * frequency * n / RATE)) for n in range(int(RATE * seconds)))))


# The multiRoute phase's music: MUSIC_HZ at MULTIROUTE_TONE, with a marker every
# MULTIROUTE_MARK_EVERY seconds (from MULTIROUTE_MARK_AT): MULTIROUTE_MARK_FRAMES frames of the
# sequence at +/-SIGNAL_LEVEL from place MULTIROUTE_PLACES[k], which locate() places to the frame
# in either card's file (as a correlation peak would, without the cost). Raw mono S16, so that the
# guest repeats it into one stream for as long as the phase plays.
MULTIROUTE_FILE_SECONDS = 30
MULTIROUTE_TONE = 6000
MULTIROUTE_MARK_AT, MULTIROUTE_MARK_EVERY, MULTIROUTE_MARK_FRAMES = 1, 10, 4800
MULTIROUTE_PLACES = (100000, 400000, 700000)


def multiroute_marks():
    """The markers of one file: (frame, place in the sequence)."""
    return [((MULTIROUTE_MARK_AT + k * MULTIROUTE_MARK_EVERY) * RATE, place) for k, place in enumerate(MULTIROUTE_PLACES)]


def write_multiroute_music(path, bits):
    samples = array.array("h", (int(MULTIROUTE_TONE * math.sin(2 * math.pi * MUSIC_HZ * n / RATE))
                                for n in range(RATE * MULTIROUTE_FILE_SECONDS)))
    for frame, place in multiroute_marks():
        for n in range(MULTIROUTE_MARK_FRAMES):
            samples[frame + n] = SIGNAL_LEVEL if bits[place + n] else -SIGNAL_LEVEL
    with open(path, "wb") as f:
        f.write(samples.tobytes())
