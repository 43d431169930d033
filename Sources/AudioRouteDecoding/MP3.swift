// MP3 through libmpg123 directly. libsndfile decodes MP3 with the same library, but takes the
// length libmpg123 estimates at open and stops reading there: a VBR file without a Xing/LAME
// header (its length estimated from the first frame's bitrate) was cut to a sixth
// (docs/decisions.md, "MP3 through libmpg123"). Here an estimated length is replaced by a scan
// of the frame headers (mpg123_scan: no decoding), and the length of a file with the header is
// read from it without a scan.
import AudioRouteCore
import CMpg123

/// A decoded file the player plays: frames (`FrameSource`) and what the file is.
public protocol AudioFileDecoder: FrameSource {
    /// What was opened: the path, or "data".
    var sourceName: String { get }
    /// The file as decoded.
    var decodedFormat: DecodedFormat { get }
}

extension SoundFileDecoder: AudioFileDecoder {}

/// Opening a file with the decoder that reads it best.
public enum AudioDecoding {
    /// The file at `location` (a path, or a `file://` URL): libsndfile's, or libmpg123's for MP3.
    public static func open(contentsOf location: String) throws(AudioDecodeError) -> any AudioFileDecoder {
        let decoder = try SoundFileDecoder(contentsOf: location)
        guard decoder.isMPEG else { return decoder }
        return try MP3Decoder(path: decoder.sourceName)
    }

    /// A whole file's bytes (copied).
    public static func open(data: [UInt8]) throws(AudioDecodeError) -> any AudioFileDecoder {
        let decoder = try SoundFileDecoder(data: data)
        guard decoder.isMPEG else { return decoder }
        return try MP3Decoder(data: data)
    }
}

/// A libmpg123 handle, closed and deleted in deinit, with the bytes in memory it reads (for
/// `init(data:)`), released after it.
struct MPG123Handle: ~Copyable {
    let handle: OpaquePointer
    private let memory: UnsafeMutablePointer<audioroute_mpg123_memory>?
    private let bytes: UnsafeMutableRawBufferPointer?

    static func open(source: String, path: String?, data: [UInt8]?) throws(AudioDecodeError) -> MPG123Handle {
        var error: Int32 = 0
        guard let handle = mpg123_new(nil, &error) else {
            throw .undecodable(source: source, format: "MP3", reason: String(cString: mpg123_plain_strerror(error)))
        }
        var memory: UnsafeMutablePointer<audioroute_mpg123_memory>?
        var bytes: UnsafeMutableRawBufferPointer?
        if let data {
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, data.count), alignment: 16)
            data.withUnsafeBytes { copy.copyMemory(from: $0) }
            memory = UnsafeMutablePointer<audioroute_mpg123_memory>.allocate(capacity: 1)
            memory!.initialize(to: audioroute_mpg123_memory(
                bytes: UnsafePointer(copy.baseAddress!.assumingMemoryBound(to: UInt8.self)), length: off_t(data.count), position: 0))
            bytes = copy
        }
        // Owned from here: a failure below closes and frees in deinit.
        let owner = MPG123Handle(handle: handle, memory: memory, bytes: bytes)
        // Quiet (errors come back as values), gapless (the encoder's delay and padding trimmed),
        // 32-bit float out.
        var result = mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), Int(MPG123_QUIET.rawValue | MPG123_GAPLESS.rawValue), 0)
        if result == MPG123_OK.rawValue { result = audioroute_mpg123_float_output(handle) }
        if result == MPG123_OK.rawValue {
            result = if let memory { audioroute_mpg123_open_memory(handle, memory) } else { mpg123_open(handle, path ?? "") }
        }
        guard result == MPG123_OK.rawValue else { throw .undecodable(source: source, format: "MP3", reason: owner.error) }
        return owner
    }

    private init(handle: OpaquePointer, memory: UnsafeMutablePointer<audioroute_mpg123_memory>?, bytes: UnsafeMutableRawBufferPointer?) {
        self.handle = handle
        self.memory = memory
        self.bytes = bytes
    }

    deinit {
        mpg123_close(handle)
        mpg123_delete(handle)
        memory?.deallocate()
        bytes?.deallocate()
    }

    /// The handle's last error.
    var error: String { String(cString: mpg123_strerror(handle)) }
}

/// An MP3 file decoded by libmpg123, read a window at a time, as `SoundFileDecoder` reads.
public final class MP3Decoder: AudioFileDecoder {
    public let sourceName: String
    public let decodedFormat: DecodedFormat
    /// 32-bit float, mono or stereo.
    public let format: WAVFormat
    public var frameCount: Int { decodedFormat.frameCount }

    private let handle: MPG123Handle
    private var cursor = 0
    private var window: PCMBuffer?

    /// Opens the MP3 file at `path`.
    public convenience init(path: String) throws(AudioDecodeError) {
        try self.init(handle: try MPG123Handle.open(source: path, path: path, data: nil), sourceName: path)
    }

    /// Opens an MP3 file's bytes (copied).
    public convenience init(data: [UInt8]) throws(AudioDecodeError) {
        try self.init(handle: try MPG123Handle.open(source: "data", path: nil, data: data), sourceName: "data")
    }

    private init(handle: consuming MPG123Handle, sourceName: String) throws(AudioDecodeError) {
        var rate = 0
        var channels: Int32 = 0
        var encoding: Int32 = 0
        guard mpg123_getformat(handle.handle, &rate, &channels, &encoding) == MPG123_OK.rawValue,
            encoding == Int32(MPG123_ENC_FLOAT_32.rawValue)
        else {
            throw .undecodable(source: sourceName, format: "MP3", reason: handle.error)
        }
        guard let downmix = StereoDownmix(channels: Int(channels)) else {
            throw .unsupportedChannelCount(source: sourceName, format: "MP3", channels: Int(channels))
        }
        // Without a LAME/Info tag (its encoder delay unknown) the length is an estimate, from the
        // first frame's bitrate: counted from the frame headers instead. With one, the tag's count
        // is exact and read without a scan.
        var delay = -1
        _ = mpg123_getstate2(handle.handle, Int32(MPG123_ENC_DELAY.rawValue), &delay, nil)
        if delay < 0 {
            guard mpg123_scan(handle.handle) == MPG123_OK.rawValue else {
                throw .undecodable(source: sourceName, format: "MP3", reason: handle.error)
            }
        }
        let length = mpg123_length(handle.handle)
        guard length >= 0 && length < 1 << 40 else {
            throw .unknownLength(source: sourceName, format: "MP3", frames: Int64(length))
        }
        self.handle = handle
        self.sourceName = sourceName
        decodedFormat = DecodedFormat(name: "MP3", channels: Int(channels), sampleRate: rate, frameCount: Int(length), downmix: downmix)
        format = WAVFormat(encoding: .float32, channels: Int(channels), sampleRate: rate)
        // The scan leaves the position at the end.
        cursor = -1
    }

    public func frames(_ frames: Range<Int>) throws(FrameReadError) -> PCMBuffer {
        precondition(frames.lowerBound >= 0 && frames.upperBound <= frameCount)
        if let window, frames.lowerBound >= window.firstFrame, frames.upperBound <= window.firstFrame + window.frameCount {
            let size = format.bytesPerFrame
            let from = (frames.lowerBound - window.firstFrame) * size
            return PCMBuffer(bytes: Array(window.bytes[from..<(from + frames.count * size)]), format: format, firstFrame: frames.lowerBound)
        }
        let count = min(max(frames.count, SoundFileDecoder.windowFrames), frameCount - frames.lowerBound)
        window = try read(from: frames.lowerBound, count: count)
        return try self.frames(frames)
    }

    private func read(from start: Int, count: Int) throws(FrameReadError) -> PCMBuffer {
        window = nil
        if cursor != start {
            guard mpg123_seek(handle.handle, off_t(start), audioroute_seek_set) == off_t(start) else {
                cursor = -1
                throw FrameReadError(frame: start, expected: frameCount, reason: "seek failed: \(handle.error)")
            }
            cursor = start
        }
        let size = format.bytesPerFrame
        var bytes = [UInt8](repeating: 0, count: count * size)
        var filled = 0
        var failure: String?
        while filled < bytes.count {
            var done = 0
            let result = bytes.withUnsafeMutableBytes { buffer in
                mpg123_read(handle.handle, buffer.baseAddress! + filled, buffer.count - filled, &done)
            }
            filled += done
            if result == MPG123_OK.rawValue || result == MPG123_NEW_FORMAT.rawValue { continue }
            if result != MPG123_DONE.rawValue { failure = handle.error }
            break
        }
        guard filled == bytes.count else {
            cursor = -1
            throw FrameReadError(frame: start + filled / size, expected: frameCount, reason: failure ?? "the stream ends early")
        }
        cursor = start + count
        return PCMBuffer(bytes: bytes, format: format, firstFrame: start)
    }
}
