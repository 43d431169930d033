// The player's output engine: a WAV file, a position, gains, and one open
// PCM. It writes a period at a time from the position and can move to another
// PCM mid-file without losing or repeating a frame (`reroute`). Not
// thread-safe: one thread drives it (the player's playback thread); a
// reroute asked for from elsewhere waits for the current period's write.
import AudioRouteCore

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
    /// Volume, pan and ducking gain, applied to every period written from now on.
    public var gains: OutputGains = .unity
    /// The next frame of `file` that has not been handed to a device.
    public private(set) var position: Int = 0
    /// Frames rendered and written per `writeNextPeriod`.
    public let periodFrames: Int
    /// The buffer latency asked of ALSA.
    public let latencyMicroseconds: Int
    /// How a reroute leaves the old PCM.
    public var rerouteStrategy: RerouteStrategy = .rewindThenDrain

    private let configuration: PCMConfigurationSource
    private var pcm: PCM?
    private var scratch: [UInt8] = []

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
        return pcm
    }

    /// Whether every frame has been written.
    public var isAtEnd: Bool { position >= file.frameCount }

    /// Whether a PCM is open (false after `close`).
    public var isOpen: Bool { pcm != nil }

    /// Renders the next period (fewer at the end) with the current gains and
    /// writes it, blocking while the device's buffer is full. Returns the
    /// frames written: 0 at the end of the file.
    @discardableResult
    public func writeNextPeriod() throws(ALSAError) -> Int {
        let frames = min(periodFrames, file.frameCount - position)
        guard frames > 0 else { return 0 }
        if pcm == nil { pcm = try open(deviceName) }
        scratch.removeAll(keepingCapacity: true)
        file.render(frames: position..<(position + frames), as: file.format.encoding, gains: gains, into: &scratch)
        let written = try pcm!.write(scratch)
        position += written
        return written
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
        position -= rewound
        return rewound
    }

    /// Plays out what was written (snd_pcm_drain) and readies the PCM for more.
    public func drain() throws(ALSAError) {
        if pcm != nil {
            try pcm!.drain()
            try pcm!.prepare()
        }
    }

    /// Stops at once and closes the PCM; the next `writeNextPeriod` reopens
    /// `deviceName`. Frames written and not yet played are lost: `position`
    /// does not move back (use `reroute` to keep them).
    public func close() {
        if pcm != nil { try? pcm!.drop() }
        pcm = nil
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
    }
}
