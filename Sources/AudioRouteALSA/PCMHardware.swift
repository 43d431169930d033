// What a route's device is opened with: its rate, period, buffer and channels, read by opening
// it (nonblocking), refining its hardware parameters with the app's preferences, installing
// them and closing it again (docs/decisions.md, "The session's hardware values"). The values
// are the device's own answers, never a default of ours.
import AudioRouteCore
import AudioRouteSystem
import CALSA

/// What an app would like the device opened with; nil: no preference.
public struct PCMHardwareRequest: Sendable, Hashable {
    /// Frames per second.
    public var rate: Int?
    /// The period (one I/O buffer), in microseconds.
    public var periodMicroseconds: Int?
    /// Interleaved channels.
    public var channels: Int?

    public init(rate: Int? = nil, periodMicroseconds: Int? = nil, channels: Int? = nil) {
        self.rate = rate
        self.periodMicroseconds = periodMicroseconds
        self.channels = channels
    }

    /// The rate asked for without a preference: 48 kHz, what dmix and BlueALSA's A2DP run at.
    public static let defaultRate = 48_000
    /// The period asked for without a preference: 25 ms, the player's (snd_pcm_set_params
    /// with 100 ms of latency makes four periods of it).
    public static let defaultPeriodMicroseconds = 25_000
    /// The channels asked for without a preference: stereo.
    public static let defaultChannels = 2
    /// Periods in the buffer, as snd_pcm_set_params makes them.
    public static let periodsPerBuffer = 4
}

/// One direction of a device as opened: every value is what libasound installed.
public struct PCMHardware: Sendable, Hashable {
    /// The PCM name that was opened (the route's device, `dmix:CARD=PCH,DEV=0`).
    public var device: String
    public var rate: Int
    public var periodFrames: Int
    public var bufferFrames: Int
    public var channels: Int
    /// The most channels the device takes (its configuration space before refining).
    public var maximumChannels: Int
    /// The device's channel map as opened, by position name (`FL`, `FR`; snd_pcm_chmap_name),
    /// empty when the device has none.
    public var channelPositions: [String]

    public init(device: String, rate: Int, periodFrames: Int, bufferFrames: Int, channels: Int, maximumChannels: Int, channelPositions: [String]) {
        self.device = device
        self.rate = rate
        self.periodFrames = periodFrames
        self.bufferFrames = bufferFrames
        self.channels = channels
        self.maximumChannels = maximumChannels
        self.channelPositions = channelPositions
    }

    /// The period's duration in seconds (AVAudioSession's ioBufferDuration).
    public var periodDuration: Double { rate > 0 ? Double(periodFrames) / Double(rate) : 0 }
    /// The buffer's duration in seconds: what a frame waits in a full buffer (what
    /// snd_pcm_set_params calls latency).
    public var bufferDuration: Double { rate > 0 ? Double(bufferFrames) / Double(rate) : 0 }
}

/// Reads a device's hardware values (see the file's comment).
public enum PCMHardwareProbe {
    /// The most channels believed: a device claiming more is a plugin without a limit (`null`,
    /// `plug`), and its maximum is reported as this many (AVAudioSession's own ceiling is far below).
    public static let channelCeiling = 64

    /// Opens `device` from `configuration` for `stream`, installs parameters refined with
    /// `request` and reads them back. A busy device is `ALSAError` with `-EBUSY`; a request the
    /// device cannot meet is moved to the nearest it takes (snd_pcm_hw_params_set_*_near).
    public static func probe(
        device: String, stream: PCMStream, configuration: borrowing ALSAConfiguration, request: PCMHardwareRequest = PCMHardwareRequest()
    ) throws(ALSAError) -> PCMHardware {
        var opened: OpaquePointer?
        try ALSAError.check(
            snd_pcm_open_lconf(&opened, device, stream.raw, SND_PCM_NONBLOCK, configuration.handle), "snd_pcm_open \(device)")
        let pcm = opened!
        defer { snd_pcm_close(pcm) }
        var allocated: OpaquePointer?
        try ALSAError.check(snd_pcm_hw_params_malloc(&allocated), "snd_pcm_hw_params_malloc")
        let params = allocated!
        defer { snd_pcm_hw_params_free(params) }
        try ALSAError.check(snd_pcm_hw_params_any(pcm, params), "snd_pcm_hw_params_any \(device)")
        var maximum: UInt32 = 0
        try ALSAError.check(snd_pcm_hw_params_get_channels_max(params, &maximum), "channels of \(device)")
        // Interleaved read/write, as the player and most apps open it.
        try ALSAError.check(snd_pcm_hw_params_set_access(pcm, params, SND_PCM_ACCESS_RW_INTERLEAVED), "interleaved access on \(device)")
        var channels = UInt32(request.channels ?? PCMHardwareRequest.defaultChannels)
        try ALSAError.check(snd_pcm_hw_params_set_channels_near(pcm, params, &channels), "channels near \(channels) on \(device)")
        var rate = UInt32(request.rate ?? PCMHardwareRequest.defaultRate)
        var direction: Int32 = 0
        try ALSAError.check(snd_pcm_hw_params_set_rate_near(pcm, params, &rate, &direction), "rate near \(rate) on \(device)")
        var period = UInt32(request.periodMicroseconds ?? PCMHardwareRequest.defaultPeriodMicroseconds)
        var buffer = period * UInt32(PCMHardwareRequest.periodsPerBuffer)
        // The buffer first, then the period, as snd_pcm_set_params does: a device whose buffer
        // is smaller than asked still gets periods near the request.
        try ALSAError.check(snd_pcm_hw_params_set_buffer_time_near(pcm, params, &buffer, &direction), "buffer time near \(buffer) µs on \(device)")
        try ALSAError.check(snd_pcm_hw_params_set_period_time_near(pcm, params, &period, &direction), "period time near \(period) µs on \(device)")
        try ALSAError.check(snd_pcm_hw_params(pcm, params), "snd_pcm_hw_params \(device)")
        var installedRate: UInt32 = 0
        var installedChannels: UInt32 = 0
        var periodFrames: snd_pcm_uframes_t = 0
        var bufferFrames: snd_pcm_uframes_t = 0
        try ALSAError.check(snd_pcm_hw_params_get_rate(params, &installedRate, &direction), "rate of \(device)")
        try ALSAError.check(snd_pcm_hw_params_get_channels(params, &installedChannels), "channels of \(device)")
        try ALSAError.check(snd_pcm_hw_params_get_period_size(params, &periodFrames, &direction), "period of \(device)")
        try ALSAError.check(snd_pcm_hw_params_get_buffer_size(params, &bufferFrames), "buffer of \(device)")
        return PCMHardware(
            device: device, rate: Int(installedRate), periodFrames: Int(periodFrames), bufferFrames: Int(bufferFrames),
            channels: Int(installedChannels), maximumChannels: min(Int(maximum), channelCeiling), channelPositions: positions(pcm))
    }

    /// Opens `device` for `stream` without blocking and closes it: whether this process may open
    /// it (EACCES: the node refuses this user; EBUSY: another stream holds it).
    public static func tryOpen(device: String, stream: PCMStream, configuration: borrowing ALSAConfiguration) throws(ALSAError) {
        var opened: OpaquePointer?
        try ALSAError.check(
            snd_pcm_open_lconf(&opened, device, stream.raw, SND_PCM_NONBLOCK, configuration.handle), "snd_pcm_open \(device)")
        snd_pcm_close(opened)
    }

    /// A position's long name ("FL" → "Front Left"; snd_pcm_chmap_long_name); the short name
    /// itself where libasound has none.
    public static func longName(position: String) -> String {
        let value = snd_pcm_chmap_from_string(position)
        guard value != UInt32.max, let name = snd_pcm_chmap_long_name(snd_pcm_chmap_position(rawValue: value)) else { return position }
        return String(cString: name)
    }

    /// The channel map of an open, configured PCM, by position name; empty without one.
    private static func positions(_ pcm: OpaquePointer) -> [String] {
        var positions = [UInt32](repeating: 0, count: channelCeiling)
        let count = Int(audioroute_pcm_chmap_positions(pcm, &positions, UInt32(positions.count)))
        return positions.prefix(max(0, min(count, channelCeiling))).map { position in
            snd_pcm_chmap_name(snd_pcm_chmap_position(rawValue: position)).map { String(cString: $0) } ?? "UNKNOWN"
        }
    }
}

/// The route's devices as the route file names them (`slave.pcm` of its `audioroute_route` and
/// `audioroute_route_capture`), and the configuration to open them from.
public struct RouteDevices: ~Copyable {
    /// The system's configuration, then `configurationFiles`, then the route file.
    public let configuration: ALSAConfiguration
    /// The output device's PCM name; nil when the route has no output (`null`).
    public let output: String?
    /// The input device's PCM name; nil when the route has no input.
    public let input: String?
    /// The control device of each side (`hw:CARD=PCH` from the route file's `ctl.` entries; a
    /// BlueALSA device's own, `bluealsa:DEV=<address>,BAT=no`), nil for a side without one.
    public let outputControl: String?
    public let inputControl: String?
    /// The simple element that carries the side's volume where the device says (BlueALSA's
    /// `A2DP` or `SCO`); nil: the card's usual elements (ALSASimpleMixer.volumeElement).
    public let outputElement: String?
    public let inputElement: String?

    /// Reads the route file at `routeFile` over the system's configuration and `configurationFiles`.
    public init(routeFile: String, configurationFiles: [String] = []) throws(ALSAError) {
        var configuration = try ALSAConfiguration.system()
        for file in configurationFiles { try configuration.load(file: file) }
        try configuration.load(file: routeFile)
        let devices = ["audioroute_route", "audioroute_route_capture"].map { name -> String? in
            guard let pcm = configuration.string(at: "pcm.\(name).slave.pcm"), pcm != "null" else { return nil }
            return pcm
        }
        let controls = ["audioroute", "audioroute_capture"].map { name in configuration.string(at: "ctl.\(name).card").map { "hw:CARD=" + $0 } }
        output = devices[0]
        input = devices[1]
        let output = devices[0].flatMap(Self.blueALSA)
        let input = devices[1].flatMap(Self.blueALSA)
        outputControl = output?.control ?? controls[0]
        inputControl = input?.control ?? controls[1]
        outputElement = output?.element
        inputElement = input?.element
        self.configuration = configuration
    }

    /// A BlueALSA device's control and volume element: BlueALSA's control plugin for that one
    /// device (its battery level left out: not a volume), whose `A2DP` or `SCO` element is the
    /// transport's volume. Nil for any other device.
    public static func blueALSA(_ device: String) -> (control: String, element: String)? {
        guard case .bluealsa(let pcm)? = try? ALSADevice(parsing: device) else { return nil }
        return ("bluealsa:DEV=\(pcm.address),BAT=no", pcm.profile == .a2dp ? "A2DP" : "SCO")
    }
}
