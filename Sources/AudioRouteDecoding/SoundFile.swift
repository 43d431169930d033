// Decoding through libsndfile (WAV, AIFF, CAF, FLAC, Ogg Vorbis, Opus and the rest it reads;
// MP3 through libmpg123 directly, MP3.swift), streamed: the decoder holds one window of frames, read on demand, never the whole
// file. The handle is owned (closed in deinit), so a file that fails anywhere leaves nothing
// open. libsndfile is wrapped here only, as libasound is in AudioRouteALSA.
import AudioRouteCore
import AudioRouteSystem
import CSndfile

/// Why audio could not be decoded. Each case names the source and the fault.
public enum AudioDecodeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No file at the path (ENOENT).
    case missing(path: String)
    /// The file exists but could not be opened (permissions, a directory).
    case unreadable(Errno)
    /// libsndfile cannot decode it: `format` is what the first bytes look like ("unknown" when
    /// nothing known), `reason` libsndfile's (sf_strerror).
    case undecodable(source: String, format: String, reason: String)
    /// Decodable, but with a channel count the player does not map (it maps 1 to 8).
    case unsupportedChannelCount(source: String, format: String, channels: Int)
    /// A rate of 0 or above 768 kHz.
    case unsupportedSampleRate(source: String, format: String, rate: Int)
    /// A frame count no file of this kind holds (negative, or unknown: a stream libsndfile
    /// cannot measure).
    case unknownLength(source: String, format: String, frames: Int64)
    /// The stream failed or ended before its declared length while it was read.
    case read(source: String, format: String, FrameReadError)

    public var description: String {
        switch self {
        case let .missing(path): "\(path): no such file"
        case let .unreadable(error): error.description
        case let .undecodable(source, format, reason): "\(source): cannot decode (format: \(format)): \(reason)"
        case let .unsupportedChannelCount(source, format, channels):
            "\(source): \(format) with \(channels) channels; 1 to 8 are played"
        case let .unsupportedSampleRate(source, format, rate):
            "\(source): \(format) at \(rate) Hz; 1 to \(WAVFile.maximumSampleRate) Hz are played"
        case let .unknownLength(source, format, frames):
            "\(source): \(format): its length cannot be read (\(frames) frames; a truncated or unfinished stream)"
        case let .read(source, format, error): "\(source): \(format): \(error)"
        }
    }
}

/// What a decoded file is, as libsndfile reports it.
public struct DecodedFormat: Sendable, Hashable {
    /// The container and codec, e.g. "WAV (PCM 16-bit)", "FLAC (PCM 24-bit)", "MP3".
    public var name: String
    /// The file's channels (1…8).
    public var channels: Int
    /// Frames per second.
    public var sampleRate: Int
    /// The file's frames: what its header declares where it declares a length (a WAV file cut
    /// short has fewer, and reading past them is a decode error), else libsndfile's count.
    public var frameCount: Int
    /// How the channels reach the stereo output.
    public var downmix: StereoDownmix
    /// Bits per sample of a linear PCM encoding (integer or float, FLAC and ALAC included); nil
    /// for a lossy or companded codec (Vorbis, Opus, MP3, µ-law, ADPCM), which has none.
    public var bitDepth: Int?
    /// Whether the samples are floating point (32 or 64-bit float files).
    public var isFloat: Bool
}

/// An open libsndfile handle, closed in deinit, with the bytes in memory it reads through (for
/// `init(data:)`), released after it.
struct SoundFileHandle: ~Copyable {
    let file: OpaquePointer
    private let memory: UnsafeMutablePointer<audioroute_sf_memory>?
    private let bytes: UnsafeMutableRawBufferPointer?

    /// Opens `path` for reading.
    static func open(path: String, info: inout SF_INFO) throws(AudioDecodeError) -> SoundFileHandle {
        // Opened here first only to tell a missing or unreadable file from an undecodable one.
        do {
            _ = try FileDescriptor.open(path)
        } catch {
            if error.code == .noSuchFileOrDirectory { throw .missing(path: path) }
            throw .unreadable(error)
        }
        // libsndfile opens the file itself and closes it in sf_close, or before it returns NULL.
        // Not sf_open_fd with our descriptor: libsndfile 1.2.0 closes the descriptor of an open
        // that fails even when told not to (SF_FALSE, measured), and its owner would then close
        // the number a second time.
        guard let file = sf_open(path, Int32(SFM_READ), &info) else {
            let reason = Self.lastError()
            throw .undecodable(source: path, format: Self.sniff(path: path), reason: reason)
        }
        return SoundFileHandle(file: file, memory: nil, bytes: nil)
    }

    /// Opens `data` (copied: libsndfile reads it after the caller's array may be gone).
    static func open(data: [UInt8], info: inout SF_INFO) throws(AudioDecodeError) -> SoundFileHandle {
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, data.count), alignment: 16)
        data.withUnsafeBytes { bytes.copyMemory(from: $0) }
        let memory = UnsafeMutablePointer<audioroute_sf_memory>.allocate(capacity: 1)
        memory.initialize(to: audioroute_sf_memory(
            bytes: UnsafePointer(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)), length: sf_count_t(data.count), position: 0))
        guard let file = audioroute_sf_open_memory(memory, &info) else {
            memory.deallocate()
            bytes.deallocate()
            throw .undecodable(source: "data", format: Self.sniff(Array(data.prefix(12))), reason: Self.lastError())
        }
        return SoundFileHandle(file: file, memory: memory, bytes: bytes)
    }

    private init(file: OpaquePointer, memory: UnsafeMutablePointer<audioroute_sf_memory>?, bytes: UnsafeMutableRawBufferPointer?) {
        self.file = file
        self.memory = memory
        self.bytes = bytes
    }

    deinit {
        sf_close(file)
        memory?.deallocate()
        bytes?.deallocate()
    }

    /// The last error of this handle.
    var error: String { String(cString: sf_strerror(file)) }

    /// The error of the last failed open (libsndfile keeps it globally).
    static func lastError() -> String { String(cString: sf_strerror(nil)) }

    /// What the first bytes of the file at `path` look like.
    static func sniff(path: String) -> String {
        guard let descriptor = try? FileDescriptor.open(path) else { return "unknown" }
        var prefix = [UInt8](repeating: 0, count: 12)
        let count = prefix.withUnsafeMutableBytes { (try? descriptor.read(into: $0)) ?? 0 }
        return sniff(Array(prefix.prefix(count)))
    }

    /// The container the first bytes name, or "unknown".
    static func sniff(_ prefix: [UInt8]) -> String {
        func starts(_ text: String, at offset: Int = 0) -> Bool {
            let magic = Array(text.utf8)
            return prefix.count >= offset + magic.count && Array(prefix[offset..<(offset + magic.count)]) == magic
        }
        if starts("RIFF") && starts("WAVE", at: 8) { return "WAV" }
        if starts("RF64") { return "RF64" }
        if starts("FORM") && (starts("AIFF", at: 8) || starts("AIFC", at: 8)) { return "AIFF" }
        if starts("caff") { return "CAF" }
        if starts("fLaC") { return "FLAC" }
        if starts("OggS") { return "Ogg" }
        if starts("ID3") { return "MP3" }
        // An MPEG audio frame's sync word (11 bits set) with layer III.
        if prefix.count >= 2 && prefix[0] == 0xFF && prefix[1] & 0xE0 == 0xE0 && prefix[1] & 0x06 == 0x02 { return "MP3" }
        return "unknown"
    }
}

/// A file decoded by libsndfile (an MP3 by libmpg123, `MPG123Stream`), read a window at a time. Not thread-safe: one owner reads it
/// (the player's engine, under the player's lock).
public final class SoundFileDecoder: FrameSource {
    /// What was opened: the path, or "data".
    public let sourceName: String
    /// The file as libsndfile reports it.
    public let decodedFormat: DecodedFormat
    /// The frames as the engine gets them: the file's own encoding in mono or stereo (exact
    /// for PCM and lossless files), or 32-bit float stereo for a lossy codec or a file of more
    /// than two channels (mapped by `decodedFormat.downmix`).
    public let format: WAVFormat
    public var frameCount: Int { decodedFormat.frameCount }

    /// Frames read from libsndfile at once (at least): a window of about 0.2 s at 44.1 kHz.
    public static let windowFrames = 8192

    private let handle: SoundFileHandle
    /// An MP3's decoder, which reads it in libsndfile's place (libsndfile stops at an estimated
    /// length); libsndfile's handle only identified it.
    private let mp3: MPG123Stream?
    /// How samples are read from libsndfile.
    private let reading: Reading
    /// The frame libsndfile reads next.
    private var cursor = 0
    private var window: PCMBuffer?

    private enum Reading { case short, int, float, double, downmix }

    /// Opens the file at `path` (a path, or a `file://` URL).
    public convenience init(contentsOf location: String) throws(AudioDecodeError) {
        let path = FileURL.path(location)
        var info = SF_INFO()
        let handle = try SoundFileHandle.open(path: path, info: &info)
        try self.init(handle: handle, info: info, sourceName: path, header: Self.header(path: path), path: path, data: nil)
    }

    /// Opens bytes in memory (copied).
    public convenience init(data: [UInt8]) throws(AudioDecodeError) {
        var info = SF_INFO()
        let handle = try SoundFileHandle.open(data: data, info: &info)
        try self.init(handle: handle, info: info, sourceName: "data", header: Array(data.prefix(Self.headerBytes)), path: nil, data: data)
    }

    /// How much of a file's start is read for its declared length (`declaredWAVFrames`).
    public static let headerBytes = 65536

    /// The first `headerBytes` of the file at `path` (fewer when it is shorter or unreadable).
    private static func header(path: String) -> [UInt8] {
        guard let descriptor = try? FileDescriptor.open(path) else { return [] }
        var bytes = [UInt8](repeating: 0, count: headerBytes)
        var count = 0
        while count < headerBytes {
            let got = bytes.withUnsafeMutableBytes { (try? descriptor.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[count...]))) ?? 0 }
            if got <= 0 { break }
            count += got
        }
        return Array(bytes.prefix(count))
    }

    /// The frames a RIFF/WAVE file's `data` chunk declares, when `header` (the file's first bytes)
    /// holds the `fmt ` and `data` chunk headers and the RIFF size covers that chunk: a file cut
    /// short says more than it holds. libsndfile plays such a file's frames that are there and
    /// ends there, as if complete; the decoder takes the declared length instead, so that reading
    /// past the cut is a decode error at the frame where the file stops. Nil when the header
    /// declares nothing usable: a streaming writer's 0xFFFFFFFF or 0, a chunk size that even the
    /// RIFF size does not cover (a lie, not a cut: the frames present are the file), or chunks
    /// past the first `headerBytes`.
    public static func declaredWAVFrames(_ header: [UInt8]) -> Int? {
        func le32(_ at: Int) -> UInt64 {
            (0..<4).reduce(0) { $0 | UInt64(header[at + $1]) << (8 * UInt64($1)) }
        }
        func tag(_ at: Int) -> [UInt8] { Array(header[at..<(at + 4)]) }
        guard header.count >= 12, tag(0) == Array("RIFF".utf8), tag(8) == Array("WAVE".utf8) else { return nil }
        let riffEnd = le32(4) + 8
        var blockAlign: UInt64 = 0
        var at = 12
        while at + 8 <= header.count {
            let size = le32(at + 4)
            if tag(at) == Array("fmt ".utf8), size >= 16, at + 8 + 14 <= header.count {
                blockAlign = UInt64(header[at + 8 + 12]) | UInt64(header[at + 8 + 13]) << 8
            }
            if tag(at) == Array("data".utf8) {
                guard blockAlign > 0, size != 0xFFFF_FFFF, size > 0, UInt64(at + 8) + size <= riffEnd else { return nil }
                return Int(size / blockAlign)
            }
            let next = UInt64(at) + 8 + size + (size & 1)
            guard next <= UInt64(header.count) else { return nil }
            at = Int(next)
        }
        return nil
    }

    private init(
        handle: consuming SoundFileHandle, info: SF_INFO, sourceName: String, header: [UInt8], path: String?, data: [UInt8]?
    ) throws(AudioDecodeError) {
        let name = Self.formatName(info.format)
        var channels = Int(info.channels)
        var rate = Int(info.samplerate)
        var length = info.frames
        let major = Int(info.format) & Int(SF_FORMAT_TYPEMASK)
        // MP3: libmpg123's own format and exact length replace libsndfile's estimate.
        let mp3 = major == Int(SF_FORMAT_MPEG) ? try MPG123Stream(source: sourceName, path: path, data: data) : nil
        if let mp3 {
            channels = mp3.channels
            rate = mp3.sampleRate
            length = sf_count_t(mp3.frameCount)
        }
        let order: ChannelOrder = major == Int(SF_FORMAT_OGG) ? .vorbis : .wave
        guard let downmix = Self.channelMap(handle.file, channels: channels).flatMap(StereoDownmix.init(positions:))
            ?? StereoDownmix(channels: channels, order: order)
        else {
            throw .unsupportedChannelCount(source: sourceName, format: name, channels: channels)
        }
        guard rate > 0 && rate <= WAVFile.maximumSampleRate else {
            throw .unsupportedSampleRate(source: sourceName, format: name, rate: rate)
        }
        // libsndfile says SF_COUNT_MAX when it cannot tell; 2^40 frames is 290 days at 44.1 kHz.
        guard length >= 0 && length < 1 << 40 else {
            throw .unknownLength(source: sourceName, format: name, frames: length)
        }
        let (encoding, reading) = Self.reading(subtype: Int(info.format) & Int(SF_FORMAT_SUBMASK), channels: channels)
        // A WAV file cut short: libsndfile's count is what is there; the header's is what was meant.
        var frames = Int(length)
        if major == Int(SF_FORMAT_WAV) || major == Int(SF_FORMAT_WAVEX), let declared = Self.declaredWAVFrames(header), declared > frames {
            frames = declared
        }
        self.handle = handle
        self.mp3 = mp3
        self.sourceName = sourceName
        self.reading = mp3 == nil ? reading : .float
        decodedFormat = DecodedFormat(name: name, channels: channels, sampleRate: rate, frameCount: frames, downmix: downmix,
            bitDepth: Self.bitDepth(subtype: Int(info.format) & Int(SF_FORMAT_SUBMASK)),
            isFloat: [Int(SF_FORMAT_FLOAT), Int(SF_FORMAT_DOUBLE)].contains(Int(info.format) & Int(SF_FORMAT_SUBMASK)))
        format = WAVFormat(encoding: encoding, channels: min(channels, 2), sampleRate: rate)
    }

    /// The file's own channel positions (a WAVE_FORMAT_EXTENSIBLE mask, a CAF layout), when it has
    /// them, has more than two channels, and each is one the downmix places; nil otherwise (the
    /// count's default order applies).
    private static func channelMap(_ file: OpaquePointer, channels: Int) -> [SpeakerPosition]? {
        guard channels > 2 && channels <= 8 else { return nil }
        var map = [Int32](repeating: 0, count: channels)
        let found = map.withUnsafeMutableBytes {
            sf_command(file, Int32(SFC_GET_CHANNEL_MAP_INFO), $0.baseAddress, Int32($0.count))
        }
        guard found == SF_TRUE else { return nil }
        var positions: [SpeakerPosition] = []
        for value in map {
            switch Int(value) {
            case Int(SF_CHANNEL_MAP_LEFT), Int(SF_CHANNEL_MAP_FRONT_LEFT): positions.append(.frontLeft)
            case Int(SF_CHANNEL_MAP_RIGHT), Int(SF_CHANNEL_MAP_FRONT_RIGHT): positions.append(.frontRight)
            case Int(SF_CHANNEL_MAP_CENTER), Int(SF_CHANNEL_MAP_FRONT_CENTER): positions.append(.frontCenter)
            case Int(SF_CHANNEL_MAP_LFE): positions.append(.lowFrequency)
            case Int(SF_CHANNEL_MAP_REAR_LEFT): positions.append(.backLeft)
            case Int(SF_CHANNEL_MAP_REAR_RIGHT): positions.append(.backRight)
            case Int(SF_CHANNEL_MAP_REAR_CENTER): positions.append(.backCenter)
            case Int(SF_CHANNEL_MAP_SIDE_LEFT): positions.append(.sideLeft)
            case Int(SF_CHANNEL_MAP_SIDE_RIGHT): positions.append(.sideRight)
            default: return nil
            }
        }
        return positions
    }

    /// The bits per sample of a linear PCM subtype; nil for the others.
    private static func bitDepth(subtype: Int) -> Int? {
        switch subtype {
        case Int(SF_FORMAT_PCM_S8), Int(SF_FORMAT_PCM_U8), Int(SF_FORMAT_DPCM_8): 8
        case Int(SF_FORMAT_DWVW_12): 12
        case Int(SF_FORMAT_PCM_16), Int(SF_FORMAT_DPCM_16), Int(SF_FORMAT_DWVW_16), Int(SF_FORMAT_ALAC_16): 16
        case Int(SF_FORMAT_ALAC_20): 20
        case Int(SF_FORMAT_PCM_24), Int(SF_FORMAT_DWVW_24), Int(SF_FORMAT_ALAC_24): 24
        case Int(SF_FORMAT_PCM_32), Int(SF_FORMAT_ALAC_32), Int(SF_FORMAT_FLOAT): 32
        case Int(SF_FORMAT_DOUBLE): 64
        default: nil
        }
    }

    /// The encoding given to the engine for a libsndfile subtype, and how it is read: integer
    /// formats through the integer reads, so that their samples arrive unchanged.
    private static func reading(subtype: Int, channels: Int) -> (SampleEncoding, Reading) {
        if channels > 2 { return (.float32, .downmix) }
        switch subtype {
        case Int(SF_FORMAT_PCM_S8), Int(SF_FORMAT_PCM_U8), Int(SF_FORMAT_DPCM_8): return (.unsigned8, .short)
        case Int(SF_FORMAT_PCM_16), Int(SF_FORMAT_DPCM_16), Int(SF_FORMAT_DWVW_16), Int(SF_FORMAT_ALAC_16): return (.signed16, .short)
        case Int(SF_FORMAT_PCM_24), Int(SF_FORMAT_DWVW_24), Int(SF_FORMAT_ALAC_20), Int(SF_FORMAT_ALAC_24): return (.signed24, .int)
        case Int(SF_FORMAT_PCM_32), Int(SF_FORMAT_ALAC_32): return (.signed32, .int)
        case Int(SF_FORMAT_DOUBLE): return (.float64, .double)
        default: return (.float32, .float)
        }
    }

    /// "WAV (PCM 16-bit)", "Ogg (Vorbis)", "MP3": libsndfile's own names for the container and
    /// the codec, shortened.
    static func formatName(_ format: Int32) -> String {
        let major = Int(format) & Int(SF_FORMAT_TYPEMASK)
        let subtype = Int(format) & Int(SF_FORMAT_SUBMASK)
        if major == Int(SF_FORMAT_MPEG) { return "MP3" }
        func name(_ value: Int, _ command: Int32) -> String? {
            var info = SF_FORMAT_INFO()
            info.format = Int32(value)
            guard sf_command(nil, command, &info, Int32(MemoryLayout<SF_FORMAT_INFO>.size)) == 0, let text = info.name else { return nil }
            return String(cString: text)
        }
        let container = (name(major, Int32(SFC_GET_FORMAT_INFO)) ?? "unknown").split(separator: " ").first.map(String.init) ?? "unknown"
        guard let codec = name(subtype, Int32(SFC_GET_FORMAT_INFO)) else { return container }
        return "\(container) (\(codec))"
    }

    public func frames(_ frames: Range<Int>) throws(FrameReadError) -> PCMBuffer {
        precondition(frames.lowerBound >= 0 && frames.upperBound <= frameCount)
        if let window, frames.lowerBound >= window.firstFrame, frames.lowerBound < window.firstFrame + window.frameCount {
            // A window that ends at a fault gives the frames before it, then the fault.
            let end = window.firstFrame + window.frameCount
            if frames.upperBound <= end || fault != nil {
                let size = format.bytesPerFrame
                let from = (frames.lowerBound - window.firstFrame) * size
                let upto = (min(frames.upperBound, end) - window.firstFrame) * size
                return PCMBuffer(bytes: Array(window.bytes[from..<upto]), format: format, firstFrame: frames.lowerBound)
            }
        }
        if let fault, frames.lowerBound == fault.frame { throw fault }
        let count = min(max(frames.count, Self.windowFrames), frameCount - frames.lowerBound)
        do {
            window = try read(from: frames.lowerBound, count: count)
        } catch {
            // The frames decoded before the fault are played first (the window holds them).
            guard window != nil else { throw error }
        }
        return try self.frames(frames)
    }

    /// Where the stream failed, while `window` holds the frames just before it.
    private var fault: FrameReadError?

    /// Reads `count` frames from `start` into a new window.
    private func read(from start: Int, count: Int) throws(FrameReadError) -> PCMBuffer {
        window = nil
        fault = nil
        if cursor != start {
            let moved = if let mp3 { mp3.seek(to: start) } else { sf_seek(handle.file, sf_count_t(start), Int32(SF_SEEK_SET)) == sf_count_t(start) }
            guard moved else {
                cursor = -1
                throw FrameReadError(frame: start, expected: frameCount, reason: "seek failed: \(mp3?.error ?? handle.error)")
            }
            cursor = start
        }
        let channels = decodedFormat.channels
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count * format.bytesPerFrame)
        let got: Int
        var mp3Fault: String?
        switch reading {
        case .float where mp3 != nil:
            var samples = [Float](repeating: 0, count: count * channels)
            (got, mp3Fault) = mp3!.read(into: &samples, count: count)
            samples.prefix(got * channels).withUnsafeBytes { bytes.append(contentsOf: $0) }
        case .short:
            var samples = [Int16](repeating: 0, count: count * channels)
            got = Int(samples.withUnsafeMutableBufferPointer { sf_readf_short(handle.file, $0.baseAddress, sf_count_t(count)) })
            if format.encoding == .unsigned8 {
                for sample in samples.prefix(got * channels) { bytes.append(UInt8(truncatingIfNeeded: Int(sample >> 8) + 128)) }
            } else {
                // Little-endian hosts (x86-64, arm64): the samples' memory is the LE encoding.
                samples.prefix(got * channels).withUnsafeBytes { bytes.append(contentsOf: $0) }
            }
        case .int:
            var samples = [Int32](repeating: 0, count: count * channels)
            got = Int(samples.withUnsafeMutableBufferPointer { sf_readf_int(handle.file, $0.baseAddress, sf_count_t(count)) })
            if format.encoding == .signed24 {
                // libsndfile left-aligns in 32 bits: the top three bytes are the sample.
                for sample in samples.prefix(got * channels) {
                    let value = UInt32(bitPattern: sample)
                    bytes.append(UInt8(truncatingIfNeeded: value >> 8))
                    bytes.append(UInt8(truncatingIfNeeded: value >> 16))
                    bytes.append(UInt8(truncatingIfNeeded: value >> 24))
                }
            } else {
                samples.prefix(got * channels).withUnsafeBytes { bytes.append(contentsOf: $0) }
            }
        case .float:
            var samples = [Float](repeating: 0, count: count * channels)
            got = Int(samples.withUnsafeMutableBufferPointer { sf_readf_float(handle.file, $0.baseAddress, sf_count_t(count)) })
            samples.prefix(got * channels).withUnsafeBytes { bytes.append(contentsOf: $0) }
        case .double:
            var samples = [Double](repeating: 0, count: count * channels)
            got = Int(samples.withUnsafeMutableBufferPointer { sf_readf_double(handle.file, $0.baseAddress, sf_count_t(count)) })
            samples.prefix(got * channels).withUnsafeBytes { bytes.append(contentsOf: $0) }
        case .downmix:
            var samples = [Float](repeating: 0, count: count * channels)
            got = Int(samples.withUnsafeMutableBufferPointer { sf_readf_float(handle.file, $0.baseAddress, sf_count_t(count)) })
            let stereo = decodedFormat.downmix.apply(samples, frames: max(0, got))
            stereo.withUnsafeBytes { bytes.append(contentsOf: $0) }
        }
        guard got == count else {
            cursor = -1
            let reason = mp3Fault ?? (mp3 == nil && sf_error(handle.file) != 0 ? handle.error : "the stream ends early")
            let error = FrameReadError(frame: start + max(0, got), expected: frameCount, reason: reason)
            if got > 0 {
                window = PCMBuffer(bytes: bytes, format: format, firstFrame: start)
                fault = error
            }
            throw error
        }
        fault = nil
        cursor = start + count
        return PCMBuffer(bytes: bytes, format: format, firstFrame: start)
    }
}

/// `file://` URLs as paths.
public enum FileURL {
    /// `path` as a `file://` URL (bytes other than unreserved characters and "/" percent-escaped),
    /// or nil when it is not absolute.
    public static func url(path: String) -> String? {
        guard path.hasPrefix("/") else { return nil }
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes = Array("file://".utf8)
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                bytes.append(byte)
            default:
                bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The path a `file://` URL names (percent-escapes decoded; a host of "localhost" or none),
    /// or `location` itself when it is not such a URL.
    public static func path(_ location: String) -> String {
        guard location.hasPrefix("file://") else { return location }
        var rest = Substring(location.dropFirst("file://".count))
        if rest.hasPrefix("localhost/") { rest = rest.dropFirst("localhost".count) }
        guard rest.hasPrefix("/") else { return location }
        var bytes: [UInt8] = []
        var utf8 = Array(rest.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2,
                let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
