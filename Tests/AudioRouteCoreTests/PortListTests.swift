import AudioRouteCore
import Testing

/// A snapshot of ports folded from a watcher's events (`audioroute ports --direct`).
@Suite struct PortListTests {
    @Test func eventsFoldIntoThePortList() {
        let dac = Port(uid: "dac", type: .usbAudio, device: "dac", direction: .output)
        let mic = Port(uid: "mic", type: .usbAudio, device: "mic", direction: .input)
        var renamed = dac
        renamed.name = "Renamed DAC"
        var ports: [Port] = []
        ports.apply(.added([dac, mic]))
        ports.apply(.updated(renamed))
        ports.apply(.updated(Port(uid: "ghost", type: .headphones, device: "x")))  // unknown: ignored
        ports.apply(.removed(["mic", "ghost"]))
        #expect(ports == [renamed])
    }

    @Test("diff: removals, then updates, then a device's arrivals at once")
    func diff() {
        let a = Port(uid: "bt:A:a2dp", type: .bluetoothA2DP, device: "bt:A")
        let h = Port(uid: "bt:A:hfp", type: .bluetoothHFP, device: "bt:A")
        var renamed = a
        renamed.name = "New"
        let b = Port(uid: "bt:B:a2dp", type: .bluetoothA2DP, device: "bt:B")
        #expect(PortEvent.diff(from: [:], to: ["bt:A": [a, h]]) == [.added([a, h])])
        #expect(PortEvent.diff(from: ["bt:A": [a, h]], to: ["bt:A": [a, h]]) == [])
        #expect(PortEvent.diff(from: ["bt:A": [a, h]], to: ["bt:A": [renamed], "bt:B": [b]]) == [.removed(["bt:A:hfp"]), .updated(renamed), .added([b])])
        #expect(PortEvent.diff(from: ["bt:A": [a, h], "bt:B": [b]], to: [:]) == [.removed(["bt:A:a2dp", "bt:A:hfp"]), .removed(["bt:B:a2dp"])])
    }

    /// Folding the diff into the old ports gives the new ones, whatever the two port sets
    /// (seeded random groups of ports that come, go and change).
    @Test func diffFoldsBackIntoTheNewPorts() {
        var random = SplitMix64(seed: 14)
        for _ in 0..<500 {
            let old = portGroups(&random)
            let new = portGroups(&random)
            var ports = old.keys.sorted().flatMap { old[$0]! }
            for event in PortEvent.diff(from: old, to: new) { ports.apply(event) }
            let expected = new.values.flatMap { $0 }
            #expect(Set(ports) == Set(expected))
            #expect(ports.count == expected.count)
        }
    }
}

/// Up to 3 devices of up to 3 ports each, drawn from a small pool of uids (unique across
/// devices), with a name that may differ from one draw to the next.
private func portGroups(_ random: inout SplitMix64) -> [String: [Port]] {
    var result: [String: [Port]] = [:]
    for uid in 0..<6 where Bool.random(using: &random) {
        let device = "dev\(uid / 2 + Int.random(in: 0...1, using: &random))"
        var port = Port(uid: "p\(uid)", type: .usbAudio, device: device)
        port.name = "name \(Int.random(in: 0...1, using: &random))"
        result[device, default: []].append(port)
    }
    return result
}
