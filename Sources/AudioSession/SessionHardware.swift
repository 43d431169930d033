// The session's answers about its route's hardware (AVAudioSession's sampleRate, ioBufferDuration,
// latencies, channel counts, outputVolume, inputGain, recordPermission): read in this process,
// from the devices the route file names, through libasound. The daemon, which never opens a
// device, is not asked (docs/decisions.md, "The session's hardware values").
import AudioRouteALSA
import AudioRouteCore
import AudioRouteIPC
import AudioRouteSystem
import Logging
import Synchronization

/// One channel of a port (AVAudioSessionChannelDescription).
public struct ChannelDescription: Sendable, Hashable, CustomStringConvertible {
    /// The port's name and the channel's position ("Speaker Front Left"), or its number where
    /// the device has no channel map ("Speaker 1").
    public var channelName: String
    /// 1-based, in the device's order.
    public var channelNumber: Int
    /// The uid of the port it belongs to.
    public var owningPortUID: String
    /// The channel map's position (`FL`, `FR`, `MONO`; snd_pcm_chmap_name), nil without a map.
    public var position: String?

    public init(channelName: String, channelNumber: Int, owningPortUID: String, position: String? = nil) {
        self.channelName = channelName
        self.channelNumber = channelNumber
        self.owningPortUID = owningPortUID
        self.position = position
    }

    public var description: String { "\(channelNumber): \(channelName)" }
}

/// Whether this user may record from the route's input (AVAudioSession.RecordPermission).
public enum RecordPermission: String, Sendable, Hashable {
    /// The route has no input device to try.
    case undetermined
    /// The input device cannot be opened by this user (its node's access: the audio group, a
    /// udev ACL, a seat).
    case denied
    /// The input device opens (or is busy with another stream, which this user could open too).
    case granted
}

extension RecordPermission {
    /// What a trial open's error (libasound's negative code) says: refused to this user
    /// (EACCES, EPERM) is `denied`; busy is `granted` (the kernel checks the node's access
    /// before it finds another stream on it); anything else (gone, undefined) is `undetermined`.
    init(trialOpenError code: Int32) {
        switch -code {
        case Errno.Code.permissionDenied.rawValue, Errno.Code.notPermitted.rawValue: self = .denied
        case Errno.Code.deviceBusy.rawValue: self = .granted
        default: self = .undetermined
        }
    }
}

/// The last volume `outputVolumeChanges` reported (the first read only sets it).
final class LastVolume: Sendable {
    private let state = Mutex<(value: Float?, started: Bool)>((nil, false))

    var value: Float? { state.withLock { $0.value } }

    /// Takes `volume`; true when it is to be reported: it differs from the last one, and it is
    /// not the first value (the observer asked for changes).
    func update(_ volume: Float) -> Bool {
        state.withLock { state in
            defer { state = (volume, true) }
            return state.started && state.value != volume
        }
    }
}

/// What the session keeps for the hardware's answers: the app's preferences, and each side's
/// last values (a busy device keeps them: docs/decisions.md).
struct SessionHardware: Sendable {
    var routeFile: String?
    var routeFileSet = false
    var configurationFiles: [String] = []
    var preferredSampleRate: Double = 0
    var preferredIOBufferDuration: Double = 0
    var preferredOutputChannels = 0
    var preferredInputChannels = 0
    var lastOutput: PCMHardware?
    var lastInput: PCMHardware?
    var lastOutputVolume: Float?

    func request(capture: Bool) -> PCMHardwareRequest {
        PCMHardwareRequest(
            rate: preferredSampleRate > 0 ? Int(preferredSampleRate.rounded()) : nil,
            periodMicroseconds: preferredIOBufferDuration > 0 ? Int((preferredIOBufferDuration * 1_000_000).rounded()) : nil,
            channels: capture ? (preferredInputChannels > 0 ? preferredInputChannels : nil) : (preferredOutputChannels > 0 ? preferredOutputChannels : nil))
    }

    /// The environment variable the ALSA plugin reads for its I/O buffer (ar_io_sizes).
    static let ioBufferVariable = "AUDIOROUTE_IO_BUFFER_DURATION"
    /// The variables the ALSA plugin reads for the format it runs the route's device at
    /// (AR_PREFERRED_*_VARIABLE, ar_preference): Hz, and each direction's channel count.
    static let sampleRateVariable = "AUDIOROUTE_PREFERRED_SAMPLE_RATE"
    static let outputChannelsVariable = "AUDIOROUTE_PREFERRED_OUTPUT_CHANNELS"
    static let inputChannelsVariable = "AUDIOROUTE_PREFERRED_INPUT_CHANNELS"
    /// The range of a preferred I/O buffer, the plugin's (AR_IO_PIECE_MIN_US ... AR_IO_PIECE_MAX_US).
    static let ioBufferRange = 0.001...0.1
    /// The range of a preferred sample rate.
    static let sampleRateRange = 8_000.0...768_000.0
}

extension AudioSession {
    // MARK: Where the hardware is read

    /// Reads the hardware from `routeFile` (over the system's ALSA configuration and
    /// `configurationFiles`) instead of the route file of this session's daemon
    /// (`AudioPlayer.routeFile(for:)`). For tests and integrators with their own configuration.
    public func setHardwareSource(routeFile: String?, configurationFiles: [String] = []) {
        hardware.routeFile = routeFile
        hardware.routeFileSet = true
        hardware.configurationFiles = configurationFiles
    }

    private var hardwareRouteFile: String? {
        hardware.routeFileSet ? hardware.routeFile : AudioPlayer.routeFile(for: bus)
    }

    /// The side's device as opened now with the preferences; its last values when it is busy;
    /// nil when the route has no such device or it cannot be read (logged).
    private func probe(capture: Bool) -> PCMHardware? {
        guard let routeFile = hardwareRouteFile else { return nil }
        let last = capture ? hardware.lastInput : hardware.lastOutput
        var device: String?
        do throws(ALSAError) {
            let devices = try RouteDevices(routeFile: routeFile, configurationFiles: hardware.configurationFiles)
            device = capture ? devices.input : devices.output
            guard let device else {
                remember(nil, capture: capture)
                return nil
            }
            let values = try PCMHardwareProbe.probe(
                device: device, stream: capture ? .capture : .playback, configuration: devices.configuration, request: hardware.request(capture: capture))
            remember(values, capture: capture)
            return values
        } catch {
            // Busy (another stream has an exclusive device): what it was last opened with here.
            if error.code == -Errno.Code.deviceBusy.rawValue, let last, last.device == device { return last }
            hardwareLogger.debug("audioroute: the route's \(capture ? "input" : "output") cannot be read: \(error)")
            return nil
        }
    }

    private func remember(_ values: PCMHardware?, capture: Bool) {
        if capture { hardware.lastInput = values } else { hardware.lastOutput = values }
    }

    private var hardwareLogger: Logger { Logger(label: "audioroute.session.hardware") }

    // MARK: Rate, I/O buffer, latency

    /// The route's hardware sample rate (its output's, else its input's) as the device opens
    /// with the preferences; 0 when the route has no device or it cannot be read.
    public var sampleRate: Double {
        guard let values = probe(capture: false) ?? probe(capture: true) else { return 0 }
        return Double(values.rate)
    }

    /// The rate asked for with `setPreferredSampleRate`; 0 when none was (as on iOS).
    public var preferredSampleRate: Double { hardware.preferredSampleRate }

    /// Asks for `rate` (8000...768000 Hz; 0 clears): the route's device runs at it for every
    /// `audioroute` stream this process opens from now on (the ALSA plugin's and the player's,
    /// through AUDIOROUTE_PREFERRED_SAMPLE_RATE), each stream converted to it. A device that
    /// cannot (dmix's fixed rate, a card without it) runs at the nearest it can: `sampleRate`
    /// says which.
    public func setPreferredSampleRate(_ rate: Double) throws(AudioSessionError) {
        guard rate == 0 || SessionHardware.sampleRateRange.contains(rate) else {
            throw .invalidArguments("preferred sample rate \(rate) is outside 8000...768000 Hz (0 clears it)")
        }
        try setPluginPreference(SessionHardware.sampleRateVariable, rate == 0 ? nil : Int(rate.rounded()))
        hardware.preferredSampleRate = rate
    }

    /// Sets (nil: removes) one of the plugin's variables in this process.
    private func setPluginPreference(_ variable: String, _ value: Int?) throws(AudioSessionError) {
        do {
            try Environment.set(variable, to: value.map { String($0) })
        } catch {
            throw .invalidArguments("cannot set \(variable): \(error)")
        }
    }

    /// The route's I/O buffer (its device's period) in seconds; 0 when it cannot be read.
    public var ioBufferDuration: Double { (probe(capture: false) ?? probe(capture: true))?.periodDuration ?? 0 }

    /// The I/O buffer asked for with `setPreferredIOBufferDuration`; 0 when none was.
    public var preferredIOBufferDuration: Double { hardware.preferredIOBufferDuration }

    /// Asks for an I/O buffer of `duration` seconds (0.001...0.1; 0 clears): the route's
    /// devices are read with periods near it, and the ALSA plugin's streams opened by this
    /// process from now on forward in pieces of it (AUDIOROUTE_IO_BUFFER_DURATION), ten ahead.
    public func setPreferredIOBufferDuration(_ duration: Double) throws(AudioSessionError) {
        guard duration == 0 || SessionHardware.ioBufferRange.contains(duration) else {
            throw .invalidArguments("preferred I/O buffer duration \(duration) s is outside 0.001...0.1 s (0 clears it)")
        }
        try setPluginPreference(SessionHardware.ioBufferVariable, duration == 0 ? nil : Int((duration * 1_000_000).rounded()))
        hardware.preferredIOBufferDuration = duration
    }

    /// The output's buffer in seconds: what a frame written to a full buffer waits before it is
    /// played. The converter's and the DAC's own delay are not known: not included. 0 without output.
    public var outputLatency: Double { probe(capture: false)?.bufferDuration ?? 0 }

    /// The input's buffer in seconds (see `outputLatency`); 0 without input.
    public var inputLatency: Double { probe(capture: true)?.bufferDuration ?? 0 }

    // MARK: Channels

    /// The output's channels as opened (stereo, or the preference, where the device takes it); 0 without output.
    public var outputNumberOfChannels: Int { probe(capture: false)?.channels ?? 0 }
    /// The input's channels as opened; 0 without input (as iOS when no input is available).
    public var inputNumberOfChannels: Int { probe(capture: true)?.channels ?? 0 }
    /// The most channels the output device takes; 0 without output.
    public var maximumOutputNumberOfChannels: Int { probe(capture: false)?.maximumChannels ?? 0 }
    /// The most channels the input device takes; 0 without input.
    public var maximumInputNumberOfChannels: Int { probe(capture: true)?.maximumChannels ?? 0 }

    /// The output channels asked for; 0 when none were.
    public var preferredOutputNumberOfChannels: Int { hardware.preferredOutputChannels }
    /// The input channels asked for; 0 when none were.
    public var preferredInputNumberOfChannels: Int { hardware.preferredInputChannels }

    /// Asks for `count` output channels (1 ... `maximumOutputNumberOfChannels`; 0 clears): the
    /// route's output device runs with them for every `audioroute` playback stream this process
    /// opens from now on (AUDIOROUTE_PREFERRED_OUTPUT_CHANNELS), where it takes them.
    public func setPreferredOutputNumberOfChannels(_ count: Int) throws(AudioSessionError) {
        try checkChannels(count, maximum: maximumOutputNumberOfChannels, side: "output")
        try setPluginPreference(SessionHardware.outputChannelsVariable, count == 0 ? nil : count)
        hardware.preferredOutputChannels = count
    }

    /// Asks for `count` input channels (1 ... `maximumInputNumberOfChannels`; 0 clears): the
    /// route's input device runs with them for every `audioroute` capture stream this process
    /// opens from now on (AUDIOROUTE_PREFERRED_INPUT_CHANNELS), where it takes them.
    public func setPreferredInputNumberOfChannels(_ count: Int) throws(AudioSessionError) {
        try checkChannels(count, maximum: maximumInputNumberOfChannels, side: "input")
        try setPluginPreference(SessionHardware.inputChannelsVariable, count == 0 ? nil : count)
        hardware.preferredInputChannels = count
    }

    private func checkChannels(_ count: Int, maximum: Int, side: String) throws(AudioSessionError) {
        guard count != 0 else { return }
        guard count >= 1, count <= maximum else {
            throw .invalidArguments("preferred \(side) channels \(count) are outside 1...\(maximum) (the route's \(side) takes \(maximum))")
        }
    }

    /// The channels of `port` (AVAudioSessionPortDescription.channels): its device opened with
    /// the preferences, one description per channel, named by the device's channel map. Empty
    /// when the port has no ALSA device or it cannot be read now (busy, gone).
    public func channels(of port: PortDescription) -> [ChannelDescription] {
        guard let device = port.alsa?.description, device != "null" else { return [] }
        let capture = port.direction.isInput
        let routeFile = hardwareRouteFile
        do throws(ALSAError) {
            var configuration = try ALSAConfiguration.system()
            for file in hardware.configurationFiles { try configuration.load(file: file) }
            if let routeFile { try configuration.load(file: routeFile) }
            let values = try PCMHardwareProbe.probe(
                device: device, stream: capture ? .capture : .playback, configuration: configuration, request: hardware.request(capture: capture))
            return (0..<values.channels).map { index in
                let position = index < values.channelPositions.count ? values.channelPositions[index] : nil
                let label = position.map { PCMHardwareProbe.longName(position: $0) } ?? String(index + 1)
                return ChannelDescription(channelName: "\(port.portName) \(label)", channelNumber: index + 1, owningPortUID: port.uid, position: position)
            }
        } catch {
            hardwareLogger.debug("audioroute: the channels of \(port.uid) cannot be read: \(error)")
            return []
        }
    }

    // MARK: Volume and gain

    /// The route's output volume, 0...1 on the perceptual scale alsamixer shows, from its card's
    /// playback volume (Master, PCM, Speaker, Headphone, else the card's first), or BlueALSA's
    /// volume of a Bluetooth device (its control plugin's `A2DP` or `SCO` element). 1 where the
    /// route's output has no control (nothing on the way attenuates it: a file, a user's PCM) and
    /// where nothing was ever read.
    public var outputVolume: Float {
        guard let (control, named) = routeControl(capture: false) else { return 1 }
        do throws(ALSAError) {
            let volume = try withMixer(control) { mixer throws(ALSAError) -> Float in
                guard let element = named ?? mixer.volumeElement(capture: false) else { return 1 }
                return try mixer.volume(element, capture: false)
            }
            hardware.lastOutputVolume = volume
            return volume
        } catch {
            hardwareLogger.debug("audioroute: the route's volume cannot be read: \(error)")
            return hardware.lastOutputVolume ?? 1
        }
    }

    /// `outputVolume`'s changes (AVAudioSession's key-value observation of it): each new value,
    /// from the control's own events (a volume key, `alsamixer`, the headset's buttons through
    /// BlueALSA), and after a route change whose new output is at another volume. Route changes
    /// come from the daemon: call `connect()` for them to flow. Ends when the iterating task is
    /// cancelled; while nothing changes, nothing runs (a thread waits in poll(2) on the control).
    public var outputVolumeChanges: AsyncStream<Float> {
        let (stream, continuation) = AsyncStream.makeStream(of: Float.self, bufferingPolicy: .bufferingNewest(8))
        let routes = notifications
        let last = LastVolume()
        let task = Task {
            var watch = startVolumeWatch(last, continuation)
            for await notification in routes {
                guard case .routeChange = notification else { continue }
                watch?.stop()
                watch = startVolumeWatch(last, continuation)
            }
            watch?.stop()
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Reads the route's volume (reported when it differs from the last one reported) and
    /// watches its control; nil when the route's output has none.
    private func startVolumeWatch(_ last: LastVolume, _ continuation: AsyncStream<Float>.Continuation) -> MixerVolumeWatch? {
        if last.update(outputVolume) { continuation.yield(last.value ?? 1) }
        guard let (control, element) = routeControl(capture: false) else { return nil }
        let files = hardware.configurationFiles + (hardwareRouteFile.map { [$0] } ?? [])
        do throws(ALSAError) {
            return try MixerVolumeWatch(control: control, element: element, capture: false, configurationFiles: files) { value in
                if last.update(value) { continuation.yield(value) }
            }
        } catch {
            hardwareLogger.debug("audioroute: the route's volume is not watched: \(error)")
            return nil
        }
    }

    /// The input's gain, 0...1 on the perceptual scale, from its card's capture volume; 1 where
    /// it has none (`isInputGainSettable` false).
    public var inputGain: Float {
        guard let (control, named) = routeControl(capture: true) else { return 1 }
        let gain = try? withMixer(control) { mixer throws(ALSAError) -> Float in
            guard let element = named ?? mixer.volumeElement(capture: true) else { return 1 }
            return try mixer.volume(element, capture: true)
        }
        return gain ?? 1
    }

    /// Whether the route's input has a capture volume to set.
    public var isInputGainSettable: Bool {
        guard let (control, named) = routeControl(capture: true) else { return false }
        return (try? withMixer(control) { mixer throws(ALSAError) -> Bool in
            guard let named else { return mixer.volumeElement(capture: true) != nil }
            return (try? mixer.volume(named, capture: true)) != nil
        }) ?? false
    }

    /// Sets the input's gain (0...1, perceptual scale) on its card's capture volume. Throws
    /// `invalidArguments` for a gain outside 0...1 and when the input has no capture volume.
    public func setInputGain(_ gain: Float) throws(AudioSessionError) {
        guard gain >= 0, gain <= 1 else { throw .invalidArguments("input gain \(gain) is outside 0...1") }
        guard let (control, named) = routeControl(capture: true) else {
            throw .invalidArguments("the route's input has no card control: its gain is not settable")
        }
        do throws(ALSAError) {
            try withMixer(control) { mixer throws(ALSAError) in
                guard let element = named ?? mixer.volumeElement(capture: true) else {
                    throw ALSAError(code: -Errno.Code.invalidArgument.rawValue, operation: "no capture volume on \(control)")
                }
                try mixer.setVolume(element, capture: true, to: gain)
            }
        } catch {
            throw .invalidArguments("the input's gain cannot be set: \(error)")
        }
    }

    /// The side's control device from the route file (or its BlueALSA device's), and the element
    /// its device names for the volume (nil: the card's usual ones).
    private func routeControl(capture: Bool) -> (control: String, element: String?)? {
        guard let routeFile = hardwareRouteFile,
            let devices = try? RouteDevices(routeFile: routeFile, configurationFiles: hardware.configurationFiles)
        else { return nil }
        if capture {
            guard devices.input != nil, let control = devices.inputControl else { return nil }
            return (control, devices.inputElement)
        }
        guard devices.output != nil, let control = devices.outputControl else { return nil }
        return (control, devices.outputElement)
    }

    private func withMixer<R>(_ control: String, _ body: (borrowing ALSASimpleMixer) throws(ALSAError) -> R) throws(ALSAError) -> R {
        guard let routeFile = hardwareRouteFile else { throw ALSAError(code: -Errno.Code.noSuchFileOrDirectory.rawValue, operation: "no route file") }
        let devices = try RouteDevices(routeFile: routeFile, configurationFiles: hardware.configurationFiles)
        let mixer = try ALSASimpleMixer(name: control, configuration: devices.configuration)
        return try body(mixer)
    }

    // MARK: Record permission

    /// Whether this user may record from the route's input: a trial open of its device
    /// (nonblocking, closed at once). `denied` when the device refuses this user (EACCES,
    /// EPERM); `undetermined` when the route has no input.
    public var recordPermission: RecordPermission {
        guard let routeFile = hardwareRouteFile,
            let devices = try? RouteDevices(routeFile: routeFile, configurationFiles: hardware.configurationFiles),
            let input = devices.input
        else { return .undetermined }
        do throws(ALSAError) {
            try PCMHardwareProbe.tryOpen(device: input, stream: .capture, configuration: devices.configuration)
            return .granted
        } catch {
            let permission = RecordPermission(trialOpenError: error.code)
            if permission == .undetermined { hardwareLogger.debug("audioroute: the route's input does not open: \(error)") }
            return permission
        }
    }

    /// AVAudioSession.requestRecordPermission: Linux asks no one, so the answer is
    /// `recordPermission == .granted`, at once.
    public func requestRecordPermission() -> Bool { recordPermission == .granted }

    // MARK: Static answers

    /// Every category the daemon knows (AVAudioSession.availableCategories).
    public nonisolated var availableCategories: [Category] { Category.allCases }
    /// Every mode the daemon knows (AVAudioSession.availableModes).
    public nonisolated var availableModes: [Mode] { Mode.allCases }
}
