// A RIFF/WAVE decoder over bytes already in memory. Pure Swift: reading the
// file is the caller's job (AudioSession), so the parser is unit-testable
// and cannot touch the file system. It never allocates by a size the file
// declares: every declared size is checked against the bytes present first,
// and the samples stay in the caller's buffer (a range, no copy).

/// How one sample is stored in the file (little-endian, interleaved).
public enum SampleEncoding: Sendable, Hashable, CaseIterable {
    /// 8-bit unsigned integer, 128 is silence.
    case unsigned8
    /// 16-bit signed integer.
    case signed16
    /// 24-bit signed integer packed in 3 bytes.
    case signed24
    /// 32-bit signed integer.
    case signed32
    /// 32-bit IEEE float, nominal range −1…1.
    case float32
    /// 64-bit IEEE float, nominal range −1…1.
    case float64

    /// Bytes one sample takes.
    public var bytesPerSample: Int {
        switch self {
        case .unsigned8: 1
        case .signed16: 2
        case .signed24: 3
        case .signed32, .float32: 4
        case .float64: 8
        }
    }

    /// Whether the samples are IEEE floats.
    public var isFloat: Bool { self == .float32 || self == .float64 }
}

/// What the `fmt ` chunk says, once validated.
public struct WAVFormat: Sendable, Hashable {
    public var encoding: SampleEncoding
    /// 1 (mono) or 2 (stereo).
    public var channels: Int
    /// Frames per second.
    public var sampleRate: Int

    public init(encoding: SampleEncoding, channels: Int, sampleRate: Int) {
        self.encoding = encoding
        self.channels = channels
        self.sampleRate = sampleRate
    }

    /// Bytes per interleaved frame (the block align).
    public var bytesPerFrame: Int { encoding.bytesPerSample * channels }
}

/// Why bytes are not a WAV file this decoder can play. Each case names the fault.
public enum WAVError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The bytes end inside `part` (a header, or a chunk whose size the RIFF
    /// header agrees with): `needed` bytes from `offset`, `available` there.
    case truncated(part: String, offset: Int, needed: Int, available: Int)
    /// Not a RIFF/WAVE file at all.
    case notWAV(reason: String)
    /// A format tag (1 PCM, 3 float, 0xFFFE extensible with its sub-format's
    /// tag when the GUID is the standard one) and sample width this decoder does not play.
    case unsupportedEncoding(formatTag: UInt16, bitsPerSample: Int)
    /// A chunk declares more bytes than the file, and even than its own RIFF
    /// header, holds: the header lies. Nothing of that size is allocated.
    case declaredSizeExceedsFile(chunk: String, declared: UInt64, available: Int)
    /// The `fmt ` chunk says 0 channels.
    case zeroChannels
    /// The `fmt ` chunk says 0 frames per second.
    case zeroSampleRate
    /// More than two channels: refused (pan and the stereo output are defined for 1 or 2).
    case unsupportedChannelCount(Int)
    /// A rate above 768 kHz: no ALSA device plays it.
    case unsupportedSampleRate(Int)
    /// The block align is not channels × bytes per sample.
    case blockAlignMismatch(declared: Int, expected: Int)
    /// A required chunk (`fmt ` or `data`) is absent, or `data` comes first.
    case missingChunk(String)
    /// A chunk too short or inconsistent for what it must hold.
    case malformedChunk(String, reason: String)

    public var description: String {
        switch self {
        case let .truncated(part, offset, needed, available):
            "truncated WAV: \(part) at byte \(offset) needs \(needed) bytes, \(available) left"
        case let .notWAV(reason): "not a WAV file: \(reason)"
        case let .unsupportedEncoding(tag, bits):
            "unsupported WAV encoding: format tag 0x\(String(tag, radix: 16)), \(bits) bits per sample"
        case let .declaredSizeExceedsFile(chunk, declared, available):
            "WAV chunk '\(chunk)' declares \(declared) bytes but only \(available) follow it"
        case .zeroChannels: "WAV format declares 0 channels"
        case .zeroSampleRate: "WAV format declares a sample rate of 0"
        case let .unsupportedChannelCount(count): "WAV has \(count) channels; only mono and stereo are played"
        case let .unsupportedSampleRate(rate): "WAV sample rate \(rate) Hz is above 768000 Hz"
        case let .blockAlignMismatch(declared, expected):
            "WAV block align is \(declared), expected \(expected) (channels × bytes per sample)"
        case let .missingChunk(id): "WAV has no '\(id)' chunk before its samples"
        case let .malformedChunk(id, reason): "malformed WAV chunk '\(id)': \(reason)"
        }
    }
}

/// A decoded WAV file: its format and where its samples are in `bytes`.
public struct WAVFile: Sendable {
    /// The whole file, as given.
    public let bytes: [UInt8]
    public let format: WAVFormat
    /// Where the interleaved samples of whole frames are in `bytes`. A trailing
    /// partial frame in the `data` chunk is left out.
    public let dataRange: Range<Int>

    /// Number of whole frames.
    public var frameCount: Int { dataRange.count / format.bytesPerFrame }

    /// Largest rate accepted.
    public static let maximumSampleRate = 768_000

    /// Parses `bytes`. Chunks other than `fmt ` and `data` are skipped (with
    /// their pad byte); `fmt ` must come before `data`.
    public init(bytes: [UInt8]) throws(WAVError) {
        self.bytes = bytes
        let count = bytes.count
        let riff: [UInt8] = Array("RIFF".utf8)
        // The magic first: "not a WAV" beats "too short" when what is there is already wrong.
        for index in 0..<min(4, count) where bytes[index] != riff[index] {
            throw .notWAV(reason: "no RIFF header (starts with \(Self.fourCC(bytes, 0, min(4, count))))")
        }
        guard count >= 12 else { throw .truncated(part: "RIFF header", offset: 0, needed: 12, available: count) }
        guard bytes[8..<12].elementsEqual("WAVE".utf8) else {
            throw .notWAV(reason: "RIFF form is '\(Self.fourCC(bytes, 8, 4))', not 'WAVE'")
        }
        // Where the RIFF header says the file ends (maybe past the real end, when truncated).
        let riffEnd = 8 + UInt64(Self.u32(bytes, 4))

        var offset = 12
        var format: WAVFormat?
        while true {
            let left = count - offset
            guard left >= 8 else {
                throw .truncated(part: format == nil ? "chunk header (looking for 'fmt ')" : "chunk header (looking for 'data')",
                                 offset: offset, needed: 8, available: left)
            }
            let id = Self.fourCC(bytes, offset, 4)
            let size = UInt64(Self.u32(bytes, offset + 4))
            let body = offset + 8
            let available = count - body
            if size > UInt64(available) {
                // The file ends inside this chunk. If the RIFF header covers the
                // chunk, the file was cut short; if not, the chunk's size is a lie.
                if UInt64(body) + size <= riffEnd {
                    throw .truncated(part: "'\(id)' chunk", offset: body, needed: Int(size), available: available)
                }
                throw .declaredSizeExceedsFile(chunk: id, declared: size, available: available)
            }
            let end = body + Int(size)
            switch id {
            case "fmt ":
                guard format == nil else { throw .malformedChunk(id, reason: "a second 'fmt ' chunk") }
                format = try Self.parseFormat(bytes[body..<end])
            case "data":
                guard let format else { throw .missingChunk("fmt ") }
                let whole = (end - body) / format.bytesPerFrame * format.bytesPerFrame
                self.format = format
                self.dataRange = body..<(body + whole)
                return
            default:
                break
            }
            // Chunks are word-aligned: an odd size is followed by a pad byte
            // (which a file may omit at its very end).
            offset = min(count, end + Int(size & 1))
        }
    }

    private static func parseFormat(_ chunk: ArraySlice<UInt8>) throws(WAVError) -> WAVFormat {
        let bytes = Array(chunk)
        guard bytes.count >= 16 else {
            throw .malformedChunk("fmt ", reason: "\(bytes.count) bytes, at least 16 needed")
        }
        var tag = u16(bytes, 0)
        let channels = Int(u16(bytes, 2))
        let rate = u32(bytes, 4)
        let blockAlign = Int(u16(bytes, 12))
        let bits = Int(u16(bytes, 14))
        if tag == 0xFFFE {
            // WAVE_FORMAT_EXTENSIBLE: cbSize (22), valid bits, channel mask, sub-format GUID.
            guard bytes.count >= 40, u16(bytes, 16) >= 22 else {
                throw .malformedChunk("fmt ", reason: "extensible format with \(bytes.count) bytes, 40 needed")
            }
            // The GUID is the sub-format tag followed by the KSDATAFORMAT base.
            let base: [UInt8] = [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71]
            guard bytes[26..<40].elementsEqual(base) else {
                throw .unsupportedEncoding(formatTag: 0xFFFE, bitsPerSample: bits)
            }
            tag = u16(bytes, 24)
            let valid = Int(u16(bytes, 18))
            if valid > bits {
                throw .malformedChunk("fmt ", reason: "\(valid) valid bits in a \(bits)-bit container")
            }
        }
        let encoding: SampleEncoding
        switch (tag, bits) {
        case (1, 8): encoding = .unsigned8
        case (1, 16): encoding = .signed16
        case (1, 24): encoding = .signed24
        case (1, 32): encoding = .signed32
        case (3, 32): encoding = .float32
        case (3, 64): encoding = .float64
        default: throw .unsupportedEncoding(formatTag: tag, bitsPerSample: bits)
        }
        guard channels > 0 else { throw .zeroChannels }
        guard rate > 0 else { throw .zeroSampleRate }
        guard channels <= 2 else { throw .unsupportedChannelCount(channels) }
        guard rate <= maximumSampleRate else { throw .unsupportedSampleRate(Int(rate)) }
        let format = WAVFormat(encoding: encoding, channels: channels, sampleRate: Int(rate))
        guard blockAlign == format.bytesPerFrame else {
            throw .blockAlignMismatch(declared: blockAlign, expected: format.bytesPerFrame)
        }
        return format
    }

    static func u16(_ bytes: [UInt8], _ at: Int) -> UInt16 {
        UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
    }

    static func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }

    /// A chunk id for messages: printable ASCII as is, other bytes as `\xNN`.
    static func fourCC(_ bytes: [UInt8], _ at: Int, _ length: Int) -> String {
        var text = ""
        for byte in bytes[at..<(at + length)] {
            if byte >= 0x20 && byte < 0x7F {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16)
                text += "\\x" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return text
    }
}

extension WAVFile {
    /// A WAV file's bytes holding `samples` (interleaved, −1…1) in `format`:
    /// a 16-byte `fmt ` chunk, or the 40-byte WAVE_FORMAT_EXTENSIBLE one when
    /// `extensible` is set. For tests and generated tones.
    public static func encode(_ samples: [Double], format: WAVFormat, extensible: Bool = false) -> [UInt8] {
        var data: [UInt8] = []
        data.reserveCapacity(samples.count * format.encoding.bytesPerSample)
        for sample in samples { format.encoding.append(sample, to: &data) }
        let bits = format.encoding.bytesPerSample * 8
        let tag: UInt16 = format.encoding.isFloat ? 3 : 1
        var fmt: [UInt8] = []
        appendLE(&fmt, UInt32(extensible ? 0xFFFE : tag), 2)
        appendLE(&fmt, UInt32(format.channels), 2)
        appendLE(&fmt, UInt32(format.sampleRate), 4)
        appendLE(&fmt, UInt32(format.sampleRate * format.bytesPerFrame), 4)
        appendLE(&fmt, UInt32(format.bytesPerFrame), 2)
        appendLE(&fmt, UInt32(bits), 2)
        if extensible {
            appendLE(&fmt, 22, 2)
            appendLE(&fmt, UInt32(bits), 2)
            appendLE(&fmt, format.channels == 1 ? 0x4 : 0x3, 4)
            appendLE(&fmt, UInt32(tag), 2)
            fmt += [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71]
        }
        var file: [UInt8] = Array("RIFF".utf8)
        appendLE(&file, UInt32(4 + 8 + fmt.count + 8 + data.count + (data.count & 1)), 4)
        file += Array("WAVEfmt ".utf8)
        appendLE(&file, UInt32(fmt.count), 4)
        file += fmt
        file += Array("data".utf8)
        appendLE(&file, UInt32(data.count), 4)
        file += data
        if data.count & 1 == 1 { file.append(0) }
        return file
    }

    private static func appendLE(_ out: inout [UInt8], _ value: UInt32, _ count: Int) {
        for index in 0..<count { out.append(UInt8(truncatingIfNeeded: value >> (8 * UInt32(index)))) }
    }
}
