import AudioRouteCore
import Testing

@Suite struct ExplainTests {
    let phone = [
        Port(uid: "spk", type: .builtInSpeaker, device: "internal", sequence: 1),
        Port(uid: "rcv", type: .builtInReceiver, device: "internal", sequence: 2),
        Port(uid: "mic", type: .builtInMic, device: "internal", sequence: 3),
    ]

    func explanation(_ uid: String, _ result: RouteExplanation) -> PortExplanation {
        result.ports.first { $0.uid == uid }!
    }

    @Test func theChosenPortsNameTheirRule() throws {
        let request = RouteRequest(configuration: try SessionConfiguration(category: .playAndRecord))
        let result = explainRoute(request, ports: phone)
        #expect(result.route == Route(inputs: ["mic"], outputs: ["rcv"]))
        #expect(result.outputRule == .builtInFallback)
        #expect(explanation("rcv", result).chosen.map(\.rule) == [.builtInFallback])
        #expect(explanation("spk", result).reasons == ["output: the built-in fallback chose rcv for playAndRecord"])
    }

    @Test func aLowerPriorityAndAnOlderPortSayWhyTheyLost() throws {
        let ports = phone + [
            Port(uid: "hdmi", type: .HDMI, device: "gpu", sequence: 4),
            Port(uid: "usb-old", type: .usbAudio, device: "dac1", direction: .output, sequence: 5),
            Port(uid: "usb-new", type: .usbAudio, device: "dac2", direction: .output, sequence: 6),
        ]
        let result = explainRoute(RouteRequest(configuration: try SessionConfiguration(category: .playback)), ports: ports)
        #expect(result.route.outputs == ["usb-new"])
        #expect(result.outputRule == .bestOutput)
        #expect(explanation("hdmi", result).reasons == ["output: priority 50 is below usb-new's 100"])
        #expect(explanation("usb-old", result).reasons == ["output: connected before usb-new (last in wins: 5 < 6)"])
        #expect(explanation("rcv", result).reasons == ["output: the receiver is only used by playAndRecord"])
        #expect(explanation("mic", result).reasons == ["input: category playback records nothing"])
    }

    @Test func bluetoothOptionsAndProfilesAreExplained() throws {
        let ports = phone + [
            Port(uid: "a2dp", type: .bluetoothA2DP, device: "bt", sequence: 4),
            Port(uid: "hfp", type: .bluetoothHFP, device: "bt", sequence: 5),
        ]
        let plain = explainRoute(RouteRequest(configuration: try SessionConfiguration(category: .playAndRecord)), ports: ports)
        #expect(explanation("hfp", plain).reasons.contains("output: Bluetooth HFP needs the allowBluetooth option"))
        #expect(explanation("a2dp", plain).reasons == ["output: Bluetooth A2DP needs the allowBluetoothA2DP option in playAndRecord"])
        let both = explainRoute(
            RouteRequest(configuration: try SessionConfiguration(category: .playAndRecord, options: [.allowBluetooth, .allowBluetoothA2DP])),
            ports: ports)
        #expect(both.route == Route(inputs: ["hfp"], outputs: ["hfp"]))
        #expect(explanation("a2dp", both).reasons == ["output: HFP wins over A2DP on the same device (the session needs a duplex link)"])
    }
}
