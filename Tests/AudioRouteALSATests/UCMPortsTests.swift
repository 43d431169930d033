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
        #expect(UCMPortMapping.portType(device: "Mic2", direction: .input, jackControl: "Mic Jack") == .headsetMic)
        #expect(UCMPortMapping.portType(device: "Speaker", direction: .input) == nil)
    }

    /// alsa-lib's standard names (use-case.h), each with an optional number suffix.
    @Test func laptopAndBoardDeviceNames() {
        for hdmi in ["HDMI", "HDMI1", "HDMI3", "HDMI 2"] { #expect(UCMPortMapping.portType(device: hdmi, direction: .output) == .HDMI) }
        #expect(UCMPortMapping.portType(device: "Line1", direction: .output) == .lineOut)
        #expect(UCMPortMapping.portType(device: "Line 2", direction: .input) == .lineIn)
        #expect(UCMPortMapping.portType(device: "SPDIF", direction: .output) == .lineOut)
        #expect(UCMPortMapping.portType(device: "Speaker1", direction: .output) == .builtInSpeaker)
        #expect(UCMPortMapping.portType(device: "Headset", direction: .output) == .headphones)
        for none in ["Bluetooth", "USB", "Direct", "None", "Modem", "HDMI", "12"] {
            #expect(UCMPortMapping.portType(device: none, direction: .input) == nil, "\(none)")
        }
        #expect(UCMPortMapping.split("HDMI12") == ("HDMI", 12))
        #expect(UCMPortMapping.split("Line 1") == ("Line", 1))
        #expect(UCMPortMapping.split("Mic") == ("Mic", nil))
        #expect(UCMPortMapping.split("12") == ("12", nil))
    }

    /// A profile with its own alsa-lib configuration (the stock ucm.conf includes one) has its
    /// PCMs prefixed by libasound: another process opens the `hw:` PCM behind the prefix; a PCM
    /// of the profile's own (a split) no other process can open, and gives no port.
    @Test func prefixedPCMsAreTheKernelsOrNone() {
        #expect(UCMPortMapping.sharedPCM("_ucm0001.hw:sofhdadsp,6") == "hw:sofhdadsp,6")
        #expect(UCMPortMapping.sharedPCM("_ucm00A3.hw:PCH") == "hw:PCH")
        #expect(UCMPortMapping.sharedPCM("hw:PCH,3") == "hw:PCH,3")
        #expect(UCMPortMapping.sharedPCM("_ucm0001.split-out") == nil)
        #expect(UCMPortMapping.sharedPCM("_ucm0001") == nil)
        let verb = UCMVerb(name: "HiFi", devices: [
            device("Speaker", ["PlaybackPCM": "_ucm0002.hw:X,2"]),
            device("Line1", ["PlaybackPCM": "_ucm0002.front-split:0", "PlaybackPriority": "50"]),
            device("Bluetooth", ["PlaybackPCM": "hw:X,7"]),
        ])
        var notes: [String] = []
        let ports = UCMPortMapping.ports(card: "x", verb: verb, notes: &notes)
        #expect(ports.map(\.port.alsa) == ["hw:X,2"])
        #expect(notes == [
            "HiFi/Line1: output PCM _ucm0002.front-split:0 is the profile's own alsa-lib PCM, which only its UCM manager's process can open: no port",
            "HiFi/Bluetooth: no port type for this device",
        ])
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
            device("HDMI1", ["PlaybackPCM": "hw:x,3", "JackControl": "HDMI/DP,pcm=3 Jack"]),
        ])
        let ports = UCMPortMapping.ports(card: "x", verb: verb)
        #expect(ports.map(\.port.type) == [.headphones, .headsetMic, .HDMI])
        #expect(ports.map(\.port.alsa) == ["hw:x,0", "hw:x,1", "hw:x,3"])
        #expect(ports.map(\.jackControl) == ["Headset Jack", "Headset Jack", "HDMI/DP,pcm=3 Jack"])
        #expect(Set(ports.map(\.port.uid)).count == 3)
    }
}
