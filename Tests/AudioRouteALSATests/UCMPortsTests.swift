// The UCM device → port mapping on plain values (docs/ucm.md).
import AudioRouteALSA
import AudioRouteCore
import Testing

private func device(_ name: String, _ values: [String: String]) -> UCMDevice { UCMDevice(name: name, values: values) }

@Suite struct UCMPortsTests {
    @Test func phoneDeviceNamesBecomeTheIssuesPortTypes() {
        #expect(UCMPortMapping.portType(device: "Earpiece", direction: .output) == .builtInReceiver)
        #expect(UCMPortMapping.portType(device: "Handset", direction: .output) == .builtInReceiver)
        #expect(UCMPortMapping.portType(device: "Speaker", direction: .output) == .builtInSpeaker)
        #expect(UCMPortMapping.portType(device: "Headphones", direction: .output) == .headphones)
        #expect(UCMPortMapping.portType(device: "Headset", direction: .input) == .headsetMic)
        for mic in ["Mic", "Mic1", "Mic2", "DigitalMic"] {
            #expect(UCMPortMapping.portType(device: mic, direction: .input) == .builtInMic)
        }
        #expect(UCMPortMapping.portType(device: "Mic", direction: .input, jackControl: "Mic Jack") == .headsetMic)
        #expect(UCMPortMapping.portType(device: "HDMI1", direction: .output) == nil)
        #expect(UCMPortMapping.portType(device: "Speaker", direction: .input) == nil)
    }

    @Test func severalMicsAreOnePortWithDataSourcesByPriority() {
        let verb = UCMVerb(name: "HiFi", devices: [
            device("Mic1", ["CapturePCM": "hw:x,1", "CapturePriority": "100"]),
            device("Mic2", ["CapturePCM": "hw:x,2", "CapturePriority": "300"]),
            device("Speaker", ["PlaybackPCM": "hw:x,0"]),
        ])
        let ports = UCMPortMapping.ports(card: "x", verb: verb)
        #expect(ports.map(\.port.type) == [.builtInSpeaker, .builtInMic])
        let mic = ports[1]
        #expect(mic.dataSources.map(\.device) == ["Mic2", "Mic1"])
        #expect(mic.port.alsa == "hw:x,2")
        #expect(mic.jackControl == nil)
    }

    @Test func aDeviceGivesAPortOnlyWhereItHasThePCM() {
        let verb = UCMVerb(name: "HiFi", devices: [
            device("Headset", ["PlaybackPCM": "hw:x,0", "CapturePCM": "hw:x,1", "JackControl": "Headset Jack"]),
            device("Earpiece", [:]),
            device("HDMI1", ["PlaybackPCM": "hw:x,3"]),
        ])
        let ports = UCMPortMapping.ports(card: "x", verb: verb)
        #expect(ports.map(\.port.type) == [.headphones, .headsetMic])
        #expect(ports.map(\.port.alsa) == ["hw:x,0", "hw:x,1"])
        #expect(ports.allSatisfy { $0.jackControl == "Headset Jack" })
        #expect(Set(ports.map(\.port.uid)).count == 2)
    }
}
