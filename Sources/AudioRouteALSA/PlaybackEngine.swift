// The player's output engine: a frame source (a WAV file in memory, or a decoder streaming a
// file), a position, gains, and one open PCM. It writes a period at a time from the position,
// asking the source for that period's frames only. Following the route, the PCM is the ALSA
// plugin's mover (PCM(followingRoute:)): the engine tells it when the route changed and it moves
// at the next write, with the plugin's own rules (make before break, the old device played out,
// none lost or repeated). Not thread-safe: one thread drives it (the player's playback thread);
// a route change told from elsewhere waits for the current period's write.
import AudioRouteCore
import AudioRouteMix
import AudioRouteSystem

/// Where PCM names are looked up: libasound's global configuration (re-read
/// when its files change, as aplay does), or a private tree (tests, the demo).
public enum PCMConfigurationSource: ~Copyable {
    case system
    case custom(ALSAConfiguration)
    /// The system configuration plus these files, read again at every open: reopening
    /// a name defined in them lands on what they say now.
    case systemPlus(files: [String])
    /// The route: the PCM opened by name is the route file's definition of that name
    /// (`audioroute_route`), followed through the ALSA plugin's mover, which moves to the
    /// route's new device when told (`PlaybackEngine.routeChanged`). `configurationFiles` are
    /// read over the system's configuration before the route file (devices a test defines).
    case route(file: String, configurationFiles: [String] = [])

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
        case .route(let file, let configurationFiles):
            return try PCM(followingRoute: file, routePCM: name, configurationFiles: configurationFiles)
        }
    }
}

/// A move of a route-following engine to the route's new device.
public struct RerouteReport: Sendable, Hashable {
    /// The route's device left and the one moved to (`dmix:CARD=…`, `bluealsa:…`).
    public var from: String
    public var to: String
    /// Frames written again on the new device: what the old one had not played when it was
    /// dropped (a stream held, then moved). 0 when the old device played out what it held.
    public var replayedFrames: Int
    /// The first frame of the file the new device got after those.
    public var resumeFrame: Int

    public init(from: String, to: String, replayedFrames: Int, resumeFrame: Int) {
        (self.from, self.to, self.replayedFrames, self.resumeFrame) = (from, to, replayedFrames, resumeFrame)
    }
}

/// Why a period could not be written: the device failed, or the source could not decode it.
public enum PlaybackEngineError: Error, Sendable, Hashable, CustomStringConvertible {
    case output(ALSAError)
    case decode(FrameReadError)

    public var description: String {
        switch self {
        case .output(let error): error.description
        case .decode(let error): error.description
        }
    }
}

/// A volume ramp: linear in amplitude from `from` to `to` over `frames` output frames, a step
/// per frame (no steps per period to be heard as zipper noise).
public struct VolumeFade: Sendable, Hashable {
    public var from: Double
    public var to: Double
    /// The ramp's length in output frames (> 0).
    public var frames: Int
    /// Output frames of the ramp written so far.
    public var done = 0

    public init(from: Double, to: Double, frames: Int) {
        precondition(frames > 0)
        (self.from, self.to, self.frames) = (from, to, frames)
    }

    /// The volume of the `offset`-th frame from now (0: the next): frame n of the ramp (from 1)
    /// gets `from + (to − from)·n/frames`, so its last frame is `to` exactly.
    public func volume(at offset: Int) -> Double {
        let n = done + offset + 1
        return n >= frames ? to : from + (to - from) * Double(n) / Double(frames)
    }

    /// The volume of the last frame written (`from` before the first).
    public var current: Double { done == 0 ? from : volume(at: -1) }

    /// Whether every frame of the ramp was written.
    public var isDone: Bool { done >= frames }
}

/// Where a scheduled start is placed (`PlaybackEngine.startTime`): the next frame written plays
/// after what the device holds (snd_pcm_delay), so the silence to write first is the time to the
/// target in frames less that.
public enum StartSchedule {
    /// Frames of silence that put the frame written after them at `target` (CLOCK_MONOTONIC ns),
    /// the device holding `queued` frames at `now`; 0 when that is already too late.
    public static func silenceFrames(now: UInt64, target: UInt64, queued: Int, rate: Int) -> Int {
        guard target > now else { return 0 }
        // Double: a far target times the rate would overflow UInt64 nanoseconds; a day is enough.
        let ahead = (min(Double(target - now), 86_400e9) * Double(rate) / 1e9).rounded()
        return max(0, Int(ahead) - max(0, queued))
    }
}

/// Plays a `FrameSource` through an ALSA PCM, one period per `writeNextPeriod`.
///
/// The PCM is opened in the source's own sample format and rate, stereo (a mono
/// source goes to both sides), so that at unity gain the device gets the file's
/// bits; a `plug` PCM converts for the hardware.
public final class PlaybackEngine {
    /// What is played.
    public let source: any FrameSource
    /// The PCM currently open.
    public let deviceName: String
    /// Volume and pan (and `OutputGains.gain`), applied to every period written from now on.
    public var gains: OutputGains = .unity
    /// The session's gain (`ar_mix_gain`: 1, the duck gain, 0 while silenced), applied to every
    /// period written from now on, after `gains`, by the code the ALSA plugin applies it with
    /// (AudioRouteMix's `ar_mix_apply`). At 0 the stream goes on, with the format's zero samples.
    public var sessionGain: Float = 1
    /// A volume ramp in progress (`setVolume(_:fadeFrames:)`): it replaces `gains.volume` frame by
    /// frame until its end, where `gains.volume` is its `to`.
    public private(set) var fade: VolumeFade?
    /// When the next frame of the source is to be heard (CLOCK_MONOTONIC ns; nil: at once). The
    /// next `writeNextPeriod` measures the silence that puts it there, from the time left and
    /// what the device holds (`StartSchedule`), and the writes give it a period at a time, the
    /// last piece cut to the frame and followed by the source in the same write; the device's
    /// own clock then places that frame. Before each piece the silence is measured again and
    /// shortened if the writer fell behind (it lost the CPU, or the device ran dry). Setting it
    /// (nil too) cancels a lead-in not yet written.
    public var startTime: UInt64? {
        get { scheduledStart }
        set {
            scheduledStart = newValue
            silenceLeft = 0
            leadIn = false
        }
    }
    /// The target of a lead-in not yet written to its end (nil: none).
    private var scheduledStart: UInt64?
    /// Whether the lead-in for `scheduledStart` has been measured (it is then only shortened).
    private var leadIn = false
    /// Frames of silence still to write before the source's (from `startTime`).
    private var silenceLeft = 0
    /// The time-stretch rendered through at a rate other than 1, keeping the pitch (the player's
    /// SoundTouch); nil: varispeed (`renderVarispeed`, speed and pitch together). With one,
    /// `position` is the next source frame fed to it, ahead of the output by what it holds. Once
    /// used it stays the path until a seek, at rate 1 too (no jump over what it holds).
    public var stretcher: (any TimeStretcher)? {
        didSet { (stretcherEnded, stretcherInUse) = (false, false) }
    }
    /// The stretcher was given the source's last frames.
    private var stretcherEnded = false
    /// The stretcher holds frames of this pass: it stays the path, at rate 1 too, until a seek,
    /// so that a change to rate 1 neither skips nor repeats what it holds.
    private var stretcherInUse = false
    /// Whether the levels of what is written are measured (`takeLevels`).
    public var isMeteringEnabled = false
    private var meter = PlaybackMeter()
    /// The next frame of `file` that has not been handed to a device (at a
    /// rate other than 1, the frame at or before the next output frame's
    /// source position; `sourcePosition` has the fraction).
    public private(set) var position: Int = 0
    /// Playback speed in source frames per output frame: finite and > 0 (a
    /// precondition; the player keeps it within 0.5…2). At 1 the device gets the file's frames as they are; at
    /// other rates they are resampled (`PCMFrames.renderVarispeed`, linear
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
    private let configuration: PCMConfigurationSource
    private var pcm: PCM?
    private var scratch: [UInt8] = []
    private var step = VarispeedStep.unity
    /// The fraction of `position` (0 at rate 1).
    private var fraction: UInt32 = 0
    /// The last move of a route-following PCM, until `takeMove`.
    private var lastMove: RerouteReport?

    /// The encoding written: the file's, except 64-bit float, which goes as 32-bit float
    /// (the ALSA plugin's mover, like most devices, takes no FLOAT64).
    public var outputEncoding: SampleEncoding { source.format.encoding == .float64 ? .float32 : source.format.encoding }

    /// The ALSA sample format the PCM is opened with.
    public var pcmFormat: PCMFormat { PCMFormat(outputEncoding) }

    /// Opens `device` for `file`. Throws libasound's error if the PCM cannot
    /// be opened or cannot take the file's format, rate and stereo.
    public convenience init(
        file: WAVFile, device: String, configuration: consuming PCMConfigurationSource = .system,
        periodFrames: Int = 1024, latencyMicroseconds: Int = 100_000
    ) throws(ALSAError) {
        try self.init(
            source: file, device: device, configuration: configuration, periodFrames: periodFrames,
            latencyMicroseconds: latencyMicroseconds)
    }

    /// Opens `device` for `source`. Throws libasound's error if the PCM cannot
    /// be opened or cannot take the source's format, rate and stereo.
    public init(
        source: any FrameSource, device: String, configuration: consuming PCMConfigurationSource = .system,
        periodFrames: Int = 1024, latencyMicroseconds: Int = 100_000
    ) throws(ALSAError) {
        precondition(periodFrames > 0)
        self.source = source
        self.deviceName = device
        self.periodFrames = periodFrames
        self.latencyMicroseconds = latencyMicroseconds
        self.configuration = configuration
        self.pcm = try open(device)
    }

    private func open(_ device: String) throws(ALSAError) -> PCM {
        var pcm = try configuration.openPlayback(device)
        try pcm.configure(
            format: pcmFormat, channels: WAVFile.outputChannels, rate: source.format.sampleRate,
            latencyMicroseconds: latencyMicroseconds)
        return pcm
    }

    /// The volume of the last frame written: the ramp's where one is in progress, else `gains.volume`.
    public var currentVolume: Double { fade?.current ?? gains.volume }

    /// Sets the volume to `volume`, at once (`fadeFrames` 0) or by a linear ramp over `fadeFrames`
    /// output frames from the current volume (a ramp in progress is replaced from where it is).
    public func setVolume(_ volume: Double, fadeFrames: Int) {
        let start = currentVolume
        gains.volume = volume
        fade = fadeFrames > 0 && start != volume ? VolumeFade(from: start, to: volume, frames: fadeFrames) : nil
    }

    /// Whether every frame has been written.
    public var isAtEnd: Bool { position >= source.frameCount }

    /// Whether a PCM is open (false after `close`).
    public var isOpen: Bool { pcm != nil }

    /// The source position of the next output frame, with its fraction.
    public var sourcePosition: SourcePosition { SourcePosition(frame: position, fraction: fraction) }

    /// Renders the next period (fewer at the end) with the current gains and
    /// writes it, blocking while the device's buffer is full. Returns the
    /// frames written: 0 at the end of the source.
    @discardableResult
    public func writeNextPeriod() throws(PlaybackEngineError) -> Int {
        let total = source.frameCount
        // Through a stretcher, output remains after the source's last frame was fed.
        let stretching = stretcher != nil && (!step.isUnity || stretcherInUse)
        guard position < total || (stretching && stretcherEnded && stretcher!.available > 0) else { return 0 }
        if pcm == nil {
            do { pcm = try open(deviceName) } catch { throw .output(error) }
        }
        if let target = scheduledStart {
            let needed = StartSchedule.silenceFrames(
                now: MonotonicClock.nanoseconds(), target: target, queued: pcm!.delay() ?? 0, rate: source.format.sampleRate)
            if leadIn {
                // Measured again before every piece, and only ever shortened: a writer that lost
                // the CPU (or a stream that ran dry) after the first measure would otherwise start
                // late by as long, while a device that does not pace its writes (a `file` PCM over
                // null) would be fed silence until the wall clock reached the target if the
                // measure could also lengthen it.
                silenceLeft = min(silenceLeft, needed)
            } else {
                silenceLeft = needed
                leadIn = true
            }
            if silenceLeft == 0 {
                scheduledStart = nil
                leadIn = false
            }
        }
        if silenceLeft > periodFrames {
            try writeSilence(periodFrames)
            silenceLeft -= periodFrames
            return periodFrames
        }
        if silenceLeft > 0 {
            try writeSilence(silenceLeft)
            silenceLeft = 0
            scheduledStart = nil
            leadIn = false
        }
        if let stretcher, stretching {
            stretcherInUse = true
            return try writeStretched(stretcher)
        }
        if step.isUnity && fraction != 0 {
            // Back at rate 1 between two frames: to the nearest frame, so that
            // the device gets the file's own bytes again (at most half a frame
            // skipped or repeated, once).
            if fraction >= 1 << 31 { position += 1 }
            fraction = 0
            guard position < total else { return 0 }
        }
        let start = sourcePosition
        scratch.removeAll(keepingCapacity: true)
        // The source frames this period reads: at rate 1 a period's; at another rate up to the
        // frame after the last output frame's position (its interpolation partner), so that
        // only the source's real end stands in for a missing next frame.
        let last = (UInt64(start.fraction) + UInt64(periodFrames - 1) * step.raw) >> 32
        let needed = step.isUnity ? periodFrames : Int(min(last + 2, UInt64(total)))
        let window: PCMBuffer
        do { window = try source.frames(position..<min(total, position + needed)) } catch { throw .decode(error) }
        // During a ramp the volume is applied below, frame by frame.
        var rendering = gains
        if fade != nil { rendering.volume = 1 }
        if step.isUnity {
            // The source's frames as they are (bytes copied at unity gain).
            window.render(frames: 0..<window.frameCount, as: outputEncoding, gains: rendering, into: &scratch)
        } else {
            var end = SourcePosition(frame: 0, fraction: start.fraction)
            window.renderVarispeed(
                from: &end, step: step, maxFrames: periodFrames, as: outputEncoding, gains: rendering, into: &scratch)
        }
        if var ramp = fade { applyFade(&ramp) }
        if sessionGain != 1 {
            let (format, gain) = (outputEncoding, sessionGain)
            scratch.withUnsafeMutableBytes { bytes in
                ar_mix_apply(format.mixFormat, bytes.baseAddress, bytes.count / format.bytesPerSample, gain)
            }
        }
        let frames: Int
        do { frames = try pcm!.write(scratch) } catch { throw .output(error) }
        if isMeteringEnabled { meter.add(scratch, encoding: outputEncoding, sampleRate: source.format.sampleRate) }
        if let moved = pcm!.takeMove() {
            lastMove = RerouteReport(from: moved.from, to: moved.to, replayedFrames: moved.replayedFrames, resumeFrame: start.frame)
        }
        move(to: start.advanced(by: frames, step: step))
        return frames
    }

    /// A period through the time-stretch: source frames fed as it asks until it has a period
    /// (or the source ends), then that period rendered with the gains and written. 0 at the end.
    private func writeStretched(_ stretcher: any TimeStretcher) throws(PlaybackEngineError) -> Int {
        stretcher.setRate(step.rate)
        let total = source.frameCount
        while stretcher.available < periodFrames && stretcher.available >= 0 && !stretcherEnded {
            let count = min(max(stretcher.framesRequired, 256), total - position)
            var left: [Float] = [], right: [Float] = []
            if count > 0 {
                let window: PCMBuffer
                do { window = try source.frames(position..<(position + count)) } catch { throw .decode(error) }
                let stereo = window.format.channels == 2
                left.reserveCapacity(window.frameCount)
                right.reserveCapacity(window.frameCount)
                for frame in 0..<window.frameCount {
                    left.append(Float(window.sample(frame: frame, channel: 0)))
                    right.append(Float(window.sample(frame: frame, channel: stereo ? 1 : 0)))
                }
                position += window.frameCount
            }
            stretcherEnded = position >= total
            stretcher.process(left: left, right: right, final: stretcherEnded)
        }
        let (left, right) = stretcher.retrieve(maxFrames: periodFrames)
        guard !left.isEmpty else { return 0 }
        var floats: [UInt8] = []
        floats.reserveCapacity(left.count * 8)
        for index in left.indices {
            for value in [left[index], right[index]] {
                let bits = value.bitPattern
                floats += [UInt8(truncatingIfNeeded: bits), UInt8(truncatingIfNeeded: bits >> 8),
                           UInt8(truncatingIfNeeded: bits >> 16), UInt8(truncatingIfNeeded: bits >> 24)]
            }
        }
        let buffer = PCMBuffer(bytes: floats, format: WAVFormat(encoding: .float32, channels: 2, sampleRate: source.format.sampleRate), firstFrame: 0)
        scratch.removeAll(keepingCapacity: true)
        var rendering = gains
        if fade != nil { rendering.volume = 1 }
        buffer.render(frames: 0..<buffer.frameCount, as: outputEncoding, gains: rendering, into: &scratch)
        if var ramp = fade { applyFade(&ramp) }
        if sessionGain != 1 {
            let (format, gain) = (outputEncoding, sessionGain)
            scratch.withUnsafeMutableBytes { bytes in
                ar_mix_apply(format.mixFormat, bytes.baseAddress, bytes.count / format.bytesPerSample, gain)
            }
        }
        let frames: Int
        do { frames = try pcm!.write(scratch) } catch { throw .output(error) }
        if isMeteringEnabled { meter.add(scratch, encoding: outputEncoding, sampleRate: source.format.sampleRate) }
        if let moved = pcm!.takeMove() {
            lastMove = RerouteReport(from: moved.from, to: moved.to, replayedFrames: moved.replayedFrames, resumeFrame: position)
        }
        return frames
    }

    /// Writes `frames` frames of the output encoding's zero (0x80 for U8).
    private func writeSilence(_ frames: Int) throws(PlaybackEngineError) {
        let zero: UInt8 = outputEncoding == .unsigned8 ? 0x80 : 0
        let bytes = [UInt8](repeating: zero, count: frames * WAVFile.outputChannels * outputEncoding.bytesPerSample)
        do { _ = try pcm!.write(bytes) } catch { throw .output(error) }
    }

    /// Scales each rendered frame by the ramp's volume for it (the shared mix code's arithmetic,
    /// as for the session's gain), and moves the ramp on by the period's frames.
    private func applyFade(_ ramp: inout VolumeFade) {
        let format = outputEncoding
        let frameBytes = WAVFile.outputChannels * format.bytesPerSample
        let frames = scratch.count / frameBytes
        scratch.withUnsafeMutableBytes { bytes in
            for frame in 0..<frames {
                let volume = min(max(ramp.volume(at: frame), 0), 1)
                ar_mix_apply(format.mixFormat, bytes.baseAddress! + frame * frameBytes, WAVFile.outputChannels, Float(volume))
            }
        }
        ramp.done += frames
        fade = ramp.isDone ? nil : ramp
    }

    /// The levels of the frames written since the last call while metering was enabled (nil when
    /// none were), as the PCM got them: after volume, fade, downmix and the session's gain.
    public func takeLevels() -> MeterLevels? { meter.take() }

    /// The route changed: a route-following PCM moves to the route's device at the next write
    /// (a paused or closed engine opens the route as it is then). Nothing for another PCM.
    public func routeChanged() {
        pcm?.routeChanged()
    }

    /// The move the last writes made, once (nil when none since the last call).
    public func takeMove() -> RerouteReport? {
        defer { lastMove = nil }
        return lastMove
    }

    /// The route's device a route-following engine plays on now (nil while closed, or for another PCM).
    public var routeDevice: String? { pcm?.routeDevice }

    /// Sets the position, past the end clamped to the end.
    private func move(to target: SourcePosition) {
        if target.frame >= source.frameCount {
            position = source.frameCount
            fraction = 0
        } else {
            position = target.frame
            fraction = target.fraction
        }
    }

    /// Plays out what was written (snd_pcm_drain) and closes the PCM, so that `position` is
    /// exactly the next frame the device did not play: the next `writeNextPeriod` reopens
    /// `deviceName` (the route as it is then) and continues there. Through the plugin's mover
    /// the device holds at most 100 ms ahead, so a pause is heard within that.
    public func pause() {
        guard pcm != nil else { return }
        try? pcm!.drain()
        pcm = nil
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
    /// does not move back (use `pause` to keep them).
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
        position = max(0, min(frame, source.frameCount))
        fraction = 0
        stretcher?.reset()
        (stretcherEnded, stretcherInUse) = (false, false)
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
