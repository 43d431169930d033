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

    @Test func theTowerSeesOnlyUsablePortsAndAvailabilityChangesAsPlugsAndUnplugs() async {
        let speaker = Port(uid: "spk", type: .builtInSpeaker, device: "pci")
        func headphones(_ availability: Port.Availability) -> Port {
            Port(uid: "hp", type: .headphones, device: "pci/jack", availability: availability)
        }
        let story: [PortEvent] = [
            .added([speaker, headphones(.unavailable)]),
            .added([headphones(.available)]),  // refused: known, as unavailable
            .updated(headphones(.available)), .updated(headphones(.unavailable)), .removed(["hp"]), .added([Self.dac]),
        ]
        var received: [(String, PortEvent)] = []
        for await item in DirectWatchers.usableEvents(DirectWatchers.events([Scripted(events: story)])) {
            received.append((item.source, item.event))
            if item.event == .added([Self.dac]) { break }
        }
        #expect(received.map(\.0) == ["scripted", "scripted", "scripted", "scripted"])
        #expect(received.map(\.1) == [.added([speaker]), .added([headphones(.available)]), .removed(["hp"]), .added([Self.dac])])
    }

    @Test func theListingEndsEachPortWithItsAvailabilityWhereItIsKnown() throws {
        let hp = Port(uid: "pci/headphones", type: .headphones, device: "pci/jack", priority: 100, alsa: "dmix:CARD=PCH,DEV=0")
        let hdmi = Port(uid: "gpu/hdmi-3", type: .HDMI, device: "gpu", priority: -1, availability: .unknown)
        let lines = PortText.listing([(hp, .unavailable), (hdmi, .unknown), (Self.dac, nil)], json: false)
        #expect(
            lines == [
                #"pci/headphones  headphones output "Headphones" priority=100 device=pci/jack alsa=dmix:CARD=PCH,DEV=0 availability=unavailable"#,
                #"gpu/hdmi-3  HDMI output "HDMI" priority=-1 device=gpu availability=unknown"#,
                #"dac/output  usbAudio output "USB Audio" priority=100 device=dac"#,
            ])
        #expect(PortText.listing([], json: false) == ["no ports"])
        let json = try JSON.parse(try #require(PortText.listing([(hp, .unavailable), (Self.dac, .available), (Self.dac, nil)], json: true).first))
        guard case .array(let objects) = json, case .object(let members)? = objects.first else {
            Issue.record("not an array of objects: \(json)")
            return
        }
        #expect(members.map(\.key) == ["uid", "type", "direction", "device", "name", "priority", "sequence", "alsa", "availability"])
        #expect(objects.map { $0["availability"] } == [.string("unavailable"), .string("available"), .null])
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
