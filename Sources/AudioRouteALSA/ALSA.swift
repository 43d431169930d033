// A small libasound wrapper: configuration trees and PCMs, enough to open a
// named PCM from a given configuration and write frames (tests now, the player
// later). Each owned handle lives in exactly one ~Copyable type that frees it.
import AudioRouteCore
import AudioRoutePlugin
import AudioRouteSystem
import CALSA
import Synchronization

/// A libasound call that failed, with libasound's own text (snd_strerror).
public struct ALSAError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The negative error code libasound returned.
    public var code: Int32
    /// What was attempted, with its subject ("snd_pcm_open audioroute").
    public var operation: String

    public init(code: Int32, operation: String) {
        self.code = code
        self.operation = operation
    }

    /// libasound's text for the code.
    public var message: String { String(cString: snd_strerror(code)) }

    public var description: String { "\(operation): \(message)" }

    @discardableResult
    static func check(_ result: Int32, _ operation: @autoclosure () -> String) throws(ALSAError) -> Int32 {
        guard result >= 0 else { throw ALSAError(code: result, operation: operation()) }
        return result
    }
}

/// An snd_input_t, closed when it goes away.
private struct ALSAInput: ~Copyable {
    let handle: OpaquePointer

    init(file path: String) throws(ALSAError) {
        var input: OpaquePointer?
        try ALSAError.check(snd_input_stdio_open(&input, path, "r"), "snd_input_stdio_open \(path)")
        handle = input!
    }

    init(buffer: UnsafeRawBufferPointer) throws(ALSAError) {
        var input: OpaquePointer?
        // snd_input_buffer_open copies the buffer.
        let base = buffer.baseAddress?.assumingMemoryBound(to: CChar.self)
        try ALSAError.check(snd_input_buffer_open(&input, base, buffer.count), "snd_input_buffer_open")
        handle = input!
    }

    deinit { snd_input_close(handle) }
}

/// A configuration tree (snd_config_t), deleted when it goes away.
///
/// PCMs are opened from it with `PCM(name:stream:configuration:)`, which is how
/// tests point libasound at a configuration without touching the process-wide
/// one that `snd_pcm_open` uses.
public struct ALSAConfiguration: ~Copyable {
    let handle: OpaquePointer

    /// An empty configuration.
    public init() throws(ALSAError) {
        var top: OpaquePointer?
        try ALSAError.check(snd_config_top(&top), "snd_config_top")
        handle = top!
    }

    /// A private copy of the system configuration (alsa.conf and what it
    /// includes: `null`, `hw`, `plughw`, the user's ~/.asoundrc).
    public static func system() throws(ALSAError) -> ALSAConfiguration {
        var global: OpaquePointer?
        try ALSAError.check(snd_config_update_ref(&global), "snd_config_update_ref")
        defer { snd_config_unref(global) }
        var copy: OpaquePointer?
        try ALSAError.check(snd_config_copy(&copy, global), "snd_config_copy")
        return ALSAConfiguration(owning: copy!)
    }

    private init(owning handle: OpaquePointer) { self.handle = handle }

    /// Merges the configuration file at `path` into this tree.
    public mutating func load(file path: String) throws(ALSAError) {
        let input = try ALSAInput(file: path)
        try ALSAError.check(snd_config_load(handle, input.handle), "snd_config_load \(path)")
    }

    /// Merges configuration text into this tree.
    public mutating func load(text: String) throws(ALSAError) {
        let bytes = Array(text.utf8)
        let handle = self.handle
        let result: Result<Void, ALSAError> = bytes.withUnsafeBytes { buffer in
            do throws(ALSAError) {
                let input = try ALSAInput(buffer: buffer)
                try ALSAError.check(snd_config_load(handle, input.handle), "snd_config_load")
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    /// The string value at a dotted key ("pcm.audioroute.slave.pcm"), or nil
    /// when the key is absent or not a string.
    public func string(at key: String) -> String? {
        var node: OpaquePointer?
        guard snd_config_search(handle, key, &node) >= 0, let node else { return nil }
        var value: UnsafePointer<CChar>?
        guard snd_config_get_string(node, &value) >= 0, let value else { return nil }
        return String(cString: value)
    }

    /// Whether the dotted key exists.
    public func contains(_ key: String) -> Bool {
        var node: OpaquePointer?
        return snd_config_search(handle, key, &node) >= 0
    }

    deinit { snd_config_delete(handle) }
}

/// Which way a PCM carries audio.
public enum PCMStream: Sendable {
    case playback
    case capture

    var raw: snd_pcm_stream_t { self == .playback ? SND_PCM_STREAM_PLAYBACK : SND_PCM_STREAM_CAPTURE }
}

/// A sample format, with its Swift name.
public struct PCMFormat: RawRepresentable, Sendable, Hashable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let u8 = PCMFormat(rawValue: SND_PCM_FORMAT_U8.rawValue)
    public static let s16LE = PCMFormat(rawValue: SND_PCM_FORMAT_S16_LE.rawValue)
    /// 24-bit in 3 bytes, as WAV files store it.
    public static let s24_3LE = PCMFormat(rawValue: SND_PCM_FORMAT_S24_3LE.rawValue)
    public static let s32LE = PCMFormat(rawValue: SND_PCM_FORMAT_S32_LE.rawValue)
    public static let float32LE = PCMFormat(rawValue: SND_PCM_FORMAT_FLOAT_LE.rawValue)
    public static let float64LE = PCMFormat(rawValue: SND_PCM_FORMAT_FLOAT64_LE.rawValue)

    /// The ALSA format holding samples of `encoding` byte for byte.
    public init(_ encoding: SampleEncoding) {
        switch encoding {
        case .unsigned8: self = .u8
        case .signed16: self = .s16LE
        case .signed24: self = .s24_3LE
        case .signed32: self = .s32LE
        case .float32: self = .float32LE
        case .float64: self = .float64LE
        }
    }

    /// Bytes per sample.
    public var sampleBytes: Int { Int(snd_pcm_format_physical_width(snd_pcm_format_t(rawValue: rawValue))) / 8 }
}

/// An open PCM (snd_pcm_t), closed when it goes away.
public struct PCM: ~Copyable {
    let handle: OpaquePointer
    /// The name it was opened by.
    public let name: String
    private var frameBytes = 0
    /// The plugin's mover behind a PCM that follows the route (`init(followingRoute:)`), else nil.
    private let mover: OpaquePointer?

    /// Opens a PCM that follows the route file's `routePCM` through the ALSA plugin's mover
    /// (ar_follower_open): the same open, move, replay and drain as an app's `audioroute` PCM,
    /// without a session of its own (the caller's session is the one in the tower). It moves when
    /// told (`routeChanged`); a device gone under a write fails it with ENODEV. `configurationFiles`
    /// are read over the system's configuration, before the route file, at every open and move.
    public init(followingRoute routeFile: String, routePCM: String, configurationFiles: [String] = []) throws(ALSAError) {
        var pcm: OpaquePointer?
        var mover: OpaquePointer?
        let code = withCStrings(configurationFiles) { files in
            ar_follower_open(&pcm, &mover, routeFile, routePCM, files.baseAddress, files.count)
        }
        try ALSAError.check(code, "snd_pcm_open \(routePCM) (following \(routeFile))")
        handle = pcm!
        self.mover = mover
        name = routePCM
    }

    /// Tells a route-following PCM that the route changed: at the next write it reads the route
    /// file and moves if it names another device (or reopens a device it lost). Nothing otherwise.
    public func routeChanged() {
        if let mover { ar_follower_route_changed(mover) }
    }

    /// The last move of a route-following PCM, once: the device left and the one opened, and the
    /// frames written again on the new one (what a dropped old device had not played).
    public func takeMove() -> (from: String, to: String, replayedFrames: Int)? {
        guard let mover else { return nil }
        var from = [CChar](repeating: 0, count: 512), to = [CChar](repeating: 0, count: 512)
        var replayed = 0
        guard ar_follower_take_move(mover, &from, from.count, &to, to.count, &replayed) == 1 else { return nil }
        return (Self.string(from), Self.string(to), replayed)
    }

    /// The route's device a route-following PCM forwards to now; nil for any other PCM.
    public var routeDevice: String? {
        guard let mover, let device = ar_follower_device(mover) else { return nil }
        return String(cString: device)
    }

    private static func string(_ chars: [CChar]) -> String {
        chars.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// Opens `name` as defined in `configuration` (snd_pcm_open_lconf). The
    /// configuration may be dropped once the PCM is open.
    public init(name: String, stream: PCMStream = .playback, configuration: borrowing ALSAConfiguration) throws(ALSAError) {
        var pcm: OpaquePointer?
        try ALSAError.check(snd_pcm_open_lconf(&pcm, name, stream.raw, 0, configuration.handle), "snd_pcm_open \(name)")
        handle = pcm!
        self.name = name
        mover = nil
    }

    /// Opens `name` from the system configuration (snd_pcm_open), as aplay does.
    public init(name: String, stream: PCMStream = .playback) throws(ALSAError) {
        var pcm: OpaquePointer?
        try ALSAError.check(snd_pcm_open(&pcm, name, stream.raw, 0), "snd_pcm_open \(name)")
        handle = pcm!
        self.name = name
        mover = nil
    }

    /// Sets interleaved access with the given format, channels and rate,
    /// resampling in software where the device needs it (snd_pcm_set_params).
    public mutating func configure(format: PCMFormat, channels: Int, rate: Int, latencyMicroseconds: Int = 100_000) throws(ALSAError) {
        try ALSAError.check(
            snd_pcm_set_params(
                handle, snd_pcm_format_t(rawValue: format.rawValue), SND_PCM_ACCESS_RW_INTERLEAVED,
                UInt32(channels), UInt32(rate), 1, UInt32(latencyMicroseconds)),
            "snd_pcm_set_params \(name)")
        frameBytes = format.sampleBytes * channels
    }

    /// Writes whole interleaved frames, recovering from an underrun once per
    /// write. Returns the number of frames written (all of them unless an error is thrown).
    @discardableResult
    public func write(_ bytes: [UInt8]) throws(ALSAError) -> Int {
        let result: Result<Int, ALSAError> = bytes.withUnsafeBytes { buffer in
            do throws(ALSAError) { return .success(try write(buffer)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Writes whole interleaved frames from `buffer`. An underrun (EPIPE), a
    /// suspend (ESTRPIPE) or a signal (EINTR) is recovered with snd_pcm_recover
    /// and the write goes on; it fails if recovery fails or the same write
    /// needs recovering three times in a row without progress. A device that
    /// went away fails with ENODEV, also through dmix, which reports it as EIO.
    @discardableResult
    public func write(_ buffer: UnsafeRawBufferPointer) throws(ALSAError) -> Int {
        precondition(frameBytes > 0, "configure the PCM before writing")
        precondition(buffer.count % frameBytes == 0, "write whole frames")
        let frames = buffer.count / frameBytes
        guard frames > 0 else { return 0 }
        var done = 0
        var recoveries = 0
        while done < frames {
            let result = snd_pcm_writei(handle, buffer.baseAddress! + done * frameBytes, snd_pcm_uframes_t(frames - done))
            if result < 0 {
                let code = Int32(result)
                guard recoveries < 3, snd_pcm_recover(handle, code, 1) >= 0 else {
                    throw ALSAError(code: Self.disconnected(handle, code), operation: "snd_pcm_writei \(name)")
                }
                recoveries += 1
                continue
            }
            recoveries = 0
            done += Int(result)
        }
        return done
    }

    /// `code`, or ENODEV when it is EIO and the PCM's card went away: the ALSA plugin's rule
    /// (ar_pcm_disconnected), the one both clients apply.
    static func disconnected(_ handle: OpaquePointer, _ code: Int32) -> Int32 {
        ar_pcm_disconnected(handle, code)
    }

    /// The buffer's size in frames as configured (snd_pcm_get_params), or nil before `configure`.
    public var bufferFrames: Int? {
        var buffer: snd_pcm_uframes_t = 0
        var period: snd_pcm_uframes_t = 0
        guard frameBytes > 0, snd_pcm_get_params(handle, &buffer, &period) >= 0, buffer > 0 else { return nil }
        return Int(buffer)
    }

    /// Bytes per frame as configured (0 before `configure`).
    public var bytesPerFrame: Int { frameBytes }

    /// Plays out what was written and stops (snd_pcm_drain).
    public func drain() throws(ALSAError) {
        try ALSAError.check(snd_pcm_drain(handle), "snd_pcm_drain \(name)")
    }

    /// Makes a drained or dropped PCM ready to take frames again (snd_pcm_prepare).
    public func prepare() throws(ALSAError) {
        try ALSAError.check(snd_pcm_prepare(handle), "snd_pcm_prepare \(name)")
    }

    /// Stops at once, discarding what was written and not yet played (snd_pcm_drop).
    public func drop() throws(ALSAError) {
        try ALSAError.check(snd_pcm_drop(handle), "snd_pcm_drop \(name)")
    }

    /// Frames written and not yet played (snd_pcm_delay), or nil when the PCM cannot tell.
    public func delay() -> Int? {
        var frames: snd_pcm_sframes_t = 0
        return snd_pcm_delay(handle, &frames) >= 0 ? Int(frames) : nil
    }

    deinit { snd_pcm_close(handle) }
}

/// libasound's own error messages ("UCM is not supported for this HDA model", "unable to open
/// file ..."), taken from it instead of its stderr: the UCM helper reports them with the answer
/// they explain and logs them at the level it chooses, so that every card without a profile does
/// not write libasound's lines to the daemon's journal.
public enum ALSALibraryMessages {
    private static let messages = Mutex<[String]>([])

    /// From now on, libasound's messages are kept (the last 16), not written to stderr.
    public static func capture() {
        audioroute_alsa_set_message_target { _, text in
            guard let text else { return }
            let message = String(cString: text)
            ALSALibraryMessages.messages.withLock { messages in
                messages.append(message)
                if messages.count > 16 { messages.removeFirst(messages.count - 16) }
            }
        }
    }

    /// The messages kept since the last call, oldest first; the list is emptied.
    public static func take() -> [String] {
        messages.withLock { messages in
            defer { messages = [] }
            return messages
        }
    }
}

/// `strings` as C strings, for the duration of `body`.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafeBufferPointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies = strings.map { string -> UnsafeMutablePointer<CChar> in
        let utf8 = string.utf8CString
        let copy = UnsafeMutablePointer<CChar>.allocate(capacity: utf8.count)
        _ = UnsafeMutableBufferPointer(start: copy, count: utf8.count).initialize(from: utf8)
        return copy
    }
    defer { copies.forEach { $0.deallocate() } }
    return copies.map { UnsafePointer<CChar>?(UnsafePointer($0)) }.withUnsafeBufferPointer(body)
}
