// What the PulseAudio helper does to a client's stream for the daemon's `stream` requests
// (docs/daemon.md, "The PulseAudio helper"; docs/decisions.md, "PulseAudio's streams: muted, not
// corked"). A client cannot cork another client's stream in PulseAudio's API, so a pause is the
// stream's mute, and a duck or a silence its volume: the user's volume times the gain. The user's
// own volume and mute are remembered while AudioRoute holds the stream, and given back. Pure: the
// helper feeds it what the server reports and sends what it returns.

/// libpulse's volume arithmetic on `pa_volume_t` (cubic: 0x10000 is the stream as played).
public enum PulseVolume {
    /// PA_VOLUME_NORM: the stream as played.
    public static let norm: UInt32 = 0x10000
    /// PA_VOLUME_MAX: the largest volume the server takes.
    public static let max: UInt32 = UInt32.max / 2

    /// pa_sw_volume_multiply: `a` with the gain `b` applied (amplitudes multiply).
    public static func multiply(_ a: UInt32, _ b: UInt32) -> UInt32 {
        clamp((UInt64(a) * UInt64(b) + UInt64(norm) / 2) / UInt64(norm))
    }

    /// pa_sw_volume_divide: `a` with the gain `b` taken out (0 for a gain of 0).
    public static func divide(_ a: UInt32, _ b: UInt32) -> UInt32 {
        b == 0 ? 0 : clamp((UInt64(a) * UInt64(norm) + UInt64(b) / 2) / UInt64(b))
    }

    static func clamp(_ value: UInt64) -> UInt32 { UInt32(Swift.min(value, UInt64(max))) }
}

/// A stream's mute and volume as the server has them.
public struct PulseStreamReading: Sendable, Hashable {
    public var muted: Bool
    /// Per channel, `pa_volume_t`.
    public var volume: [UInt32]
    /// False for a stream whose volume cannot be set (passthrough).
    public var volumeWritable: Bool

    public init(muted: Bool, volume: [UInt32], volumeWritable: Bool = true) {
        self.muted = muted
        self.volume = volume
        self.volumeWritable = volumeWritable
    }
}

/// What to send the server for one request: nil leaves that part as it is.
public struct PulseStreamChange: Sendable, Hashable {
    public var mute: Bool?
    public var volume: [UInt32]?
    /// Set when the request asked a gain of a stream whose volume cannot be set.
    public var volumeRefused = false

    public init(mute: Bool? = nil, volume: [UInt32]? = nil, volumeRefused: Bool = false) {
        self.mute = mute
        self.volume = volume
        self.volumeRefused = volumeRefused
    }

    public var isEmpty: Bool { mute == nil && volume == nil }
}

/// What AudioRoute holds of one stream: the user's volume and mute it will give back.
public struct PulseStreamHold: Sendable, Hashable {
    /// Whether the last request paused the stream.
    public private(set) var paused = false
    /// Whether the stream is muted by AudioRoute (not by its user): unmuted when the pause ends.
    public private(set) var mutedByUs = false
    /// The user's volume, kept from the first request below 1 until a request of 1 restores it.
    public private(set) var userVolume: [UInt32]?
    /// The gain applied to `userVolume` (`pa_volume_t`), and the volume that gave.
    public private(set) var gain = PulseVolume.norm
    public private(set) var setVolume: [UInt32]?

    public init() {}

    /// Nothing held: the stream can be forgotten.
    public var isEmpty: Bool { !paused && !mutedByUs && userVolume == nil }

    /// A request (`paused`; `gain`, the volume factor as `pa_volume_t`, nil for a volume of 1) for
    /// the stream as the server has it: what to send.
    public mutating func apply(paused: Bool, gain: UInt32?, to reading: PulseStreamReading) -> PulseStreamChange {
        var change = PulseStreamChange()
        if paused != self.paused {
            self.paused = paused
            if paused {
                // A stream its user muted is left muted, and is not unmuted after.
                if !reading.muted {
                    change.mute = true
                    mutedByUs = true
                }
            } else if mutedByUs {
                change.mute = false
                mutedByUs = false
            }
        }
        if let gain {
            guard reading.volumeWritable else {
                change.volumeRefused = true
                return change
            }
            if userVolume?.count != reading.volume.count { userVolume = reading.volume }
            let target = (userVolume ?? reading.volume).map { PulseVolume.multiply($0, gain) }
            self.gain = gain
            setVolume = target
            if target != reading.volume { change.volume = target }
        } else if let saved = userVolume {
            if saved != reading.volume && reading.volumeWritable { change.volume = saved }
            userVolume = nil
            setVolume = nil
            self.gain = PulseVolume.norm
        }
        return change
    }

    /// The server reported the stream, with no request of ours waiting: a change that is not
    /// ours is its user's. A volume changed while AudioRoute holds it lowered is the user's new
    /// volume with the gain applied (given back without it); a stream unmuted during a pause is
    /// the user's choice, and stays as the user leaves it. True when a user's volume was taken.
    @discardableResult
    public mutating func observe(_ reading: PulseStreamReading) -> Bool {
        if mutedByUs && !reading.muted { mutedByUs = false }
        guard let set = setVolume, set.count == reading.volume.count, !Self.same(set, reading.volume) else { return false }
        // Silenced (a gain of 0): the user's new volume is taken as it is.
        userVolume = reading.volume.map { gain == 0 ? $0 : PulseVolume.divide($0, gain) }
        setVolume = reading.volume
        return true
    }

    /// Equal within libpulse's rounding (a step of 1 per channel).
    static func same(_ a: [UInt32], _ b: [UInt32]) -> Bool {
        zip(a, b).allSatisfy { $0 > $1 ? $0 - $1 <= 1 : $1 - $0 <= 1 }
    }
}
