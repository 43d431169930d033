// Files of 1 to 8 channels onto the stereo the player opens: one fixed rule per channel count
// and channel order (docs/player.md, "Channels"). Front left and right go to their side at
// unity; the centre goes to both at −3 dB; a surround or side channel goes to its side at
// −3 dB; a back centre goes to both at −6 dB (it stands for two surrounds); the LFE is
// dropped. No normalisation: the front pair keeps its level, and a sum past full scale clips
// when it is written (the ITU-R BS.775 downmix, as most players apply it). Pure, so it is
// unit-tested.

/// Where a loudspeaker channel of a file stands.
public enum SpeakerPosition: String, Sendable, Hashable, CaseIterable {
    case mono, frontLeft, frontRight, frontCenter, lowFrequency, backLeft, backRight, backCenter, sideLeft, sideRight
}

/// The order a container stores its channels in, for a given count.
public enum ChannelOrder: Sendable, Hashable {
    /// WAV's (WAVEFORMATEXTENSIBLE's default masks), which FLAC, AIFF and CAF files use too.
    case wave
    /// Vorbis's (Ogg Vorbis and Opus).
    case vorbis

    /// The positions of `count` channels (1…8), nil beyond.
    public func positions(_ count: Int) -> [SpeakerPosition]? {
        let (fl, fr, fc, lfe, bl, br, bc, sl, sr): (SpeakerPosition, SpeakerPosition, SpeakerPosition, SpeakerPosition, SpeakerPosition, SpeakerPosition, SpeakerPosition, SpeakerPosition, SpeakerPosition) =
            (.frontLeft, .frontRight, .frontCenter, .lowFrequency, .backLeft, .backRight, .backCenter, .sideLeft, .sideRight)
        switch (self, count) {
        case (_, 1): return [.mono]
        case (_, 2): return [fl, fr]
        case (.wave, 3): return [fl, fr, fc]
        case (_, 4): return [fl, fr, bl, br]
        case (.wave, 5): return [fl, fr, fc, bl, br]
        case (.wave, 6): return [fl, fr, fc, lfe, bl, br]
        case (.wave, 7): return [fl, fr, fc, lfe, bc, sl, sr]
        case (.wave, 8): return [fl, fr, fc, lfe, bl, br, sl, sr]
        case (.vorbis, 3): return [fl, fc, fr]
        case (.vorbis, 5): return [fl, fc, fr, bl, br]
        case (.vorbis, 6): return [fl, fc, fr, bl, br, lfe]
        case (.vorbis, 7): return [fl, fc, fr, sl, sr, bc, lfe]
        case (.vorbis, 8): return [fl, fc, fr, sl, sr, bl, br, lfe]
        default: return nil
        }
    }
}

/// One file channel's part in one output channel.
public struct ChannelAssignment: Sendable, Hashable {
    /// The file's channel (0-based).
    public var sourceChannel: Int
    /// The output channel: 0 left, 1 right.
    public var outputChannel: Int
    /// The linear gain it is added with.
    public var gain: Double

    public init(sourceChannel: Int, outputChannel: Int, gain: Double) {
        (self.sourceChannel, self.outputChannel, self.gain) = (sourceChannel, outputChannel, gain)
    }
}

/// How a file's channels reach the stereo output.
public struct StereoDownmix: Sendable, Hashable {
    /// −3 dB, as a linear gain (1/√2).
    public static let minus3dB = 0.707_106_781_186_547_5

    /// The file's channels, in its order.
    public let positions: [SpeakerPosition]
    /// Every (file channel, output channel, gain) that is summed; a channel absent here (the
    /// LFE) is dropped. AVAudioPlayer's `channelAssignments` in data.
    public let channelAssignments: [ChannelAssignment]

    /// The rule for `count` channels (1…8) stored in `order`; nil for another count.
    public init?(channels count: Int, order: ChannelOrder = .wave) {
        guard let positions = order.positions(count) else { return nil }
        self.init(positions: positions)
    }

    /// The rule for channels at `positions` (1…8 of them, as a file's own channel map says;
    /// `mono` only alone); nil otherwise.
    public init?(positions: [SpeakerPosition]) {
        guard (1...8).contains(positions.count), positions.count == 1 || !positions.contains(.mono) else { return nil }
        self.positions = positions
        var assignments: [ChannelAssignment] = []
        for (channel, position) in positions.enumerated() {
            for (output, gain) in Self.gains(position) {
                assignments.append(ChannelAssignment(sourceChannel: channel, outputChannel: output, gain: gain))
            }
        }
        channelAssignments = assignments
    }

    /// The outputs a position reaches and their gains.
    static func gains(_ position: SpeakerPosition) -> [(Int, Double)] {
        switch position {
        case .mono: [(0, 1), (1, 1)]
        case .frontLeft: [(0, 1)]
        case .frontRight: [(1, 1)]
        case .frontCenter: [(0, minus3dB), (1, minus3dB)]
        case .lowFrequency: []
        case .backLeft, .sideLeft: [(0, minus3dB)]
        case .backRight, .sideRight: [(1, minus3dB)]
        case .backCenter: [(0, 0.5), (1, 0.5)]
        }
    }

    /// Stereo frames from `frames` interleaved frames of `positions.count` channels.
    public func apply(_ samples: [Float], frames: Int) -> [Float] {
        let channels = positions.count
        precondition(samples.count >= frames * channels)
        var out = [Float](repeating: 0, count: frames * 2)
        for frame in 0..<frames {
            var left = 0.0, right = 0.0
            for assignment in channelAssignments {
                let value = Double(samples[frame * channels + assignment.sourceChannel]) * assignment.gain
                if assignment.outputChannel == 0 { left += value } else { right += value }
            }
            out[frame * 2] = Float(left)
            out[frame * 2 + 1] = Float(right)
        }
        return out
    }
}
