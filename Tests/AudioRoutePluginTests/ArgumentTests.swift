// The plugin's own logic, called in process without a sound card: its arguments, where it
// finds the route file, and the stream's states around a route change.
import AudioRouteCore
import AudioRouteIPC
import AudioRouteMix
import AudioRoutePlugin
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `ar_args_resolve`, as Swift values: (category, mode, options) or the error text.
private func resolve(
    category: String? = nil, mode: String? = nil, options: String? = nil, env: String? = nil, capture: Bool = false
) -> Result<(String, String, UInt), PluginArgumentError> {
    var args = ar_args()
    let status = ar_args_resolve(&args, category, mode, options, env, capture ? 1 : 0)
    func text<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
    guard status == 0 else { return .failure(PluginArgumentError(status: status, text: text(args.error))) }
    return .success((text(args.category), text(args.mode), args.options))
}

private struct PluginArgumentError: Error, Equatable {
    var status: Int32
    var text: String
}

/// Why `ar_args_resolve` refused, or nil when it accepted.
private func refusal(category: String? = nil, mode: String? = nil, options: String? = nil, env: String? = nil) -> PluginArgumentError? {
    if case .failure(let error) = resolve(category: category, mode: mode, options: options, env: env) { return error }
    return nil
}

private func names(_ kind: ar_names) -> [String] {
    var result: [String] = []
    while let name = ar_name(kind, Int32(result.count), nil) { result.append(String(cString: name)) }
    return result
}

@Suite struct PluginArgumentTests {
    @Test func withoutArgumentsPlaybackPlaysAndCaptureRecords() throws {
        #expect(try resolve().get() == ("playback", "default", 0))
        #expect(try resolve(capture: true).get() == ("record", "default", 0))
        #expect(try resolve(category: "", mode: "", options: "").get() == ("playback", "default", 0))
    }

    @Test func theEnvironmentIsTheFallbackAndTheArgumentWins() throws {
        #expect(try resolve(env: "ambient").get().0 == "ambient")
        #expect(try resolve(env: "playAndRecord", capture: true).get().0 == "playAndRecord")
        #expect(try resolve(category: "soloAmbient", env: "ambient").get().0 == "soloAmbient")
        #expect(try resolve(category: "", env: "ambient").get().0 == "ambient")
    }

    @Test func optionsAreNamesWithAppleRawValues() throws {
        #expect(try resolve(options: "duckOthers").get().2 == CategoryOptions.duckOthers.rawValue)
        let several: CategoryOptions = [.mixWithOthers, .duckOthers, .allowBluetooth]
        for spelling in ["mixWithOthers,duckOthers,allowBluetooth", "mixWithOthers+duckOthers+allowBluetooth",
                         "mixWithOthers|duckOthers allowBluetooth", "+mixWithOthers,,duckOthers+allowBluetooth+"] {
            #expect(try resolve(options: spelling).get().2 == several.rawValue, "\(spelling)")
        }
        #expect(try resolve(options: "interruptSpokenAudioAndMixWithOthers").get().2 == 0x11)
    }

    @Test func unknownNamesAreRefusedWithWhatWasWrong() {
        #expect(refusal(category: "loud") == (PluginArgumentError(status: -EINVAL, text: "unknown category \"loud\"")))
        #expect(refusal(env: "Playback") == (PluginArgumentError(status: -EINVAL, text: "unknown category (AUDIOROUTE_CATEGORY) \"Playback\"")))
        #expect(refusal(mode: "karaoke") == (PluginArgumentError(status: -EINVAL, text: "unknown mode \"karaoke\"")))
        #expect(refusal(options: "duckOthers+duckAll") == (PluginArgumentError(status: -EINVAL, text: "unknown option \"duckAll\"")))
        // A prefix of a name is not the name.
        #expect(refusal(options: "duck") == (PluginArgumentError(status: -EINVAL, text: "unknown option \"duck\"")))
        let long = String(repeating: "x", count: 500)
        #expect((refusal(category: long)?.text.count ?? 999) < 100)
    }

    /// The C plugin keeps its own name tables; they must stay AudioRouteCore's.
    @Test func theNamesAreAudioRouteCoresNames() {
        #expect(names(AR_CATEGORIES) == Category.allCases.map(\.rawValue))
        #expect(names(AR_MODES) == Mode.allCases.map(\.rawValue))
        #expect(names(AR_OPTIONS) == CategoryOptions.named.map(\.name))
        for (index, entry) in CategoryOptions.named.enumerated() {
            var value: UInt = 0
            _ = ar_name(AR_OPTIONS, Int32(index), &value)
            #expect(value == entry.option.rawValue, "\(entry.name)")
        }
    }
}

@Suite struct PluginRouteFileTests {
    private func path(_ configured: String?, xdg: String?, exists: Bool) -> String? {
        var buffer = [CChar](repeating: 0, count: 64)
        let status = exists
            ? ar_route_file_path(&buffer, buffer.count, configured, xdg, { _ in 1 })
            : ar_route_file_path(&buffer, buffer.count, configured, xdg, { _ in 0 })
        return status == 0 ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
    }

    @Test func theUsersRouteFileThenTheSystemInstances() {
        #expect(path(nil, xdg: "/run/user/1000", exists: true) == "/run/user/1000/audioroute/asound.conf")
        #expect(path(nil, xdg: "/run/user/1000", exists: false) == "/run/audioroute/asound.conf")
        #expect(path("", xdg: nil, exists: true) == "/run/audioroute/asound.conf")
        #expect(path("/etc/route.conf", xdg: "/run/user/1000", exists: true) == "/etc/route.conf")
        #expect(path(String(repeating: "/d", count: 40), xdg: nil, exists: true) == nil)
    }

    /// The plugin's rule is the one the daemon's writer and the player use (RouteFileLocation),
    /// where the system instance's file is there: before, the player read only the user's.
    @Test(arguments: [("/run/user/1000", true), ("/run/user/1000", false), (nil, true), ("", true)])
    func thePluginAndThePlayerFindTheSameFile(_ xdg: String?, _ userFileExists: Bool) {
        var environment: [String: String] = [:]
        environment["XDG_RUNTIME_DIR"] = xdg
        let swift = RouteFileLocation.forClient(systemBus: false, environment: environment) { file in
            file == RouteFileLocation.system || userFileExists
        }
        #expect(swift == path(nil, xdg: xdg, exists: userFileExists))
        #expect(RouteFileLocation.forClient(systemBus: true, environment: environment) { _ in true } == RouteFileLocation.system)
        #expect(RouteFileLocation.forClient(systemBus: false, environment: environment) { _ in false } == nil)
    }
}

@Suite struct PluginStateTests {
    /// Runs `events` from `start`: the actions, and the state at the end.
    private func run(_ events: [ar_event], from start: ar_state = AR_IDLE) -> ([ar_action], ar_state) {
        var state = start
        let actions = events.map { ar_step(&state, $0) }
        return (actions, state)
    }

    @Test func aRouteChangeMovesAtTheNextBoundaryNotBefore() {
        let (actions, state) = run([AR_EVENT_OPENED, AR_EVENT_BOUNDARY, AR_EVENT_ROUTE_CHANGED, AR_EVENT_ROUTE_CHANGED, AR_EVENT_BOUNDARY, AR_EVENT_BOUNDARY])
        #expect(actions == [AR_ACTION_NONE, AR_ACTION_NONE, AR_ACTION_NONE, AR_ACTION_NONE, AR_ACTION_MOVE, AR_ACTION_NONE])
        #expect(state == AR_FORWARDING)
    }

    @Test func aDeviceGoneHoldsTheWriterUntilTheRouteChanges() {
        let (actions, state) = run([AR_EVENT_OPENED, AR_EVENT_DEVICE_GONE, AR_EVENT_BOUNDARY, AR_EVENT_BOUNDARY, AR_EVENT_ROUTE_CHANGED, AR_EVENT_BOUNDARY])
        #expect(actions == [AR_ACTION_NONE, AR_ACTION_WAIT_FOR_ROUTE, AR_ACTION_WAIT_FOR_ROUTE, AR_ACTION_WAIT_FOR_ROUTE, AR_ACTION_NONE, AR_ACTION_MOVE])
        #expect(state == AR_FORWARDING)
        // A move that fails (the new device cannot open) holds again.
        #expect(run([AR_EVENT_DEVICE_GONE], from: AR_MOVE_PENDING) == ([AR_ACTION_WAIT_FOR_ROUTE], AR_HELD))
    }

    @Test func nothingHappensToAStreamThatIsNotOpen() {
        #expect(run([AR_EVENT_ROUTE_CHANGED, AR_EVENT_BOUNDARY, AR_EVENT_DEVICE_GONE]) == ([AR_ACTION_NONE, AR_ACTION_NONE, AR_ACTION_NONE], AR_IDLE))
        #expect(run([AR_EVENT_CLOSED], from: AR_HELD) == ([AR_ACTION_NONE], AR_IDLE))
    }

    @Test func theErrorsThatMeanTheDeviceIsGoing() {
        for gone in [ENODEV, EBADFD, ESHUTDOWN] { #expect(ar_is_device_gone(-gone) == 1) }
        for other in [EPIPE, EAGAIN, EINVAL, EIO, 0] { #expect(ar_is_device_gone(-other) == 0) }
    }
}
