import AudioRouteCore
import Synchronization
import Testing

@testable import audioroute

/// A watcher whose source is unavailable.
struct Unavailable: PortWatcher {
    struct NoSource: Error, CustomStringConvertible {
        var description: String { "no system bus" }
    }
    let name = "broken"
    func run(deliver: @escaping @Sendable (PortEvent) async -> Void, enumerated: @escaping @Sendable () async -> Void) async throws {
        throw NoSource()
    }
}

/// A watcher that reports a fixed story (the enumeration marker after the first
/// `enumeratedAfter` events, if set), then waits to be cancelled.
struct Scripted: PortWatcher {
    let name = "scripted"
    let events: [PortEvent]
    var enumeratedAfter: Int? = nil
    func run(deliver: @escaping @Sendable (PortEvent) async -> Void, enumerated: @escaping @Sendable () async -> Void) async throws {
        for (index, event) in events.enumerated() {
            if index == enumeratedAfter { await enumerated() }
            await deliver(event)
        }
        if enumeratedAfter == events.count { await enumerated() }
        while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(20)) }
    }
}

@Suite struct DirectWatchersTests {
    static let a2dp = Port(uid: "bt-a2dp", type: .bluetoothA2DP, device: "bt:00:11:22:33:44:55")
    static let dac = Port(uid: "dac/output", type: .usbAudio, device: "dac", direction: .output)

    @Test func aWatcherThatFailsAtStartDoesNotStopTheOthers() async {
        let story: [PortEvent] = [.added([Self.a2dp]), .added([Self.dac]), .removed(["bt-a2dp"])]
        var received: [(String, PortEvent)] = []
        for await item in DirectWatchers.events([Unavailable(), Scripted(events: story)]) {
            received.append((item.source, item.event))
            if received.count == story.count { break }
        }
        #expect(received.map(\.0) == ["scripted", "scripted", "scripted"])
        #expect(received.map(\.1) == story)
    }

    @Test func currentPortsFallsBackToRunningWatchersThatCannotSnapshot() async {
        let ports = await DirectWatchers.currentPorts(
            [Unavailable(), Scripted(events: [.added([Self.a2dp, Self.dac]), .removed(["bt-a2dp"])])], settle: .milliseconds(200))
        #expect(ports.map(\.uid) == ["dac/output"])
    }

    @Test func currentPortsStopsAtTheEnumerationMarker() async {
        // The port after the marker is a later change, not part of the snapshot; and the
        // snapshot does not wait out the settle time.
        let watcher = Scripted(events: [.added([Self.dac]), .added([Self.a2dp])], enumeratedAfter: 1)
        let started = ContinuousClock.now
        let ports = await DirectWatchers.currentPorts([watcher], settle: .seconds(30))
        #expect(ports.map(\.uid) == ["dac/output"])
        #expect(ContinuousClock.now - started < .seconds(20))
    }
}
