// An AVAudioPlayer-like player on the route's ALSA device, of any file libsndfile decodes. Playback runs
// on its own thread (a blocking ALSA write per period must not hold a task of
// the cooperative pool); every command takes the same lock as the thread's
// write, so commands land between periods.
import AudioRouteCore
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteIPC
import AudioRouteALSA
import AudioRouteDecoding
import AudioRouteMix
import Logging
import Synchronization

/// Why a player could not load its file or play it.
public enum AudioPlayerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file is missing, unreadable, not decodable, has a channel count or rate the player
    /// does not play, or failed to decode while playing (truncated).
    case file(AudioDecodeError)
    /// The output device could not be opened or written (libasound's error).
    case output(ALSAError)
    /// The playback thread could not be started.
    case thread(Errno)

    public var description: String {
        switch self {
        case .file(let error): error.description
        case .output(let error): error.description
        case .thread(let error): error.description
        }
    }
}

/// What a player's file is (AVAudioPlayer's `settings`, typed).
public struct AudioPlayerSettings: Sendable, Hashable {
    /// The container and codec, as libsndfile names them: "WAV (Signed 16 bit PCM)", "FLAC (Signed
    /// 24 bit PCM)", "MP3" (AVFormatIDKey).
    public var format: String
    /// Frames per second (AVSampleRateKey).
    public var sampleRate: Int
    /// The file's channels, 1…8 (AVNumberOfChannelsKey).
    public var numberOfChannels: Int
    /// Bits per sample where the format has them: linear PCM, integer or float, FLAC and ALAC;
    /// nil for lossy codecs (AVLinearPCMBitDepthKey).
    public var bitDepth: Int?
    /// Whether the samples are floating point (AVLinearPCMIsFloatKey).
    public var isFloat: Bool
}

/// What a player reports while it plays.
public enum AudioPlayerEvent: Sendable, Hashable {
    /// The file played to its end (after its loops), or playback failed (`successfully: false`).
    case finished(successfully: Bool)
    /// Playback stopped on an error (AVAudioPlayer's decode error; here: the output failed).
    case decodeError(AudioPlayerError)
    /// Playback moved to the route's new device (a route change), through the ALSA plugin's mover.
    case rerouted(RerouteReport)
    /// Playing started or stopped (user command, interruption, unplug, end).
    case playingChanged(Bool)
    /// An interruption of the followed session began (after the pause it caused, if any).
    case interruptionBegan
    /// The interruption ended with these options (before the resume it causes, if any).
    case interruptionEnded(InterruptionOptions)
}

/// Plays an audio file (any format libsndfile reads: WAV, AIFF, CAF, FLAC, Ogg Vorbis, Opus, MP3;
/// 1 to 8 channels, mapped onto stereo by `channelAssignments`) on the route's ALSA PCM (`audioroute_route`), following an
/// `AudioSession`'s route changes, interruptions, ducking and silencing (`follow(_:)`). It moves
/// with the ALSA plugin's own mover (docs/decisions.md, "One mover"): told of a route change by
/// its session, the stream goes on on the new device at the next period, none lost or repeated.
/// While it follows a session, `play()` (and a resume after an interruption) activates that
/// session first when it is inactive, as AVAudioPlayer's `play` activates the shared session.
public final class AudioPlayer: Sendable {
    /// The file's path ("data" for a player made from bytes).
    public let path: String
    /// The bytes played, for a player made with `init(data:)`.
    public let data: [UInt8]?
    /// The file as a `file://` URL: as given when it was one, else made from its absolute path;
    /// nil for a player made from data or from a relative path (AVAudioPlayer's `url`).
    public let url: String?
    /// The file as decoded: its format's name, channels, rate and frames.
    public let fileFormat: DecodedFormat
    /// The frames the engine plays (mono or stereo, `fileFormat`'s rate).
    private let sourceFormat: WAVFormat
    /// The PCM played to: the route file's `audioroute_route` (followed), or another name (not).
    public let deviceName: String
    /// The daemon's route file the player follows (`deviceName` is looked up in it), nil when it
    /// plays to a fixed PCM.
    public let routeFile: String?
    /// Configuration files read over the system's at every open, before the route file.
    public let configurationFiles: [String]
    /// Events, for one consumer.
    public let events: AsyncStream<AudioPlayerEvent>

    private let continuation: AsyncStream<AudioPlayerEvent>.Continuation
    /// The same events, for the delegate's task.
    private let delegateFeed: AsyncStream<AudioPlayerEvent>.Continuation
    private let delegateRef = Mutex(WeakDelegate())
    private let state: Mutex<State>
    /// Commands waiting for the lock: the playback thread, which takes it again
    /// right after each period, stands aside until they are through (a mutex is
    /// not fair: a caller could wait until the file ends).
    private let waiting = Atomic<Int>(0)
    private let periodFrames: Int
    private let latencyMicroseconds: Int
    private static let logger = Logger(label: "audioroute.player")

    private struct State {
        /// The decoder, read by the engine (one at a time).
        var source: any FrameSource
        var engine: PlaybackEngine?
        var policy = PlaybackPolicy()
        var volume: Double = 1
        var pan: Double = 0
        var numberOfLoops = 0
        var loopsLeft = 0
        var threadRunning = false
        var startFrame = 0
        /// Times the file was played to its end (loops and finishes), for `framesPlayed`.
        var completedPasses = 0
        var enableRate = false
        var keepsPitch = true
        var meteringEnabled = false
        /// A start `play(atTime:)` set, for an engine opened after it (CLOCK_MONOTONIC ns).
        var startTime: UInt64?
        /// The route's first output's port uid (`currentDevice`).
        var currentDevice: String?
        /// Route changes handled, so that a route read before one is not taken after it.
        var routeChanges = 0
        /// The levels `updateMeters` last read.
        var levels = MeterLevels.silent
        var rate: Double = 1
        /// `enableRate` as it was at the last `prepareToPlay` (AVAudioPlayer reads it there).
        var rateEnabled = false
        /// The device went away under a write (an unplug): playback waits for the route
        /// change that follows to say what to do.
        var held = false
        /// Requests to activate the session followed (`follow`); nil when none is.
        var activation: AsyncStream<Void>.Continuation?
        /// Which `follow` owns `activation` (the last one called).
        var following = 0
        /// Playing waits for the session's activation before its first period.
        var activating = false
        /// When the route's device was first found busy (CLOCK_MONOTONIC ns), while the open is
        /// tried again; nil when it is not.
        var busySince: UInt64?
    }

    /// How long a busy device is tried again, and how often: as the ALSA plugin does
    /// (AR_BUSY_WAIT_MS, AR_BUSY_RETRY_MS). What frees it is the tower's doing: the activation
    /// interrupts the session that holds it, or moves the route (a call from A2DP to HFP).
    static let busyWaitNanoseconds: UInt64 = 1_000_000_000
    static let busyRetryNanoseconds: UInt64 = 25_000_000

    /// Whether `error` is a busy device (EBUSY: another stream holds an exclusive device, such as
    /// BlueALSA's A2DP PCM).
    static func busy(_ error: ALSAError) -> Bool { error.code == -Errno.Code.deviceBusy.rawValue }

    /// A write error that means the device is going away (unplugged), not that the player
    /// failed: the kernel fails the stream's writes about 100 ms before udev and the daemon
    /// report the removal (measured on the real-kernel bench, docs/testing.md).
    /// The same rule as the ALSA plugin's (AudioRouteMix's `ar_is_device_gone`).
    static func deviceGone(_ error: ALSAError) -> Bool {
        ar_is_device_gone(error.code) != 0
    }

    /// The route file of the daemon on the session bus: the user's instance's
    /// (`$XDG_RUNTIME_DIR/audioroute/asound.conf`), else the system instance's
    /// (`/run/audioroute/asound.conf`), as the ALSA plugin finds it; nil if neither exists.
    public static var defaultRouteFile: String? { routeFile(for: .session) }

    /// The route file of the daemon on `bus` (RouteFileLocation): on the system bus, the system
    /// instance's. A player whose session is on the system bus must follow that daemon's route.
    public static func routeFile(for bus: AudioSession.Bus) -> String? {
        RouteFileLocation.forClient(
            systemBus: bus == .system, environment: Environment.variables, exists: { FileInfo.isReadable($0) })
    }

    /// Opens the file at `path` (a path, or a `file://` URL) for decoding; the device is opened
    /// by `prepareToPlay` or `play`. The file is read a window at a time while it plays.
    /// - Parameters:
    ///   - device: the ALSA PCM name. `audioroute_route` with a route file: the route's device,
    ///     followed as it changes; any other name, or no route file: that PCM, which does not move.
    ///   - routeFile: the daemon's route file (the session bus's daemon's by default).
    ///   - configurationFiles: ALSA files read over the system configuration at every open.
    public convenience init(
        contentsOf path: String, device: String = AlsaRouteConfig.outputPCM,
        routeFile: String? = AudioPlayer.defaultRouteFile, configurationFiles: [String] = [],
        periodFrames: Int = 1024, latencyMicroseconds: Int = 100_000
    ) throws(AudioPlayerError) {
        let decoder: SoundFileDecoder
        do { decoder = try SoundFileDecoder(contentsOf: path) } catch { throw .file(error) }
        try self.init(decoder: decoder, data: nil, url: path.hasPrefix("file://") ? path : FileURL.url(path: path), device: device, routeFile: routeFile, configurationFiles: configurationFiles,
                      periodFrames: periodFrames, latencyMicroseconds: latencyMicroseconds)
    }

    /// Decodes `data`, a whole file's bytes in any format `init(contentsOf:)` reads.
    public convenience init(
        data: [UInt8], device: String = AlsaRouteConfig.outputPCM,
        routeFile: String? = AudioPlayer.defaultRouteFile, configurationFiles: [String] = [],
        periodFrames: Int = 1024, latencyMicroseconds: Int = 100_000
    ) throws(AudioPlayerError) {
        let decoder: SoundFileDecoder
        do { decoder = try SoundFileDecoder(data: data) } catch { throw .file(error) }
        try self.init(decoder: decoder, data: data, url: nil, device: device, routeFile: routeFile, configurationFiles: configurationFiles,
                      periodFrames: periodFrames, latencyMicroseconds: latencyMicroseconds)
    }

    private init(
        decoder: sending SoundFileDecoder, data: [UInt8]?, url: String?, device: String, routeFile: String?, configurationFiles: [String],
        periodFrames: Int, latencyMicroseconds: Int
    ) throws(AudioPlayerError) {
        path = decoder.sourceName
        self.data = data
        self.url = url
        fileFormat = decoder.decodedFormat
        sourceFormat = decoder.format
        deviceName = device
        self.routeFile = device == AlsaRouteConfig.outputPCM ? routeFile : nil
        self.configurationFiles = configurationFiles
        self.periodFrames = periodFrames
        self.latencyMicroseconds = latencyMicroseconds
        (events, continuation) = AsyncStream.makeStream(of: AudioPlayerEvent.self, bufferingPolicy: .unbounded)
        state = Mutex(State(source: decoder))
        let (feed, delegateFeed) = AsyncStream.makeStream(of: AudioPlayerEvent.self, bufferingPolicy: .unbounded)
        self.delegateFeed = delegateFeed
        // Weak: the player's end finishes the feed, which ends the task.
        Task { [weak self] in
            for await event in feed {
                guard let self else { return }
                if let delegate = self.delegate { Self.deliver(event, from: self, to: delegate) }
            }
        }
    }

    deinit {
        continuation.finish()
        delegateFeed.finish()
    }

    /// Told of the player's end, errors and interruptions (AVAudioPlayer's `delegate`), held
    /// weakly; calls come from the player's own task, in order (`AudioPlayerDelegate`).
    public var delegate: (any AudioPlayerDelegate)? {
        get { delegateRef.withLock { $0.value } }
        set { delegateRef.withLock { $0.value = newValue } }
    }

    /// Hands `event` to the stream and to the delegate's task.
    private func emit(_ event: AudioPlayerEvent) {
        continuation.yield(event)
        delegateFeed.yield(event)
    }

    /// The file's length in seconds.
    public var duration: Double { Double(fileFormat.frameCount) / Double(fileFormat.sampleRate) }

    /// The file's channels (1…8).
    public var numberOfChannels: Int { fileFormat.channels }

    /// The file's format, rate, channels and bit depth.
    public var settings: AudioPlayerSettings {
        AudioPlayerSettings(
            format: fileFormat.name, sampleRate: fileFormat.sampleRate, numberOfChannels: fileFormat.channels,
            bitDepth: fileFormat.bitDepth, isFloat: fileFormat.isFloat)
    }

    /// The PCM the decoder hands the engine (AVAudioPlayer's `format`, its processing format): the
    /// file's own sample encoding and rate in mono or stereo for PCM and lossless files; 32-bit
    /// float stereo for lossy codecs and for files of more than two channels (after the downmix).
    /// The device is opened in this encoding and rate, stereo.
    public var format: WAVFormat { sourceFormat }

    /// The uid of the port the player plays to: the first output of its session's route, as the
    /// route's PCM plays to it (`follow(_:)` reads it, route changes update it); nil while it
    /// follows no session, and for a player on a fixed PCM.
    public var currentDevice: String? { withState { $0.currentDevice } }

    /// How the file's channels reach the output's left (0) and right (1): docs/player.md, "Channels".
    public var channelAssignments: [ChannelAssignment] { fileFormat.downmix.channelAssignments }

    /// Whether the player is playing.
    public var isPlaying: Bool { withState { $0.policy.isPlaying } }

    /// Whether playback is paused by an interruption that has not ended.
    public var isInterrupted: Bool { withState { $0.policy.isInterrupted } }

    /// The session gain now applied (0 while silenced, else 0.3 while ducked, else 1).
    public var sessionGain: Double { withState { $0.policy.gain } }

    /// Whether the session is silenced (silent mode on an ambient or soloAmbient session): the
    /// player goes on playing, with zero samples.
    public var isSilenced: Bool { withState { $0.policy.isSilenced } }

    /// The position in seconds of the file (source time: at `rate` 2 it
    /// advances two seconds per second played): the next frame written (ahead of what is heard
    /// by the device's buffer while playing; exact when paused). Setting it
    /// seeks, discarding what the device had not played.
    public var currentTime: Double {
        get {
            withState { s in (s.engine?.sourcePosition.frames ?? Double(s.startFrame)) / Double(fileFormat.sampleRate) }
        }
        set {
            let frame = max(0, min(Int(newValue * Double(fileFormat.sampleRate)), fileFormat.frameCount))
            withState { s in
                s.startFrame = frame
                try? s.engine?.seek(to: frame)
            }
        }
    }

    /// How far playback has advanced since the player was created, in frames of the
    /// file, across loops: the passes played to the file's end times its length, plus
    /// the position in the current pass (`currentTime`). Exact while paused; a seek
    /// moves it with the position. With `file` PCMs standing for devices, the frames
    /// in the files add up to this when none was lost or repeated (the demo checks it);
    /// at a `rate` other than 1 the devices get that many frames fewer or more.
    public var framesPlayed: Int {
        withState { s in s.completedPasses * fileFormat.frameCount + (s.engine?.position ?? s.startFrame) }
    }

    /// Volume 0…1: the target of a fade in progress (`setVolume(_:fadeDuration:)`). Setting it
    /// applies at once, ending a fade.
    public var volume: Double {
        get { withState { $0.volume } }
        set { setVolume(newValue, fadeDuration: 0) }
    }

    /// Sets the volume (0…1, clamped; NaN is 0) by a linear ramp in amplitude over `fadeDuration`
    /// seconds of output, a step per frame, from the volume now (mid-fade: where that fade is).
    /// 0, a negative or a non-finite duration sets it at once; so does any duration while no
    /// device is prepared (before `prepareToPlay`/`play`, after `stop`). A pause holds the fade
    /// where it is; it goes on when playing resumes.
    public func setVolume(_ volume: Double, fadeDuration: Double) {
        withState { s in
            s.volume = min(max(volume.isNaN ? 0 : volume, 0), 1)
            let frames = fadeDuration.isFinite && fadeDuration > 0 ? Int(min(fadeDuration, 86400) * Double(fileFormat.sampleRate)) : 0
            // The ramp starts from the engine's volume before `applyGains` sets the target.
            s.engine?.setVolume(s.volume, fadeFrames: frames)
            Self.applyGains(&s)
        }
    }

    /// Pan −1 (left) … 1 (right), a linear balance (docs/player.md).
    public var pan: Double {
        get { withState { $0.pan } }
        set { withState { s in s.pan = min(max(newValue.isNaN ? 0 : newValue, -1), 1); Self.applyGains(&s) } }
    }

    /// Times to play the file again after the first: 0 once, n more, negative forever.
    public var numberOfLoops: Int {
        get { withState { $0.numberOfLoops } }
        set { withState { s in s.numberOfLoops = newValue; s.loopsLeft = newValue } }
    }

    /// Whether `rate` applies (default false). As on AVAudioPlayer, set it
    /// before `prepareToPlay` or `play`: it is read when the device is
    /// prepared. Set later, it takes effect at the next preparation, after
    /// `stop()` (pausing keeps the preparation).
    public var enableRate: Bool {
        get { withState { $0.enableRate } }
        set { withState { s in s.enableRate = newValue } }
    }

    /// Whether `rate` keeps the pitch (default true, as AVAudioPlayer): a time-stretch
    /// (SoundTouch). False: a varispeed resampler, speed and pitch together like a tape.
    /// Read when the player is prepared, as `enableRate` is.
    public var keepsPitch: Bool {
        get { withState { $0.keepsPitch } }
        set { withState { s in s.keepsPitch = newValue } }
    }

    /// Playback rate, 0.5 (half speed) … 2 (double speed), default 1; values
    /// outside are clamped to the range, NaN is 1. The pitch is kept (`keepsPitch`,
    /// docs/player.md), or changes with the speed. Applies only when
    /// `enableRate` was true at `prepareToPlay`; otherwise it is kept and
    /// playback is at 1. A change while playing takes effect at the next period.
    public var rate: Double {
        get { withState { $0.rate } }
        set {
            withState { s in
                s.rate = newValue.isNaN ? 1 : min(max(newValue, 0.5), 2)
                Self.applyRate(&s)
            }
        }
    }

    /// Whether `updateMeters` measures (default false, as AVAudioPlayer). While false the levels
    /// read −160.
    public var isMeteringEnabled: Bool {
        get { withState { $0.meteringEnabled } }
        set {
            withState { s in
                s.meteringEnabled = newValue
                s.engine?.isMeteringEnabled = newValue
                if !newValue { s.levels = .silent }
            }
        }
    }

    /// Reads the levels of the frames written to the device since the last call (what is heard a
    /// buffer later, at most 100 ms through the route's mover): `averagePower` and `peakPower`
    /// report them until the next call. When none were written it keeps the last levels while
    /// playing (a call between two periods), and reads silence (−160) otherwise.
    public func updateMeters() {
        withState { s in
            guard s.meteringEnabled else { s.levels = .silent; return }
            if let levels = s.engine?.takeLevels() {
                s.levels = levels
            } else if !s.policy.isPlaying {
                s.levels = .silent
            }
        }
    }

    /// The RMS level in dBFS of `channel` (0 left, 1 right: the output's channels, after the
    /// downmix) at the last `updateMeters`: −3.01 for a full-scale sine, as AVAudioPlayer reports
    /// it, −160 for silence or a channel there is not.
    public func averagePower(forChannel channel: Int) -> Float {
        withState { s in Float(s.levels.average.indices.contains(channel) ? s.levels.average[channel] : MeterLevels.silence) }
    }

    /// The peak level in dBFS of `channel` at the last `updateMeters`: 0 for a full-scale sine,
    /// −160 for silence or a channel there is not.
    public func peakPower(forChannel channel: Int) -> Float {
        withState { s in Float(s.levels.peak.indices.contains(channel) ? s.levels.peak[channel] : MeterLevels.silence) }
    }

    /// Opens the device, ready to play. Called by `play` if needed.
    public func prepareToPlay() throws(AudioPlayerError) {
        try withState { (s: inout State) throws(AudioPlayerError) in try prepare(&s) }
    }

    /// Starts or resumes playing from `currentTime`. While the player follows a session
    /// (`follow`), the first period waits for that session to be activated if it is inactive
    /// (one D-Bus round trip when it is active); it plays anyway if the daemon cannot be reached.
    public func play() throws(AudioPlayerError) {
        try start(at: nil)
    }

    /// `play()`, its first frame heard at `time` (CLOCK_MONOTONIC ns) or at once (nil).
    private func start(at time: UInt64?) throws(AudioPlayerError) {
        try withState { (s: inout State) throws(AudioPlayerError) in
            // Set before the engine is prepared (it takes it then) and on one already prepared.
            s.startTime = time
            s.engine?.startTime = time
            do throws(AudioPlayerError) {
                try prepare(&s)
            } catch {
                // A busy device is opened by the playback thread, after the activation that play()
                // asks for, which may free it (the tower interrupts the stream that holds it, or
                // moves the route).
                guard case .output(let cause) = error, Self.busy(cause) else { throw error }
            }
            apply(s.policy.play(), to: &s)
        }
    }

    /// The clock `play(atTime:)` is given times on, in seconds: CLOCK_MONOTONIC, which every
    /// player shares and ALSA's delay is measured against. It runs whether or not anything
    /// plays (AVAudioPlayer's `deviceCurrentTime`).
    public var deviceCurrentTime: Double { Double(MonotonicClock.nanoseconds()) / 1e9 }

    /// Plays from `currentTime` with its first frame heard at `time` (on `deviceCurrentTime`'s
    /// clock): the engine writes silence first, as much as puts that frame at `time` behind what
    /// the device holds (frames written minus snd_pcm_delay). Two players given the same time
    /// start together, within the device's delay granularity (a period). A time already past
    /// plays at once, as `play()`. Returns true when playing was started (AVAudioPlayer's Bool);
    /// errors are `play()`'s.
    @discardableResult
    public func play(atTime time: Double) throws(AudioPlayerError) -> Bool {
        let target: UInt64? = time.isFinite && time > 0 && time < 1e9 ? UInt64(time * 1e9) : nil
        try start(at: target.flatMap { $0 > MonotonicClock.nanoseconds() ? $0 : nil })
        return isPlaying
    }

    /// Pauses; the device keeps exactly the frames it played, and `play` continues from the next.
    public func pause() {
        withState { s in apply(s.policy.pause(), to: &s) }
    }

    /// Stops and undoes `prepareToPlay` (closes the device, dropping what it
    /// had queued). Unlike AVAudioPlayer's `currentTime`, the position stays:
    /// the next `play` continues from it (set `currentTime = 0` to restart).
    public func stop() {
        withState { s in
            apply(s.policy.pause(), to: &s)
            if let engine = s.engine {
                s.startFrame = engine.position
                engine.close()
            }
            s.engine = nil
        }
    }

    /// Applies a session notification: reroute on a route change, pause on
    /// unplug, pause and maybe resume around an interruption (a resume activates the session
    /// as `play` does), duck, silence (`PlaybackPolicy`).
    public func handle(_ notification: AudioSessionNotification) {
        // Not under the lock, which waits for the period being written.
        guard PlaybackPolicy.reacts(to: notification) else { return }
        withState { s in
            if case .routeChange(let info) = notification, routeFile != nil {
                s.currentDevice = info.currentRoute.outputs.first?.uid
                s.routeChanges += 1
            }
            let wasInterrupted = s.policy.isInterrupted
            let actions = s.policy.handle(notification)
            // Told as AVAudioPlayer tells them: the begin after the pause, the end before the resume.
            if !wasInterrupted && s.policy.isInterrupted {
                apply(actions, to: &s)
                emit(.interruptionBegan)
            } else if wasInterrupted && !s.policy.isInterrupted, case .interruption(let info) = notification {
                emit(.interruptionEnded(info.options))
                apply(actions, to: &s)
            } else {
                apply(actions, to: &s)
            }
        }
    }

    /// Follows `session`'s notifications, and activates it when playing starts or resumes while
    /// it is inactive, until the returned task is cancelled or the session is closed.
    public func follow(_ session: AudioSession) async -> Task<Void, Never> {
        let stream = await session.notifications
        // Requests coalesce: one activation answers every play() made while it was on its way.
        let (requests, activation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let generation = withState { s in
            s.activation = activation
            s.following += 1
            // A request the previous follow had not answered is this one's now.
            if s.activating { activation.yield() }
            return s.following
        }
        let changesBefore = withState { $0.routeChanges }
        return Task { [self] in
            // Beside the notifications, so that a play() does not wait for this round trip.
            let initialRoute = Task { [self] in
                guard routeFile != nil, let route = try? await session.currentRoute else { return }
                // Unless a route change came first: it is newer than this reply.
                withState { s in
                    if s.routeChanges == changesBefore { s.currentDevice = route.outputs.first?.uid }
                }
            }
            defer { initialRoute.cancel() }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { for await notification in stream { self.handle(notification) } }
                group.addTask { for await _ in requests { await self.activate(session) } }
                // The session was closed (its notifications end) or the task was cancelled.
                _ = await group.next()
                group.cancelAll()
            }
            activation.finish()
            withState { s in
                guard s.following == generation else { return }
                s.activation = nil
                s.activating = false
                startIfNeeded(&s)
            }
        }
    }

    /// Activates `session` if it is inactive, then lets the playback thread start.
    private func activate(_ session: AudioSession) async {
        do throws(AudioSessionError) {
            let active = try await session.isActive
            if !active {
                // The daemon tells an inactive session nothing of ducking or silencing, and tells
                // it afresh once active: what the player had heard is stale.
                withState { s in apply(s.policy.sessionInactive(), to: &s) }
                try await session.setActive(true)
            }
        } catch {
            Self.logger.warning("audioroute: playing without activating the session: \(error)")
        }
        withState { s in
            s.activating = false
            startIfNeeded(&s)
        }
    }

    // MARK: - Inside the lock

    /// Takes the lock for a command, ahead of the playback thread's next period.
    private func withState<R: Sendable, E: Error>(_ body: (inout State) throws(E) -> R) throws(E) -> R {
        waiting.add(1, ordering: .sequentiallyConsistent)
        defer { waiting.subtract(1, ordering: .sequentiallyConsistent) }
        return try state.withLock { (s: inout State) throws(E) -> R in try body(&s) }
    }

    private func prepare(_ s: inout State) throws(AudioPlayerError) {
        guard s.engine == nil else { return }
        do {
            let configuration: PCMConfigurationSource =
                if let routeFile { .route(file: routeFile, configurationFiles: configurationFiles) } else { .systemPlus(files: configurationFiles) }
            let engine = try PlaybackEngine(
                source: s.source, device: deviceName, configuration: configuration,
                periodFrames: periodFrames, latencyMicroseconds: latencyMicroseconds)
            try engine.seek(to: s.startFrame)
            s.engine = engine
            s.rateEnabled = s.enableRate
            // The stretcher exists only where a rate can apply and keeps the pitch. SoundTouch
            // takes 8…192 kHz: a file outside plays varispeed (docs/player.md).
            engine.stretcher = s.rateEnabled && s.keepsPitch ? SoundTouchStretcher(sampleRate: fileFormat.sampleRate, rate: s.rate) : nil
            engine.isMeteringEnabled = s.meteringEnabled
            engine.startTime = s.startTime
            Self.applyGains(&s)
            Self.applyRate(&s)
        } catch { throw .output(error) }
    }

    private static func applyGains(_ s: inout State) {
        // The volume through `gains` is the target: a fade in progress in the engine goes on.
        s.engine?.gains = OutputGains(volume: s.volume, pan: s.pan)
        // The session's part in the shared mix code, as the ALSA plugin applies it.
        s.engine?.sessionGain = ar_mix_gain(s.policy.isDucked ? 1 : 0, s.policy.isSilenced ? 1 : 0)
    }

    /// Asks the session followed, if any, to be activated before the next period.
    private func requestActivation(_ s: inout State) {
        guard let activation = s.activation else { return }
        if case .terminated = activation.yield() { return }
        s.activating = true
    }

    /// Starts the playback thread if the player plays and nothing holds it.
    private func startIfNeeded(_ s: inout State) {
        guard s.policy.isPlaying, !s.threadRunning, !s.activating else { return }
        if let error = startThread() {
            fail(.thread(error), &s)
        } else {
            s.threadRunning = true
        }
    }

    private static func applyRate(_ s: inout State) {
        s.engine?.rate = s.rateEnabled ? s.rate : 1
    }

    private func apply(_ actions: [PlaybackAction], to s: inout State) {
        for action in actions {
            switch action {
            case .pause:
                s.held = false
                s.engine?.pause()
                emit(.playingChanged(false))
            case .resume:
                // play(), or the end of an interruption: both activate the session first.
                s.held = false
                emit(.playingChanged(true))
                requestActivation(&s)
                startIfNeeded(&s)
            case .reroute:
                if s.held {
                    // Held since the old device went away: play on, on the new route (the
                    // engine reopens the PCM, which reads the route file).
                    s.held = false
                    startIfNeeded(&s)
                    continue
                }
                // Playing: the plugin's mover moves at the next period. A paused engine is
                // closed, and opens the route as it is then on resume.
                s.engine?.routeChanged()
            case .setGain:
                Self.applyGains(&s)
            }
        }
    }

    private func fail(_ error: AudioPlayerError, _ s: inout State) {
        _ = s.policy.pause()
        s.engine?.close()
        emit(.decodeError(error))
        emit(.playingChanged(false))
        emit(.finished(successfully: false))
    }

    // MARK: - The playback thread

    private enum Step { case next, exit, retry }

    /// Whether to try a busy device again: for a second after it was first found busy.
    private static func tryAgain(_ s: inout State) -> Bool {
        let now = MonotonicClock.nanoseconds()
        if s.busySince == nil { s.busySince = now }
        return now - s.busySince! < busyWaitNanoseconds
    }

    /// One period, under the lock.
    private func step() -> Step {
        state.withLock { s -> Step in
            guard s.policy.isPlaying else {
                s.threadRunning = false
                return .exit
            }
            if s.engine == nil {
                do throws(AudioPlayerError) {
                    try prepare(&s)
                } catch {
                    if case .output(let cause) = error, Self.busy(cause), Self.tryAgain(&s) { return .retry }
                    fail(error, &s)
                    s.threadRunning = false
                    return .exit
                }
            }
            guard let engine = s.engine else {
                s.threadRunning = false
                return .exit
            }
            do throws(PlaybackEngineError) {
                let written = try engine.writeNextPeriod()
                s.busySince = nil
                if let move = engine.takeMove() { emit(.rerouted(move)) }
                if written > 0 { return .next }
                // The end of the file: play it out before looping or finishing.
                do throws(ALSAError) { try engine.drain() } catch { throw .output(error) }
                s.completedPasses += 1
                if s.loopsLeft != 0 {
                    if s.loopsLeft > 0 { s.loopsLeft -= 1 }
                    do throws(ALSAError) { try engine.seek(to: 0) } catch { throw .output(error) }
                    return .next
                }
                s.loopsLeft = s.numberOfLoops
                _ = s.policy.pause()
                engine.close()
                do throws(ALSAError) { try engine.seek(to: 0) } catch { throw .output(error) }
                s.startFrame = 0
                s.threadRunning = false
                emit(.playingChanged(false))
                emit(.finished(successfully: true))
                return .exit
            } catch .output(let error) where Self.busy(error) && Self.tryAgain(&s) {
                // Reopened (after a pause, or on a new route) while another stream holds it.
                return .retry
            } catch .output(let error) where Self.deviceGone(error) {
                // Unplugged under the write: hold (the position is kept) until the route
                // change says what to do: pause on oldDeviceUnavailable, play on a new route.
                engine.close()
                s.held = true
                s.threadRunning = false
                return .exit
            } catch {
                switch error {
                case .output(let error): fail(.output(error), &s)
                // A stream that fails or ends early (a truncated file): the delegate's decode error.
                case .decode(let error): fail(.file(.read(source: path, format: fileFormat.name, error)), &s)
                }
                s.threadRunning = false
                return .exit
            }
        }
    }

    /// Starts the thread (called under the lock; it waits for the lock before its first period).
    /// Nil when it started.
    private func startThread() -> Errno? {
        AudioRouteSystem.startThread { [self] in
            while true {
                switch step() {
                case .next: while waiting.load(ordering: .sequentiallyConsistent) > 0 { yieldThread() }
                case .retry: MonotonicClock.sleep(nanoseconds: Self.busyRetryNanoseconds)
                case .exit: return
                }
            }
        }.map { Errno(Errno.Code($0), "pthread_create", path: "player") }
    }
}
