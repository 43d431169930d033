import ArgumentParser
import AudioRouteCore
import AudioSession

/// `audioroute hardware [--json]`: the route's hardware as an app's session reads it.
struct Hardware: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the route's hardware as a session reads it: rate, I/O buffer, latencies, channels, volume.",
        discussion: """
            Read in this process from the devices the daemon's route file names (docs/client.md, \
            "The route's hardware"), opened with the preferences given here; no D-Bus call. 0 where \
            nothing can be read. With --json: one object with the values, keyed by AVAudioSession's names.
            """
    )

    @OptionGroup var daemon: BusOptions

    @Flag(help: "Print one JSON document.")
    var json = false

    @Option(help: "The preferred sample rate (Hz).")
    var rate: Double?

    @Option(name: .customLong("io-buffer"), help: "The preferred I/O buffer duration (seconds).")
    var ioBuffer: Double?

    @Option(help: "The preferred output channel count.")
    var channels: Int?

    func run() async throws {
        LogOptions.bootstrap(level: .warning)
        let session = daemon.session()
        do {
            if let rate { try await session.setPreferredSampleRate(rate) }
            if let ioBuffer { try await session.setPreferredIOBufferDuration(ioBuffer) }
            if let channels { try await session.setPreferredOutputNumberOfChannels(channels) }
        } catch {
            throw ValidationError("\(error)")
        }
        let values: [(String, JSON)] = [
            ("sampleRate", .double(await session.sampleRate)),
            ("ioBufferDuration", .double(await session.ioBufferDuration)),
            ("outputLatency", .double(await session.outputLatency)),
            ("inputLatency", .double(await session.inputLatency)),
            ("outputNumberOfChannels", .integer(Int64(await session.outputNumberOfChannels))),
            ("maximumOutputNumberOfChannels", .integer(Int64(await session.maximumOutputNumberOfChannels))),
            ("inputNumberOfChannels", .integer(Int64(await session.inputNumberOfChannels))),
            ("maximumInputNumberOfChannels", .integer(Int64(await session.maximumInputNumberOfChannels))),
            ("outputVolume", .double(Double(await session.outputVolume))),
            ("inputGain", .double(Double(await session.inputGain))),
            ("isInputGainSettable", .bool(await session.isInputGainSettable)),
            ("recordPermission", .string(await session.recordPermission.rawValue)),
        ]
        var out = OutputBuffer()
        if json {
            out.append(JSON.object(values.map { JSON.Member($0.0, $0.1) }).text)
        } else {
            for (name, value) in values {
                if case .string(let text) = value { out.append("\(name): \(text)") } else { out.append("\(name): \(value.text)") }
            }
        }
        out.flush()
    }
}
