// Spec §5 rules 1–7, each as a table of routes the resolver must pick. Every
// case differs from what the next rule down would pick, so that removing the
// rule it names fails it.
@testable import AudioRouteCore
import Testing

struct RouteCase: Sendable, CustomTestStringConvertible {
    var name: String
    var category: Category
    var mode: Mode = .default
    var options: CategoryOptions = []
    var override: OutputOverride = .none
    var preferredInput: String? = nil
    var ports: [Port]
    var expected: Route
    /// The rule expected to decide each side (nil: not checked).
    var outputRule: RouteRuleName? = nil
    var inputRule: RouteRuleName? = nil

    var testDescription: String { name }

    func check() throws {
        let resolution = resolveRoute(
            try request(category, mode: mode, options: options, override: override, preferredInput: preferredInput), ports: ports)
        #expect(resolution.route(in: ports) == expected)
        if let outputRule { #expect(resolution.outputRule == outputRule) }
        if let inputRule { #expect(resolution.inputRule == inputRule) }
    }
}

private let headset = wiredHeadset(sequence: 10)
private let usbHeadset = port("usb", .usbAudio, device: "usb", direction: .duplex, sequence: 20)

@Suite("Spec §5 rule 1: speaker override")
struct SpeakerOverrideRuleTests {
    @Test(arguments: [
        RouteCase(
            name: "speaker and built-in mic despite a headset", category: .playAndRecord, override: .speaker,
            ports: phone + headset, expected: Route(inputs: ["mic"], outputs: ["spk"]),
            outputRule: .speakerOverride, inputRule: .speakerOverride),
        RouteCase(
            name: "beats a preferred input", category: .playAndRecord, override: .speaker, preferredInput: "hsmic",
            ports: phone + headset, expected: Route(inputs: ["mic"], outputs: ["spk"])),
        RouteCase(
            name: "beats a Bluetooth headset", category: .playAndRecord, options: .allowBluetooth, override: .speaker,
            ports: phone + bluetoothHeadset(a2dpSequence: 30, hfpSequence: 31), expected: Route(inputs: ["mic"], outputs: ["spk"])),
        RouteCase(
            name: "none is no override", category: .playAndRecord, override: .none,
            ports: phone + headset, expected: Route(inputs: ["hsmic"], outputs: ["hp"])),
        RouteCase(
            name: "ignored outside playAndRecord by the resolver", category: .playback, override: .speaker,
            ports: phone + headset, expected: Route(outputs: ["hp"])),
    ])
    func speakerOverride(_ c: RouteCase) throws { try c.check() }

    @Test("the speaker override is refused outside playAndRecord, and nothing changes",
        arguments: Category.allCases.filter { $0 != .playAndRecord })
    func invalidOverride(category: Category) throws {
        var tower = try activeTower(phone + headset, category)
        let before = TowerSnapshot(tower)
        expectError(.invalidOverride(.speaker, category: category)) { try tower.overrideOutput(.speaker, session: "app") }
        #expect(TowerSnapshot(tower) == before)
        // Clearing is always allowed.
        #expect(try tower.overrideOutput(.none, session: "app").change == nil)
    }

    @Test("leaving playAndRecord drops the override")
    func categoryChangeDropsOverride() throws {
        var tower = try activeTower(phone + headset, .playAndRecord)
        _ = try tower.overrideOutput(.speaker, session: "app")
        _ = try tower.setCategory(.playback, session: "app")
        #expect(tower.session("app")?.override == OutputOverride.none)
        _ = try tower.setCategory(.playAndRecord, session: "app")
        #expect(tower.route == Route(inputs: ["hsmic"], outputs: ["hp"]))
    }

    @Test("cleared by a port arrival that moves the route")
    func clearedByArrival() throws {
        var tower = try activeTower(phone, .playAndRecord)
        _ = try tower.overrideOutput(.speaker, session: "app")
        #expect(tower.route == Route(inputs: ["mic"], outputs: ["spk"]))
        let outcome = try tower.addPorts(wiredHeadset(sequence: 0))
        #expect(tower.session("app")?.override == OutputOverride.none)
        #expect(tower.route == Route(inputs: ["hsmic"], outputs: ["hp"]))
        #expect(outcome.change?.reason == .newDeviceAvailable)
    }

    @Test("kept across an arrival that does not move the route")
    func keptByIrrelevantArrival() throws {
        var tower = try activeTower(phone + headset, .playAndRecord)
        _ = try tower.overrideOutput(.speaker, session: "app")
        let outcome = try tower.addPorts([port("hdmi", .HDMI)])
        #expect(tower.session("app")?.override == .speaker)
        #expect(tower.route == Route(inputs: ["mic"], outputs: ["spk"]))
        #expect(outcome.change == nil)
    }

    @Test("cleared by the removal of a port of the route", arguments: ["spk", "mic"])
    func clearedByRemoval(uid: String) throws {
        var tower = try activeTower(phone + headset, .playAndRecord)
        _ = try tower.overrideOutput(.speaker, session: "app")
        let outcome = try tower.removePorts([uid])
        #expect(tower.session("app")?.override == OutputOverride.none)
        #expect(tower.route == Route(inputs: ["hsmic"], outputs: ["hp"]))
        #expect(outcome.change?.reason == .oldDeviceUnavailable)
    }

    @Test("kept across the removal of a port outside the route")
    func keptByIrrelevantRemoval() throws {
        var tower = try activeTower(phone + headset + [usbHeadset], .playAndRecord)
        _ = try tower.overrideOutput(.speaker, session: "app")
        let outcome = try tower.removePorts(["usb"])
        #expect(tower.session("app")?.override == .speaker)
        #expect(tower.route == Route(inputs: ["mic"], outputs: ["spk"]))
        #expect(outcome.change == nil)
    }
}

@Suite("Spec §5 rule 2: preferred input")
struct PreferredInputRuleTests {
    @Test(arguments: [
        RouteCase(
            name: "the built-in mic while a USB headset plays", category: .playAndRecord, preferredInput: "mic",
            ports: phone + [usbHeadset], expected: Route(inputs: ["mic"], outputs: ["usb"]), inputRule: .preferredInput),
        RouteCase(
            name: "an earlier headset mic over the last-in USB headset", category: .record, preferredInput: "hsmic",
            ports: phone + headset + [usbHeadset], expected: Route(inputs: ["hsmic"]), inputRule: .preferredInput),
        RouteCase(
            name: "a preferred HFP input moves the output to its device", category: .playAndRecord, options: .allowBluetooth,
            preferredInput: "bt-hfp", ports: phone + bluetoothHeadset(a2dpSequence: 5, hfpSequence: 6) + headset,
            expected: Route(inputs: ["bt-hfp"], outputs: ["bt-hfp"]), outputRule: .preferredInput, inputRule: .preferredInput),
        RouteCase(
            name: "the HFP output of the input's own device, not another headset's", category: .playAndRecord, options: .allowBluetooth,
            preferredInput: "a-hfp",
            ports: phone + bluetoothHeadset("a", a2dpSequence: 5, hfpSequence: 6) + bluetoothHeadset("b", a2dpSequence: 7, hfpSequence: 8),
            expected: Route(inputs: ["a-hfp"], outputs: ["a-hfp"])),
        RouteCase(
            name: "an HFP input alone in record", category: .record, options: .allowBluetooth, preferredInput: "bt-hfp",
            ports: phone + headset + bluetoothHeadset(a2dpSequence: 5, hfpSequence: 6), expected: Route(inputs: ["bt-hfp"])),
        RouteCase(
            name: "an ineligible preferred input (HFP without allowBluetooth) is ignored", category: .playAndRecord,
            preferredInput: "bt-hfp", ports: phone + bluetoothHeadset(a2dpSequence: 5, hfpSequence: 6),
            expected: Route(inputs: ["mic"], outputs: ["rcv"]), inputRule: .builtInFallback),
        RouteCase(
            name: "an unavailable preferred input is ignored", category: .playAndRecord, preferredInput: "gone",
            ports: phone + headset, expected: Route(inputs: ["hsmic"], outputs: ["hp"]), inputRule: .inputFollowsOutput),
        RouteCase(
            name: "a preferred built-in mic keeps the HFP link out", category: .playAndRecord,
            options: [.allowBluetooth, .allowBluetoothA2DP], preferredInput: "mic",
            ports: phone + bluetoothHeadset(a2dpSequence: 5, hfpSequence: 6), expected: Route(inputs: ["mic"], outputs: ["bt-a2dp"])),
    ])
    func preferredInput(_ c: RouteCase) throws { try c.check() }

    @Test("the preference outlives its port and applies again when it returns")
    func preferenceReturns() throws {
        var tower = try activeTower(phone + headset + [usbHeadset], .playAndRecord)
        _ = try tower.setPreferredInput("hsmic", session: "app")
        #expect(tower.route == Route(inputs: ["hsmic"], outputs: ["usb"]))
        _ = try tower.removePorts(["hp", "hsmic"])
        #expect(tower.route == Route(inputs: ["usb"], outputs: ["usb"]))
        _ = try tower.addPorts(wiredHeadset(sequence: 0))
        // The headset is last in, so it is the output too.
        #expect(tower.route == Route(inputs: ["hsmic"], outputs: ["hp"]))
        _ = try tower.setPreferredInput("usb", session: "app")
        #expect(tower.route == Route(inputs: ["usb"], outputs: ["hp"]))
    }

    @Test("refused preferred inputs change nothing")
    func refused() throws {
        var tower = try activeTower(phone + headset, .playAndRecord)
        let before = TowerSnapshot(tower)
        expectError(.unknownPort("nope")) { try tower.setPreferredInput("nope", session: "app") }
        expectError(.notAnInput("hp")) { try tower.setPreferredInput("hp", session: "app") }
        expectError(.unknownSession("ghost")) { try tower.setPreferredInput("mic", session: "ghost") }
        #expect(TowerSnapshot(tower) == before)
    }
}

@Suite("Spec §5 rule 3: best output")
struct BestOutputRuleTests {
    @Test(arguments: [
        RouteCase(
            name: "higher priority beats last in", category: .playback,
            ports: laptop + [port("usb", .usbAudio, direction: .output, priority: 150, sequence: 5), port("hp", .headphones, sequence: 6)],
            expected: Route(outputs: ["usb"]), outputRule: .bestOutput),
        RouteCase(
            name: "default priorities: headphones (100) beat a later HDMI (50)", category: .playback,
            ports: laptop + [port("hp", .headphones, sequence: 5), port("hdmi", .HDMI, sequence: 6)],
            expected: Route(outputs: ["hp"])),
        RouteCase(
            name: "default priorities: line out (90) beats a later HDMI (50)", category: .playback,
            ports: laptop + [port("line", .lineOut, sequence: 5), port("hdmi", .HDMI, sequence: 6)],
            expected: Route(outputs: ["line"])),
        RouteCase(
            name: "equal priority: last in wins", category: .playback,
            ports: laptop + [port("hp", .headphones, sequence: 5), port("usb", .usbAudio, direction: .output, sequence: 6)],
            expected: Route(outputs: ["usb"])),
        RouteCase(
            name: "equal priority: last in wins, other way round", category: .playback,
            ports: laptop + [port("usb", .usbAudio, direction: .output, sequence: 5), port("hp", .headphones, sequence: 6)],
            expected: Route(outputs: ["hp"])),
        RouteCase(
            name: "equal priority and sequence: table order (headphones before usbAudio)", category: .playback,
            ports: laptop + [port("a-usb", .usbAudio, direction: .output, sequence: 5), port("z-hp", .headphones, sequence: 5)],
            expected: Route(outputs: ["z-hp"])),
        RouteCase(
            name: "equal priority, sequence and type: uid", category: .playback,
            ports: laptop + [port("hp-b", .headphones, sequence: 5), port("hp-a", .headphones, sequence: 5)],
            expected: Route(outputs: ["hp-a"])),
        RouteCase(
            name: "one device with HFP and A2DP: HFP wins even when A2DP came in last", category: .playAndRecord,
            options: [.allowBluetooth, .allowBluetoothA2DP], ports: phone + bluetoothHeadset(a2dpSequence: 6, hfpSequence: 5),
            expected: Route(inputs: ["bt-hfp"], outputs: ["bt-hfp"]), outputRule: .bestOutput),
        RouteCase(
            name: "HFP and A2DP on separate devices: last in wins", category: .playAndRecord,
            options: [.allowBluetooth, .allowBluetoothA2DP],
            ports: phone + [
                port("hfp", .bluetoothHFP, device: "bt1", direction: .duplex, sequence: 5),
                port("a2dp", .bluetoothA2DP, device: "bt2", sequence: 6),
            ],
            expected: Route(inputs: ["mic"], outputs: ["a2dp"])),
        RouteCase(
            name: "A2DP when the device's HFP is not eligible", category: .playAndRecord, options: .allowBluetoothA2DP,
            ports: phone + bluetoothHeadset(a2dpSequence: 6, hfpSequence: 5), expected: Route(inputs: ["mic"], outputs: ["bt-a2dp"])),
        // docs/decisions.md, "Built-ins are the fallback, not competitors".
        RouteCase(
            name: "a negative priority puts an external port below the built-ins", category: .playback,
            ports: laptop + [port("hdmi", .HDMI, priority: -10, sequence: 5)], expected: Route(outputs: ["spk"]),
            outputRule: .builtInFallback),
        RouteCase(
            name: "a port below the built-ins plays where there is no built-in", category: .playback,
            ports: [port("hdmi", .HDMI, priority: -10, sequence: 5)], expected: Route(outputs: ["hdmi"]),
            outputRule: .belowBuiltIns),
        RouteCase(
            name: "a raised built-in does not compete with external ports", category: .playAndRecord,
            ports: [
                port("spk", .builtInSpeaker, device: "internal", priority: 500, sequence: 1),
                port("rcv", .builtInReceiver, device: "internal", sequence: 2),
                port("hdmi", .HDMI, sequence: 3),
            ],
            expected: Route(outputs: ["hdmi"]), outputRule: .bestOutput),
    ])
    func bestOutput(_ c: RouteCase) throws { try c.check() }

    // HFP stands for a device that also offers A2DP: the A2DP port is left out of
    // the ranking, so the link competes with its own rank, and the A2DP port (never
    // in the route then) cannot move the route by coming or going.
    @Test("the HFP link competes with its own rank; its A2DP sibling neither helps nor moves it")
    func hfpCompetesWithItsOwnRank() throws {
        let ports = phone + [
            port("hfp", .bluetoothHFP, device: "bt", direction: .duplex, sequence: 5), port("usb", .usbAudio, direction: .output, sequence: 6),
            port("a2dp", .bluetoothA2DP, device: "bt", sequence: 7),
        ]
        let request = try request(.playAndRecord, options: [.allowBluetooth, .allowBluetoothA2DP])
        #expect(resolve(request, ports) == Route(inputs: ["mic"], outputs: ["usb"]))
        #expect(resolve(request, ports.filter { $0.uid != "a2dp" }) == Route(inputs: ["mic"], outputs: ["usb"]))
        let newer = ports.map { $0.uid == "hfp" ? port("hfp", .bluetoothHFP, device: "bt", direction: .duplex, sequence: 8) : $0 }
        #expect(resolve(request, newer) == Route(inputs: ["hfp"], outputs: ["hfp"]))
    }

    @Test("a raised speaker outside the route never keeps external ports out")
    func raisedBuiltInDoesNotDecideFromOutside() throws {
        let ports = [
            port("spk", .builtInSpeaker, device: "internal", priority: 500, sequence: 1),
            port("rcv", .builtInReceiver, device: "internal", sequence: 2), port("mic", .builtInMic, device: "internal", sequence: 3),
            port("hdmi", .HDMI, sequence: 4),
        ]
        let request = try request(.playAndRecord)
        #expect(resolve(request, ports) == Route(inputs: ["mic"], outputs: ["hdmi"]))
        #expect(resolve(request, ports.filter { $0.uid != "spk" }) == Route(inputs: ["mic"], outputs: ["hdmi"]))
    }
}

@Suite("Spec §5 rule 4: input")
struct InputRuleTests {
    @Test(arguments: [
        RouteCase(
            name: "the mic of the output's device, not a later USB mic", category: .playAndRecord,
            ports: phone + [port("hp", .headphones, device: "jack", sequence: 10), port("usbmic", .usbAudio, direction: .input, sequence: 20),
                port("hsmic", .headsetMic, device: "jack", sequence: 5)],
            expected: Route(inputs: ["hsmic"], outputs: ["hp"]), inputRule: .inputFollowsOutput),
        RouteCase(
            name: "a USB headset's own input, not a later USB mic", category: .playAndRecord,
            ports: phone + headset + [usbHeadset, port("usbmic", .usbAudio, direction: .input, sequence: 30)], expected: Route(inputs: ["usb"], outputs: ["usb"]), inputRule: .inputFollowsOutput),
        RouteCase(
            name: "otherwise the best input: last in", category: .playAndRecord,
            ports: phone + [port("hdmi", .HDMI, sequence: 5), port("hsmic", .headsetMic, device: "jack", sequence: 6), port("usbmic", .usbAudio, direction: .input, sequence: 7)],
            expected: Route(inputs: ["usbmic"], outputs: ["hdmi"]), inputRule: .bestInput),
        RouteCase(
            name: "otherwise the best input: priority", category: .playAndRecord,
            ports: phone + [port("hdmi", .HDMI, sequence: 5), port("usbmic", .usbAudio, direction: .input, sequence: 6), port("line", .lineIn, priority: 120, sequence: 4)],
            expected: Route(inputs: ["line"], outputs: ["hdmi"]), inputRule: .bestInput),
        RouteCase(
            name: "an external input while the output is built-in", category: .playAndRecord,
            ports: phone + [port("usbmic", .usbAudio, direction: .input, sequence: 6)],
            expected: Route(inputs: ["usbmic"], outputs: ["rcv"]), outputRule: .builtInFallback, inputRule: .bestInput),
        RouteCase(
            name: "a negative priority puts an external input below the built-in mic", category: .playAndRecord,
            ports: phone + [port("usbmic", .usbAudio, direction: .input, priority: -5, sequence: 6)],
            expected: Route(inputs: ["mic"], outputs: ["rcv"]), inputRule: .builtInFallback),
        RouteCase(
            name: "an HFP input is never split from its output", category: .playAndRecord, options: .allowBluetooth,
            ports: phone + [port("hdmi", .HDMI, priority: 200, sequence: 5), port("hfp", .bluetoothHFP, device: "bt", direction: .duplex, sequence: 6)],
            expected: Route(inputs: ["mic"], outputs: ["hdmi"]), inputRule: .builtInFallback),
        RouteCase(
            name: "an HFP input-only port is not used with another device's output", category: .playAndRecord, options: .allowBluetooth,
            ports: phone + [port("hdmi", .HDMI, sequence: 5), port("hfp-in", .bluetoothHFP, device: "bt", direction: .input, sequence: 6)],
            expected: Route(inputs: ["mic"], outputs: ["hdmi"])),
        RouteCase(
            name: "an HFP input-only port is not used with a built-in output", category: .playAndRecord, options: .allowBluetooth,
            ports: phone + [port("hfp-in", .bluetoothHFP, device: "bt", direction: .input, sequence: 6)],
            expected: Route(inputs: ["mic"], outputs: ["rcv"]), inputRule: .builtInFallback),
        RouteCase(
            name: "an HFP input with its own HFP output", category: .playAndRecord, options: .allowBluetooth,
            ports: phone + [port("hfp-out", .bluetoothHFP, device: "bt", direction: .output, sequence: 5),
                port("hfp-in", .bluetoothHFP, device: "bt", direction: .input, sequence: 6)],
            expected: Route(inputs: ["hfp-in"], outputs: ["hfp-out"]), inputRule: .inputFollowsOutput),
        RouteCase(
            name: "an HFP input alone in record", category: .record, options: .allowBluetooth,
            ports: phone + [port("hfp", .bluetoothHFP, device: "bt", direction: .duplex, sequence: 6)],
            expected: Route(inputs: ["hfp"]), inputRule: .bestInput),
    ])
    func input(_ c: RouteCase) throws { try c.check() }
}

@Suite("Spec §5 rule 5: built-in fallback")
struct BuiltInFallbackRuleTests {
    @Test(arguments: [
        RouteCase(
            name: "playAndRecord: the receiver", category: .playAndRecord, ports: phone,
            expected: Route(inputs: ["mic"], outputs: ["rcv"]), outputRule: .builtInFallback, inputRule: .builtInFallback),
        RouteCase(
            name: "playAndRecord with defaultToSpeaker: the speaker", category: .playAndRecord, options: .defaultToSpeaker, ports: phone,
            expected: Route(inputs: ["mic"], outputs: ["spk"]), outputRule: .builtInFallback),
        RouteCase(
            name: "playAndRecord with no receiver: the speaker", category: .playAndRecord, ports: laptop,
            expected: Route(inputs: ["mic"], outputs: ["spk"]), outputRule: .builtInFallback),
        RouteCase(
            name: "playAndRecord in videoChat: the speaker", category: .playAndRecord, mode: .videoChat, ports: phone,
            expected: Route(inputs: ["mic"], outputs: ["spk"])),
        RouteCase(
            name: "playAndRecord with defaultToSpeaker and no speaker: the receiver", category: .playAndRecord, options: .defaultToSpeaker,
            ports: [port("rcv", .builtInReceiver, device: "internal"), port("mic", .builtInMic, device: "internal")],
            expected: Route(inputs: ["mic"], outputs: ["rcv"]), outputRule: .builtInFallback),
        RouteCase(
            name: "videoChat with no speaker plays to the receiver", category: .playAndRecord, mode: .videoChat,
            ports: [port("rcv", .builtInReceiver, device: "internal", priority: 150, sequence: 1)],
            expected: Route(outputs: ["rcv"]), outputRule: .builtInFallback),
        RouteCase(
            name: "defaultToSpeaker yields to a headset", category: .playAndRecord, options: .defaultToSpeaker, ports: phone + headset,
            expected: Route(inputs: ["hsmic"], outputs: ["hp"])),
        RouteCase(name: "ambient: the speaker", category: .ambient, ports: phone, expected: Route(outputs: ["spk"]), outputRule: .builtInFallback),
        RouteCase(name: "soloAmbient: the speaker", category: .soloAmbient, ports: phone, expected: Route(outputs: ["spk"])),
        RouteCase(name: "playback: the speaker", category: .playback, ports: phone, expected: Route(outputs: ["spk"])),
        RouteCase(
            name: "record: the built-in mic", category: .record, ports: phone, expected: Route(inputs: ["mic"]),
            outputRule: .notUsedByCategory, inputRule: .builtInFallback),
        RouteCase(
            name: "the best of two speakers", category: .playback,
            ports: [port("spk1", .builtInSpeaker, device: "a", sequence: 1), port("spk2", .builtInSpeaker, device: "b", sequence: 2)],
            expected: Route(outputs: ["spk2"])),
    ])
    func fallback(_ c: RouteCase) throws { try c.check() }
}

@Suite("Spec §5 rule 6: multiRoute")
struct MultiRouteRuleTests {
    @Test(arguments: [
        RouteCase(
            name: "every eligible USB, line out, headphones, HDMI and DisplayPort output, in rank order", category: .multiRoute,
            ports: phone + [
                port("hdmi", .HDMI, sequence: 10), port("usb", .usbAudio, direction: .duplex, sequence: 11),
                port("hp", .headphones, sequence: 12), port("line", .lineOut, sequence: 13), port("dp", .displayPort, sequence: 14),
                port("a2dp", .bluetoothA2DP, sequence: 15),
            ],
            expected: Route(inputs: ["usb"], outputs: ["hp", "usb", "line", "dp", "hdmi"]), outputRule: .multiRoute),
        RouteCase(
            name: "the input follows the first output's device", category: .multiRoute,
            ports: phone + [port("hdmi", .HDMI, sequence: 10), port("usb", .usbAudio, direction: .duplex, sequence: 11)],
            expected: Route(inputs: ["usb"], outputs: ["usb", "hdmi"]), inputRule: .inputFollowsOutput),
        RouteCase(
            name: "the speaker only when none of them is there", category: .multiRoute,
            ports: phone + [port("a2dp", .bluetoothA2DP, sequence: 15)],
            expected: Route(inputs: ["mic"], outputs: ["spk"]), outputRule: .builtInFallback),
        RouteCase(
            name: "never the receiver", category: .multiRoute, ports: [port("rcv", .builtInReceiver), port("mic", .builtInMic)],
            expected: Route(inputs: ["mic"], outputs: []), outputRule: .noSuitableRoute),
    ])
    func multiRoute(_ c: RouteCase) throws { try c.check() }
}

@Suite("Spec §5 rule 7: no suitable route")
struct NoSuitableRouteRuleTests {
    @Test(arguments: [
        RouteCase(
            name: "record with no input", category: .record, ports: [port("spk", .builtInSpeaker)],
            expected: Route(), outputRule: .notUsedByCategory, inputRule: .noSuitableRoute),
        RouteCase(
            name: "playback with no output", category: .playback, ports: [port("mic", .builtInMic)],
            expected: Route(), outputRule: .noSuitableRoute, inputRule: .notUsedByCategory),
        RouteCase(
            name: "playAndRecord with only an output", category: .playAndRecord, ports: [port("spk", .builtInSpeaker)],
            expected: Route(outputs: ["spk"]), outputRule: .builtInFallback, inputRule: .noSuitableRoute),
        RouteCase(
            name: "playback with only an ineligible HFP link", category: .playback,
            ports: [port("hfp", .bluetoothHFP, direction: .duplex)], expected: Route(), outputRule: .noSuitableRoute),
        RouteCase(
            name: "audioProcessing needs nothing", category: .audioProcessing, ports: phone,
            expected: Route(), outputRule: .notUsedByCategory, inputRule: .notUsedByCategory),
    ])
    func noSuitableRoute(_ c: RouteCase) throws {
        try c.check()
        let resolution = resolveRoute(try request(c.category, options: c.options), ports: c.ports)
        #expect(resolution.lacksSuitableRoute == (c.category != .audioProcessing))
    }

    @Test("the tower announces it with reason noSuitableRouteForCategory")
    func towerReason() throws {
        var tower = try activeTower([port("spk", .builtInSpeaker)], .playback)
        let outcome = try tower.setCategory(.record, session: "app")
        #expect(tower.route == Route())
        #expect(outcome.change?.uids == RouteChange(reason: .noSuitableRouteForCategory, previous: Route(outputs: ["spk"]), current: Route()))
    }
}

@Suite("Ties between equally ranked devices")
struct TieTests {
    /// Found by the property "removing a port that is not in the route never changes
    /// the route": two headsets with one sequence, one standing as HFP, then as A2DP.
    @Test func whichProfileStandsForAHeadsetNeverDecidesATie() throws {
        let wanted = try request(.playAndRecord, options: [.allowBluetooth, .allowBluetoothA2DP])
        let ports = [
            port("d0-hfp", .bluetoothHFP, device: "d0", direction: .duplex, sequence: 4),
            port("d2-a2dp", .bluetoothA2DP, device: "d2", sequence: 4),
            port("d2-hfp", .bluetoothHFP, device: "d2", direction: .duplex, sequence: 4),
        ]
        #expect(resolve(wanted, ports).outputs == ["d0-hfp"])
        #expect(resolve(wanted, ports.filter { $0.uid != "d2-hfp" }).outputs == ["d0-hfp"])
    }

    @Test func wiredTypesStillBreakTiesInTableOrder() throws {
        let ports = [port("usb", .usbAudio, sequence: 4), port("hp", .headphones, sequence: 4), port("spk", .builtInSpeaker)]
        #expect(resolve(try request(.playback), ports).outputs == ["hp"])
    }
}
