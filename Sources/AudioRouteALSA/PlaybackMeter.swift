// Levels of what the player's engine really wrote to the PCM (after volume, fade, downmix and
// the session's gain), for AVAudioPlayer's metering. Pure: fed the bytes of each period.
import AudioRouteCore

/// Levels in dBFS of the frames written between two `PlaybackMeter.take()`s, per output channel
/// (0 left, 1 right).
public struct MeterLevels: Sendable, Hashable {
    /// The level of silence, and the floor of every level: AVAudioPlayer's −160 dB.
    public static let silence = -160.0

    /// RMS level: 20·log10(√(mean of x²)), x in −1…1 (a full-scale square wave is 0 dBFS; a
    /// full-scale sine −3.01).
    public var average: [Double]
    /// Peak level: 20·log10(max |x|) (a full-scale sine is 0 dBFS).
    public var peak: [Double]

    /// Silence on both channels.
    public static let silent = MeterLevels(average: [silence, silence], peak: [silence, silence])

    public init(average: [Double], peak: [Double]) { (self.average, self.peak) = (average, peak) }

    /// 20·log10(`amplitude`), at least `silence` (0 and below, NaN: `silence`).
    public static func decibels(_ amplitude: Double) -> Double {
        guard amplitude > 0, amplitude.isFinite else { return amplitude == .infinity ? .infinity : silence }
        return max(silence, 20 * naturalLog(amplitude) / naturalLog10)
    }

    private static let naturalLog10 = naturalLog(10)

    /// ln(x) for a finite x > 0 (no libm in this module): x = m·2^e with m in [√½, √2], and
    /// ln m = 2·atanh((m − 1)/(m + 1)) by its series, |z| ≤ 0.172, to double precision.
    static func naturalLog(_ x: Double) -> Double {
        var exponent = Double(x.exponent)
        var m = x.significand
        if m > 1.4142135623730951 {
            m /= 2
            exponent += 1
        }
        let z = (m - 1) / (m + 1), z2 = z * z
        var term = z, sum = 0.0
        for k in stride(from: 1, through: 29, by: 2) {
            sum += term / Double(k)
            term *= z2
        }
        return 2 * sum + exponent * 0.6931471805599453
    }
}

/// Sums of squares and peaks per output channel of the frames written since the last `take`.
public struct PlaybackMeter: Sendable {
    private var squares = [0.0, 0.0]
    private var peaks = [0.0, 0.0]
    private var frames = 0

    public init() {}

    /// Adds interleaved stereo `bytes` in `encoding` (a period as written).
    public mutating func add(_ bytes: [UInt8], encoding: SampleEncoding, sampleRate: Int) {
        let buffer = PCMBuffer(bytes: bytes, format: WAVFormat(encoding: encoding, channels: 2, sampleRate: sampleRate), firstFrame: 0)
        for frame in 0..<buffer.frameCount {
            for channel in 0..<2 {
                let value = buffer.sample(frame: frame, channel: channel)
                squares[channel] += value * value
                peaks[channel] = max(peaks[channel], abs(value))
            }
        }
        frames += buffer.frameCount
    }

    /// The levels of the frames added since the last call, and a fresh start; nil when none were.
    public mutating func take() -> MeterLevels? {
        guard frames > 0 else { return nil }
        let levels = MeterLevels(
            average: squares.map { MeterLevels.decibels(($0 / Double(frames)).squareRoot()) },
            peak: peaks.map { MeterLevels.decibels($0) })
        self = PlaybackMeter()
        return levels
    }
}
