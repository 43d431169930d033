// The meter's arithmetic: decibels without libm, and levels of known bytes.
import AudioRouteCore
import AudioRouteALSA
import Testing

@Suite struct PlaybackMeterTests {
    @Test func decibels() {
        let cases: [(Double, Double)] = [(1, 0), (0.5, -6.020599913279624), (0.1, -20), (10, 20), (0.001, -60), (1e-7, -140), (3e-300, -160)]
        for (amplitude, expected) in cases {
            #expect(abs(MeterLevels.decibels(amplitude) - expected) < 1e-9, "\(amplitude)")
        }
        #expect(MeterLevels.decibels(0) == -160 && MeterLevels.decibels(-1) == -160 && MeterLevels.decibels(.nan) == -160)
    }

    /// A period of S16 frames: left ±16384 (−6.02 both ways), right 0 then 32767 (peak 0, RMS −3.01).
    @Test func levelsOfKnownFrames() {
        var meter = PlaybackMeter()
        #expect(meter.take() == nil)
        var bytes: [UInt8] = []
        for frame in 0..<4 {
            let left = Int16(frame % 2 == 0 ? 16384 : -16384), right = Int16(frame < 2 ? 0 : 32767)
            for value in [left, right] { bytes += [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)] }
        }
        meter.add(bytes, encoding: .signed16, sampleRate: 48000)
        let levels = meter.take()!
        #expect(abs(levels.average[0] + 6.0206) < 1e-3 && abs(levels.peak[0] + 6.0206) < 1e-3)
        #expect(abs(levels.average[1] + 3.0106) < 1e-3 && abs(levels.peak[1]) < 1e-3)
        #expect(meter.take() == nil, "a fresh start after take")
    }
}
