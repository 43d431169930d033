// The player's output engine: a WAV file, a position, gains, and one open
// PCM. It writes a period at a time from the position and can move to another
// PCM mid-file without losing or repeating a frame (`reroute`). Not
// thread-safe: one thread drives it (the player's playback thread); a
// reroute asked for from elsewhere waits for the current period's write.
import AudioRouteCore
import AudioRouteMix

/// Where PCM names are looked up: libasound's global configuration (re-read
/// when its files change, as aplay does), or a private tree (tests, the demo).
public enum PCMConfigurationSource: ~Copyable {
    case system
    case custom(ALSAConfiguration)
    /// The system configuration plus these files, read again at every open:
    /// reopening `audioroute` after the daemon rewrote its route file lands
    /// on the new route (tests and the demo, whose bench devices are not in
    /// the user's configuration).
    case systemPlus(files: [String])

    /// Opens `name` for playback from this configuration.
    public borrowing func openPlayback(_ name: String) throws(ALSAError) -> PCM {
        switch self {
        case .system:
            return try PCM(name: name)
        case .custom(let configuration):
            return try PCM(name: name, configuration: configuration)
        case .systemPlus(let files):
            var configuration = try ALSAConfiguration.system()
            for file in files { try configuration.load(file: file) }
            return try PCM(name: name, configuration: configuration)
        }
    }
}

/// What a reroute did.
public struct RerouteReport: Sendable, Hashable {
    /// The PCM left and the PCM opened.
    public var from: String
    public var to: String
    /// Frames written to the old PCM but taken back before they played
    /// (snd_pcm_rewind): they are played on the new one.
    public var rewoundFrames: Int
    /// The first frame the new PCM gets.
    public var resumeFrame: Int
}

/// How `reroute` leaves the old PCM.
public enum RerouteStrategy: Sendable, Hashable {
    /// Take back what has not started playing (snd_pcm_rewind), play out the
    /// rest (snd_pcm_drain). The default: a short gap and an exact count.
    case rewindThenDrain
    /// Play out everything written (snd_pcm_drain): exact too, but the old
    /// device keeps playing for up to a buffer's length. For PCMs whose
    /// rewind is unreliable.
    case drain
}

/// Plays a `WAVFile` through an ALSA PCM, one period per `writeNextPeriod`.
///
/// The PCM is opened in the file's own sample format and rate, stereo (a mono
/// file goes to both sides), so that at unity gain the device gets the file's
/// bits; a `plug` PCM converts for the hardware.
public final class PlaybackEngine {
    /// What is played.
    public let file: WAVFile
    /// The PCM currently open.
    public private(set) var deviceName: String
    /// Volume and pan (and `OutputGains.gain`), applied to every period written from now on.
    public var gains: OutputGains = .unity
    /// The session's gain (`ar_mix_gain`: 1, the duck gain, 0 while silenced), applied to every
    /// period written from now on, after `gains`, by the code the ALSA plugin applies it with
    /// (AudioRouteMix's `ar_mix_apply`). At 0 the stream goes on, with the format's zero samples.
    public var sessionGain: Float = 1
    /// The next frame of `file` that has not been handed to a device (at a
    /// rate other than 1, the frame at or before the next output frame's
    /// source position; `sourcePosition` has the fraction).
    public private(set) var position: Int = 0
    /// Playback speed in source frames per output frame: finite and > 0 (a
    /// precondition; the player keeps it within 0.5…2). At 1 the device gets the file's frames as they are; at
    /// other rates they are resampled (`WAVFile.renderVarispeed`, linear
    /// interpolation: speed and pitch change together). Applies from the next
    /// period.
    public var rate: Double {
        get { step.rate }
        set { step = VarispeedStep(rate: newValue) }
    }
    /// Frames rendered and written per `writeNextPeriod`.
    public let periodFrames: Int
    /// The buffer latency asked of ALSA.
    public let latencyMicroseconds: Int
    /// How a reroute leaves the old PCM.
    public var rerouteStrategy: RerouteStrategy = .rewindThenDrain

    private let configuration: PCMConfigurationSource
    private var pcm: PCM?
    private var scratch: [UInt8] = []
    private var step = VarispeedStep.unity
    /// The fraction of `position` (0 at rate 1).
    private var fraction: UInt32 = 0
    /// The periods written to the open PCM that it may still give back
    /// (rewind), newest last: a rewind of n output frames is turned back into
    /// the source position of the first frame taken back, whatever the rates
    /// the periods were written at. Trimmed to the PCM's buffer.
    private var written: [(start: SourcePosition, step: VarispeedStep, frames: Int)] = []
    private var writtenFrames = 0
    private var bufferFrames = 0

    /// The ALSA sample format the PCM is opened with.
    public var pcmFormat: PCMFormat { PCMFormat(file.format.encoding) }

    /// Opens `device` for `file`. Throws libasound's error if the PCM cannot
    /// be opened or cannot take the file's format, rate and stereo.
    public init(
        file: WAVFile, device: String, configuration: consuming PCMConfigurationSource = .system,
        periodFrames: Int = 1024, latencyMicroseconds: Int = 100_000
    ) throws(ALSAError) {
        precondition(periodFrames > 0)
        self.file = file
        self.deviceName = device
        self.periodFrames = periodFrames
        self.latencyMicroseconds = latencyMicroseconds
        self.configuration = configuration
        self.pcm = try open(device)
    }

    private func open(_ device: String) throws(ALSAError) -> PCM {
        var pcm = try configuration.openPlayback(device)
        try pcm.configure(
            format: pcmFormat, channels: WAVFile.outputChannels, rate: file.format.sampleRate,
            latencyMicroseconds: latencyMicroseconds)
        // Nothing written to this PCM yet; more than it can rewind is never kept.
        forgetWritten()
        bufferFrames = pcm.bufferFrames ?? (2 * latencyMicroseconds * file.format.sampleRate / 1_000_000 + periodFrames)
        return pcm
    }

    /// Whether every frame has been written.
    public var isAtEnd: Bool { position >= file.frameCount }

    /// Whether a PCM is open (false after `close`).
    public var isOpen: Bool { pcm != nil }

    /// The source position of the next output frame, with its fraction.
    public var sourcePosition: SourcePosition { SourcePosition(frame: position, fraction: fraction) }

    /// Renders the next period (fewer at the end) with the current gains and
    /// writes it, blocking while the device's buffer is full. Returns the
    /// frames written: 0 at the end of the file.
    @discardableResult
    public func writeNextPeriod() throws(ALSAError) -> Int {
        guard position < file.frameCount else { return 0 }
        if pcm == nil { pcm = try open(deviceName) }
        if step.isUnity && fraction != 0 {
            // Back at rate 1 between two frames: to the nearest frame, so that
            // the device gets the file's own bytes again (at most half a frame
            // skipped or repeated, once).
            if fraction >= 1 << 31 { position += 1 }
            fraction = 0
            guard position < file.frameCount else { return 0 }
        }
        let start = sourcePosition
        scratch.removeAll(keepingCapacity: true)
        if step.isUnity {
            // The file's frames as they are (bytes copied at unity gain).
            let frames = min(periodFrames, file.frameCount - position)
            file.render(frames: position..<(position + frames), as: file.format.encoding, gains: gains, into: &scratch)
        } else {
            var end = start
            file.renderVarispeed(
                from: &end, step: step, maxFrames: periodFrames, as: file.format.encoding, gains: gains, into: &scratch)
        }
        if sessionGain != 1 {
            let (format, gain) = (file.format.encoding, sessionGain)
            scratch.withUnsafeMutableBytes { bytes in
                ar_mix_apply(format.mixFormat, bytes.baseAddress, bytes.count / format.bytesPerSample, gain)
            }
        }
        let frames = try pcm!.write(scratch)
        remember(start: start, frames: frames)
        move(to: start.advanced(by: frames, step: step))
        return frames
    }

    private func remember(start: SourcePosition, frames: Int) {
        written.append((start, step, frames))
        writtenFrames += frames
        while written.count > 1 && writtenFrames - written[0].frames >= bufferFrames {
            writtenFrames -= written.removeFirst().frames
        }
    }

    private func forgetWritten() {
        written.removeAll(keepingCapacity: true)
        writtenFrames = 0
    }

    /// Sets the position, past the end clamped to the end.
    private func move(to target: SourcePosition) {
        if target.frame >= file.frameCount {
            position = file.frameCount
            fraction = 0
        } else {
            position = target.frame
            fraction = target.fraction
        }
    }

    /// Moves the position back over the last `frames` output frames written:
    /// to the source position the first of them was rendered from.
    private func takeBack(_ frames: Int) {
        var left = frames
        while left > 0, let last = written.last {
            if left >= last.frames {
                move(to: last.start)
                left -= last.frames
                writtenFrames -= last.frames
                written.removeLast()
            } else {
                move(to: last.start.advanced(by: last.frames - left, step: last.step))
                written[written.count - 1].frames -= left
                writtenFrames -= left
                left = 0
            }
        }
        // Not reached (a PCM rewinds at most its buffer, which `written` covers); at rate 1 this is exact.
        if left > 0 { move(to: SourcePosition(frame: max(0, position - left))) }
    }

    /// Moves playback to `device`, continuing from exactly the next frame the
    /// old device would have played.
    ///
    /// Frames the old PCM has not started playing are taken back
    /// (snd_pcm_rewind); the rest, already committed to the device, are
    /// played out (snd_pcm_drain) rather than dropped, so the count is exact:
    /// what the old device played is `position - rewound`, and the new device
    /// starts there. Dropping would be faster but loses the frames in flight,
    /// and `snd_pcm_delay` is only an estimate that moves while it is read.
    /// If the old PCM is gone (drain fails), it is closed anyway: what it had
    /// not played is lost with it. Throws if the new PCM cannot be opened; the
    /// engine is then closed, with `position` at the frame to resume from.
    @discardableResult
    public func reroute(to device: String) throws(ALSAError) -> RerouteReport {
        let from = deviceName
        let rewound = pause()
        deviceName = device
        pcm = try open(device)
        return RerouteReport(from: from, to: device, rewoundFrames: rewound, resumeFrame: position)
    }

    /// Leaves the PCM the way `reroute` does (rewind what has not started
    /// playing, drain the rest, close), so that `position` is exactly the next
    /// frame the device did not play: the next `writeNextPeriod` reopens
    /// `deviceName` and continues there. Returns the frames taken back.
    @discardableResult
    public func pause() -> Int {
        guard pcm != nil else { return 0 }
        let rewound = rerouteStrategy == .rewindThenDrain ? pcm!.rewindAll() : 0
        try? pcm!.drain()
        pcm = nil
        takeBack(rewound)
        forgetWritten()
        return rewound
    }

    /// Plays out what was written (snd_pcm_drain) and readies the PCM for more.
    public func drain() throws(ALSAError) {
        if pcm != nil {
            try pcm!.drain()
            try pcm!.prepare()
        }
        forgetWritten()
    }

    /// Stops at once and closes the PCM; the next `writeNextPeriod` reopens
    /// `deviceName`. Frames written and not yet played are lost: `position`
    /// does not move back (use `reroute` to keep them).
    public func close() {
        if pcm != nil { try? pcm!.drop() }
        pcm = nil
        forgetWritten()
    }

    /// Sets the next frame to write (clamped to the file), discarding what the
    /// device had not played yet.
    public func seek(to frame: Int) throws(ALSAError) {
        if pcm != nil {
            try pcm!.drop()
            // A dropped PCM must be prepared before it takes frames again.
            try pcm!.prepare()
        }
        position = max(0, min(frame, file.frameCount))
        fraction = 0
        forgetWritten()
    }
}

extension SampleEncoding {
    /// The shared mix code's name for this encoding.
    var mixFormat: ar_mix_format {
        switch self {
        case .unsigned8: AR_MIX_U8
        case .signed16: AR_MIX_S16_LE
        case .signed24: AR_MIX_S24_3LE
        case .signed32: AR_MIX_S32_LE
        case .float32: AR_MIX_FLOAT_LE
        case .float64: AR_MIX_FLOAT64_LE
        }
    }
}
