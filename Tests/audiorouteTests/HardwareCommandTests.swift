// `audioroute hardware`: the built binary reads the route's hardware from the route file in
// $XDG_RUNTIME_DIR, no daemon needed. The device is libasound's null PCM, which takes any rate,
// period and channel count: what it installs is what was asked.
import AudioRouteCore
import AudioRouteSystem
import Glibc
import Testing

@Suite struct HardwareCommandTests {
    static func hardware(_ arguments: [String], runtime: String) throws -> (status: Int32, out: String, err: String) {
        let child = try ChildProcess(productsDirectory + "/audioroute", ["hardware"] + arguments, environment: ["XDG_RUNTIME_DIR": runtime, "HOME": runtime])
        let out = CLI.readAll(child.stdout)
        guard let status = child.wait(seconds: 20) else {
            child.signal(SIGKILL)
            throw TestFailure("audioroute hardware \(arguments) did not finish")
        }
        return (status, out, child.availableStderr())
    }

    static func routeFile(_ runtime: String) throws {
        try AtomicFile.createDirectory(runtime + "/audioroute", mode: 0o700)
        try writeText(
            runtime + "/audioroute/asound.conf",
            """
            pcm.bench_out { type null chmap [ "FL,FR" ] }
            pcm.!audioroute_route { type plug slave.pcm "bench_out" }
            pcm.!audioroute_route_capture { type plug slave.pcm "null" }
            """)
    }

    @Test func thePreferencesGivenAreWhatTheDeviceInstalls() async throws {
        try await withTemporaryDirectory { dir in
            try Self.routeFile(dir)
            let result = try Self.hardware(["--json", "--rate", "44100", "--io-buffer", "0.01", "--channels", "1"], runtime: dir)
            #expect(result.status == 0, "\(result.err)")
            let json = try JSON.parse(result.out)
            #expect(json["sampleRate"] == .double(44_100))
            #expect(json["ioBufferDuration"] == .double(0.01))
            #expect(json["outputLatency"] == .double(0.04))
            #expect(json["outputNumberOfChannels"] == .integer(1))
            #expect(json["inputNumberOfChannels"] == .integer(0))
            #expect(json["outputVolume"] == .double(1))
            #expect(json["recordPermission"] == .string("undetermined"))
        }
    }

    @Test func aPreferenceOutOfRangeIsNamedAndFails() async throws {
        try await withTemporaryDirectory { dir in
            try Self.routeFile(dir)
            let result = try Self.hardware(["--rate", "5"], runtime: dir)
            #expect(result.status != 0)
            #expect(result.err.contains("preferred sample rate 5.0 is outside 8000...768000 Hz"), "\(result.err)")
        }
    }

    @Test func withoutARouteFileEverythingIsUnknown() async throws {
        try await withTemporaryDirectory { dir in
            let result = try Self.hardware([], runtime: dir)
            #expect(result.status == 0, "\(result.err)")
            #expect(result.out.contains("sampleRate: 0.0\n"), "\(result.out)")
            #expect(result.out.contains("recordPermission: undetermined\n"), "\(result.out)")
        }
    }
}
