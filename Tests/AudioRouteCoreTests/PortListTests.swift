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
}
