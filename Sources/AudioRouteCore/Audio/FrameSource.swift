// What the player's engine reads: decoded frames at a position, their format and how many
// there are. A WAV file in memory is one (the demo builds them); a decoder streaming a file
// through libsndfile is another (AudioRouteDecoding). The engine asks for a period's frames at a
// time, so a decoder holds a window of them, never the whole file.

/// Interleaved little-endian frames in memory, in `format` (1 or 2 channels), that the
/// renderers (`render`, `renderVarispeed`) read.
public protocol PCMFrames {
    /// The bytes holding the frames (and maybe more).
    var bytes: [UInt8] { get }
    /// How one frame is stored.
    var format: WAVFormat { get }
    /// Where the whole frames are in `bytes`.
    var dataRange: Range<Int> { get }
}

extension PCMFrames {
    /// Number of whole frames.
    public var frameCount: Int { dataRange.count / format.bytesPerFrame }
}

extension WAVFile: PCMFrames {}

/// A run of decoded frames: frames `firstFrame ..< firstFrame + frameCount` of a source.
public struct PCMBuffer: PCMFrames, Sendable, Hashable {
    public let bytes: [UInt8]
    public let format: WAVFormat
    public var dataRange: Range<Int> { 0..<(bytes.count / format.bytesPerFrame * format.bytesPerFrame) }
    /// The source's frame the buffer starts at.
    public let firstFrame: Int

    public init(bytes: [UInt8], format: WAVFormat, firstFrame: Int) {
        precondition(format.channels == 1 || format.channels == 2, "the renderers take mono or stereo")
        self.bytes = bytes
        self.format = format
        self.firstFrame = firstFrame
    }
}

/// Why a source could not give the frames asked for: the stream ended or failed early
/// (a truncated file), at `frame` of the `expected` its header declared.
public struct FrameReadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The first frame that could not be decoded.
    public var frame: Int
    /// The frames the source said it has.
    public var expected: Int
    /// The decoder's reason.
    public var reason: String

    public init(frame: Int, expected: Int, reason: String) {
        (self.frame, self.expected, self.reason) = (frame, expected, reason)
    }

    public var description: String { "decode error at frame \(frame) of \(expected): \(reason)" }
}

/// Decoded audio the engine plays: frames at a position, in a format of 1 or 2 channels
/// (a decoder of more maps them onto stereo first, `StereoDownmix`).
public protocol FrameSource {
    /// The frames as the engine gets them: mono or stereo.
    var format: WAVFormat { get }
    /// How many frames there are.
    var frameCount: Int { get }
    /// Frames `frames` (within `0..<frameCount`). A stream that fails before its declared end
    /// (a truncated file) gives the frames before the fault (fewer than asked), then throws
    /// when asked for the frame at the fault.
    func frames(_ frames: Range<Int>) throws(FrameReadError) -> PCMBuffer
}

extension WAVFile: FrameSource {
    /// A copy of the file's own bytes for `frames`.
    public func frames(_ frames: Range<Int>) throws(FrameReadError) -> PCMBuffer {
        PCMBuffer(bytes: Array(nativeBytes(frames: frames)), format: format, firstFrame: frames.lowerBound)
    }
}
