// MP3 through libmpg123 directly. libsndfile decodes MP3 with the same library but takes the
// length libmpg123 estimates at open and stops reading there: a VBR file without a Xing/LAME
// header (its length estimated from the first frame's bitrate) was cut to a sixth and ended as
// if complete (docs/decisions.md, "MP3 through libmpg123"). Here an estimated length is
// replaced by a count of the frame headers (mpg123_scan: no decoding); a file with a LAME tag
// has its exact length read from it, without a scan.
import AudioRouteCore
import CMpg123

/// An MP3 stream decoded by libmpg123 to 32-bit float, mono or stereo, with the encoder's delay
/// and padding trimmed (gapless) where a LAME tag states them. `SoundFileDecoder` reads MP3
/// files through it. The handle is closed and deleted in deinit, and the bytes it reads from
/// memory are released after it.
final class MPG123Stream {
    private(set) var channels = 0
    private(set) var sampleRate = 0
    /// Frames, exact: from the LAME tag, or counted by a scan of the frame headers.
    private(set) var frameCount = 0

    private let handle: OpaquePointer
    private let memory: UnsafeMutablePointer<audioroute_mpg123_memory>?
    private let bytes: UnsafeMutableRawBufferPointer?

    /// Opens the file at `path` (libmpg123's own reader), or `data` (copied; the shim's reader).
    init(source: String, path: String?, data: [UInt8]?) throws(AudioDecodeError) {
        var code: Int32 = 0
        guard let handle = mpg123_new(nil, &code) else {
            throw .undecodable(source: source, format: "MP3", reason: String(cString: mpg123_plain_strerror(code)))
        }
        self.handle = handle
        if let data {
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, data.count), alignment: 16)
            data.withUnsafeBytes { copy.copyMemory(from: $0) }
            let memory = UnsafeMutablePointer<audioroute_mpg123_memory>.allocate(capacity: 1)
            memory.initialize(to: audioroute_mpg123_memory(
                bytes: UnsafePointer(copy.baseAddress!.assumingMemoryBound(to: UInt8.self)), length: off_t(data.count), position: 0))
            self.memory = memory
            bytes = copy
        } else {
            memory = nil
            bytes = nil
        }
        // Owned from here: a failure below closes and frees in deinit.
        // Quiet (errors come back as values), gapless (the encoder's delay and padding trimmed),
        // 32-bit float out.
        var result = mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), Int(MPG123_QUIET.rawValue | MPG123_GAPLESS.rawValue), 0)
        if result == MPG123_OK.rawValue { result = audioroute_mpg123_float_output(handle) }
        if result == MPG123_OK.rawValue {
            result = if let memory { audioroute_mpg123_open_memory(handle, memory) } else { mpg123_open(handle, path ?? "") }
        }
        guard result == MPG123_OK.rawValue else { throw .undecodable(source: source, format: "MP3", reason: self.error) }
        var rate = 0
        var channelCount: Int32 = 0
        var encoding: Int32 = 0
        guard mpg123_getformat(handle, &rate, &channelCount, &encoding) == MPG123_OK.rawValue,
            encoding == Int32(MPG123_ENC_FLOAT_32.rawValue)
        else {
            throw .undecodable(source: source, format: "MP3", reason: self.error)
        }
        // Without a LAME/Info tag (its encoder delay unknown) the length is an estimate from the
        // first frame's bitrate: counted from the frame headers instead.
        var delay = -1
        if mpg123_getstate2(handle, Int32(MPG123_ENC_DELAY.rawValue), &delay, nil) != MPG123_OK.rawValue || delay < 0 {
            guard mpg123_scan(handle) == MPG123_OK.rawValue else {
                throw .undecodable(source: source, format: "MP3", reason: self.error)
            }
        }
        let length = mpg123_length(handle)
        guard length >= 0 && length < 1 << 40 else {
            throw .unknownLength(source: source, format: "MP3", frames: Int64(length))
        }
        channels = Int(channelCount)
        sampleRate = rate
        frameCount = Int(length)
    }

    deinit {
        mpg123_close(handle)
        mpg123_delete(handle)
        memory?.deallocate()
        bytes?.deallocate()
    }

    /// The handle's last error.
    var error: String { String(cString: mpg123_strerror(handle)) }

    /// Moves to `frame`; false when libmpg123 cannot.
    func seek(to frame: Int) -> Bool {
        mpg123_seek(handle, off_t(frame), audioroute_mpg123_seek_set) == off_t(frame)
    }

    /// Decodes up to `count` frames into `samples` (interleaved): the frames decoded, fewer at
    /// the stream's end or at a fault (then `fault` is libmpg123's reason).
    func read(into samples: inout [Float], count: Int) -> (frames: Int, fault: String?) {
        let size = channels * MemoryLayout<Float>.size
        let wanted = count * size
        var filled = 0
        var fault: String?
        samples.withUnsafeMutableBytes { buffer in
            precondition(buffer.count >= wanted)
            while filled < wanted {
                var done = 0
                let result = mpg123_read(handle, buffer.baseAddress! + filled, wanted - filled, &done)
                // libmpg123 never says more than it was given room for; clamped all the same.
                filled += min(max(done, 0), wanted - filled)
                if result == MPG123_OK.rawValue || result == MPG123_NEW_FORMAT.rawValue { continue }
                if result != MPG123_DONE.rawValue { fault = error }
                break
            }
        }
        return (filled / size, fault)
    }
}
