// The rule that maps 1 to 8 file channels onto the player's stereo (docs/player.md, "Channels").
import AudioRouteCore
import Testing

@Suite struct StereoDownmixTests {
    /// Each output's gains per file channel, for `count` channels in `order`.
    private func gains(_ count: Int, _ order: ChannelOrder) -> [[Double]] {
        let downmix = StereoDownmix(channels: count, order: order)!
        var matrix = [[Double]](repeating: [Double](repeating: 0, count: count), count: 2)
        for assignment in downmix.channelAssignments { matrix[assignment.outputChannel][assignment.sourceChannel] += assignment.gain }
        return matrix
    }

    private let h = StereoDownmix.minus3dB

    @Test func monoGoesToBothSidesAndStereoStaysAsItIs() {
        #expect(gains(1, .wave) == [[1], [1]])
        #expect(gains(2, .wave) == [[1, 0], [0, 1]])
        #expect(gains(2, .vorbis) == [[1, 0], [0, 1]])
    }

    @Test func fivePointOneInWAVOrderIsTheITUDownmixWithoutTheLFE() {
        // FL FR FC LFE BL BR
        #expect(gains(6, .wave) == [[1, 0, h, 0, h, 0], [0, 1, h, 0, 0, h]])
        // Vorbis order: FL FC FR BL BR LFE
        #expect(gains(6, .vorbis) == [[1, h, 0, h, 0, 0], [0, h, 1, 0, h, 0]])
    }

    @Test func sevenPointOneAndSixPointOne() {
        // FL FR FC LFE BL BR SL SR
        #expect(gains(8, .wave) == [[1, 0, h, 0, h, 0, h, 0], [0, 1, h, 0, 0, h, 0, h]])
        // FL FR FC LFE BC SL SR: the back centre at −6 dB on both sides.
        #expect(gains(7, .wave) == [[1, 0, h, 0, 0.5, h, 0], [0, 1, h, 0, 0.5, 0, h]])
    }

    @Test func threeFourAndFiveChannels() {
        #expect(gains(3, .wave) == [[1, 0, h], [0, 1, h]])
        #expect(gains(3, .vorbis) == [[1, h, 0], [0, h, 1]])
        #expect(gains(4, .wave) == [[1, 0, h, 0], [0, 1, 0, h]])
        #expect(gains(5, .wave) == [[1, 0, h, h, 0], [0, 1, h, 0, h]])
    }

    @Test func noRuleOutsideOneToEight() {
        #expect(StereoDownmix(channels: 0) == nil)
        #expect(StereoDownmix(channels: 9) == nil)
    }

    @Test func applySumsEachFrame() {
        let downmix = StereoDownmix(channels: 6)!
        let frames: [Float] = [0.1, 0.2, 0.3, 0.9, 0.05, 0.15, -0.1, -0.2, -0.3, -0.9, -0.05, -0.15]
        let out = downmix.apply(frames, frames: 2)
        let left = 0.1 + (0.3 + 0.05) * h, right = 0.2 + (0.3 + 0.15) * h
        let expected = [left, right, -left, -right]
        #expect(out.count == 4)
        for (value, wanted) in zip(out, expected) { #expect(abs(Double(value) - wanted) < 1e-6) }
    }
}
