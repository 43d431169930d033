// The player's delegate beside its event stream: the end, decode errors of truncated files (a
// WAV cut mid-data, a FLAC cut mid-frame) and interruptions; and the decoder's reading of a WAV
// header's declared length.
import AudioRouteCore
import AudioRouteDecoding
import AudioRouteSystem
import AudioSession
import Glibc
import Synchronization
import Testing

/// What a delegate was told, in order.
final class RecordingDelegate: AudioPlayerDelegate {
    enum Call: Sendable, Equatable {
        case finished(Bool)
        case decodeError(AudioPlayerError)
        case began
        case ended(InterruptionOptions)
    }
    let calls = Mutex<[Call]>([])

    func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool) { calls.withLock { $0.append(.finished(flag)) } }
    func audioPlayerDecodeErrorDidOccur(_ player: AudioPlayer, error: AudioPlayerError) { calls.withLock { $0.append(.decodeError(error)) } }
    func audioPlayerBeginInterruption(_ player: AudioPlayer) { calls.withLock { $0.append(.began) } }
    func audioPlayerEndInterruption(_ player: AudioPlayer, options: InterruptionOptions) { calls.withLock { $0.append(.ended(options)) } }

    /// The calls once there are `count` of them (or after about 5 s, whatever there is).
    func wait(for count: Int) async -> [Call] {
        for _ in 0..<500 {
            let now = calls.withLock { $0 }
            if now.count >= count { return now }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return calls.withLock { $0 }
    }
}

private let rate = 48000

/// A 16-bit stereo WAV of `frames` frames of a ramp, its bytes.
private func wavBytes(frames: Int) -> [UInt8] {
    let samples = (0..<(frames * 2)).map { Double(($0 * 7919) % 20000 - 10000) / 32768 }
    return WAVFile.encode(samples, format: WAVFormat(encoding: .signed16, channels: 2, sampleRate: rate))
}

/// The data chunk's offset in `bytes` (the encoder's plain 44-byte header).
private let dataOffset = 44

@Suite(.serialized) struct PlayerDelegateTests {
    /// A WAV cut mid-data plays the frames it holds, then the delegate gets a decode error naming
    /// the file, its format and the frame where it stops, then finished unsuccessfully. Before
    /// the decoder read the header's declared length this finished successfully.
    @Test func aWAVCutMidDataReachesTheDelegateAsADecodeError() async throws {
        try await withTemporaryDirectory { dir in
            try writeDevices(dir)
            let whole = wavBytes(frames: 10000)
            // 6000 frames and half of the next.
            try AtomicFile.write(Array(whole.prefix(dataOffset + 6000 * 4 + 2)), to: dir + "/cut.wav")
            let player = try AudioPlayer(
                contentsOf: dir + "/cut.wav", routeFile: dir + "/route.conf", configurationFiles: [dir + "/devices.conf"],
                periodFrames: 500, latencyMicroseconds: 5000)
            #expect(player.duration == 10000.0 / Double(rate), "the declared length")
            let delegate = RecordingDelegate()
            player.delegate = delegate
            try player.play()
            let events = await waitForEnd(player)
            #expect(events.last == .finished(successfully: false))
            let calls = await delegate.wait(for: 2)
            guard calls.count == 2, case .decodeError(.file(.read(let source, let format, let error))) = calls[0] else {
                Issue.record("\(calls)"); return
            }
            #expect(source == dir + "/cut.wav" && format.hasPrefix("WAV"), "\(source) \(format)")
            #expect(error.frame == 6000 && error.expected == 10000, "\(error)")
            #expect(calls[1] == .finished(false))
            // Every whole frame the file holds was played.
            #expect(((try? AtomicFile.read(dir + "/speaker.raw")) ?? []) == Array(whole[dataOffset..<(dataOffset + 6000 * 4)]))
        }
    }

    /// Half a FLAC file (cut mid-frame) reaches the delegate as a decode error too.
    @Test func aFLACCutMidFrameReachesTheDelegateAsADecodeError() async throws {
        try await withTemporaryDirectory { dir in
            try writeDevices(dir)
            try AtomicFile.write(wavBytes(frames: 48000), to: dir + "/whole.wav")
            try encode("flac", package: "flac", ["-s", dir + "/whole.wav", "-o", dir + "/whole.flac"])
            let flac = try AtomicFile.read(dir + "/whole.flac")
            try AtomicFile.write(Array(flac.prefix(flac.count / 2 + 7)), to: dir + "/cut.flac")
            let player = try AudioPlayer(
                contentsOf: dir + "/cut.flac", routeFile: dir + "/route.conf", configurationFiles: [dir + "/devices.conf"],
                periodFrames: 500, latencyMicroseconds: 5000)
            let delegate = RecordingDelegate()
            player.delegate = delegate
            try player.play()
            _ = await waitForEnd(player)
            let calls = await delegate.wait(for: 2)
            guard calls.count == 2, case .decodeError(.file(.read(let source, _, let error))) = calls[0] else {
                Issue.record("\(calls)"); return
            }
            #expect(source == dir + "/cut.flac" && error.frame > 0 && error.frame < 48000, "\(source) \(error)")
            #expect(calls[1] == .finished(false))
        }
    }

    /// A whole file: finished successfully, and nothing else.
    @Test func aWholeFileFinishesSuccessfully() async throws {
        try await withTemporaryDirectory { dir in
            try writeDevices(dir)
            try AtomicFile.write(wavBytes(frames: 3000), to: dir + "/a.wav")
            let player = try AudioPlayer(
                contentsOf: dir + "/a.wav", routeFile: dir + "/route.conf", configurationFiles: [dir + "/devices.conf"],
                periodFrames: 500, latencyMicroseconds: 5000)
            let delegate = RecordingDelegate()
            player.delegate = delegate
            try player.play()
            _ = await waitForEnd(player)
            #expect(await delegate.wait(for: 1) == [.finished(true)])
        }
    }

    /// An interruption's begin and end reach the delegate and the stream, with the end's options;
    /// a second begin while interrupted is not told again.
    @Test func interruptionsReachTheDelegateAndTheStream() async throws {
        try await withTemporaryDirectory { dir in
            try AtomicFile.write(wavBytes(frames: 3000), to: dir + "/a.wav")
            let player = try AudioPlayer(contentsOf: dir + "/a.wav", device: "null", routeFile: nil)
            let delegate = RecordingDelegate()
            player.delegate = delegate
            let began = AudioSessionNotification.interruption(InterruptionInfo(type: .began, reason: .default, options: []))
            player.handle(began)
            player.handle(began)
            player.handle(.interruption(InterruptionInfo(type: .ended, reason: nil, options: .shouldResume)))
            #expect(await delegate.wait(for: 2) == [.began, .ended(.shouldResume)])
            var events: [AudioPlayerEvent] = []
            for await event in player.events {
                events.append(event)
                if events.count == 2 { break }
            }
            #expect(events == [.interruptionBegan, .interruptionEnded(.shouldResume)])
        }
    }

    /// The delegate is held weakly.
    @Test func theDelegateIsWeak() async throws {
        try await withTemporaryDirectory { dir in
            try AtomicFile.write(wavBytes(frames: 3000), to: dir + "/a.wav")
            let player = try AudioPlayer(contentsOf: dir + "/a.wav", device: "null", routeFile: nil)
            var delegate: RecordingDelegate? = RecordingDelegate()
            player.delegate = delegate
            #expect(player.delegate != nil)
            delegate = nil
            #expect(player.delegate == nil)
        }
    }
}

@Suite struct DeclaredWAVLengthTests {
    /// The header's declaration, as the decoder reads it.
    @Test func theDataChunksDeclaredFrames() {
        let whole = wavBytes(frames: 1000)
        #expect(SoundFileDecoder.declaredWAVFrames(whole) == 1000)
        #expect(SoundFileDecoder.declaredWAVFrames(Array(whole.prefix(100))) == 1000, "cut: the header still says 1000")
        // A RIFF size that does not cover the data chunk: the chunk size is a lie, not a cut.
        var lying = whole
        lying.replaceSubrange(4..<8, with: [0xB4, 0x01, 0, 0])  // 36 + 400 bytes
        #expect(SoundFileDecoder.declaredWAVFrames(lying) == nil)
        // A streaming writer's unknown size.
        var streaming = whole
        streaming.replaceSubrange(40..<44, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(SoundFileDecoder.declaredWAVFrames(streaming) == nil)
        #expect(SoundFileDecoder.declaredWAVFrames(Array(whole.prefix(30))) == nil, "no data chunk header")
        #expect(SoundFileDecoder.declaredWAVFrames(Array("RIFX".utf8) + whole.dropFirst(4)) == nil)
    }

    /// A cut WAV from data: its declared length; a read across the cut gives the frames before
    /// it, and a read at the cut fails there.
    @Test func aCutWAVFromDataFailsWhereItStops() throws {
        let whole = wavBytes(frames: 20000)
        let decoder = try SoundFileDecoder(data: Array(whole.prefix(dataOffset + 15000 * 4)))
        #expect(decoder.frameCount == 20000)
        #expect(try decoder.frames(0..<15000).frameCount == 15000)
        // The frames before the cut, then the fault at the cut.
        #expect(try decoder.frames(10000..<20000).frameCount == 5000)
        #expect(throws: FrameReadError(frame: 15000, expected: 20000, reason: "the stream ends early")) {
            _ = try decoder.frames(15000..<16000)
        }
    }
}
