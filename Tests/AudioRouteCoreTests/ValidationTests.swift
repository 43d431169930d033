// Spec §2–§4: which options each category accepts, what a refused setCategory
// leaves behind, and what categories and modes imply.
@testable import AudioRouteCore
import Testing

/// The "valid with" column of spec §4, written out independently of the code.
/// allowBluetoothA2DP is "always implied in output-only categories", so stating
/// it there is accepted (the code's documented choice, Validation.swift).
private let validWith: [String: Set<Category>] = [
    "mixWithOthers": [.playback, .playAndRecord, .multiRoute],
    "duckOthers": [.ambient, .playback, .playAndRecord, .multiRoute],
    "allowBluetooth": [.playAndRecord, .record],
    "defaultToSpeaker": [.playAndRecord],
    "interruptSpokenAudioAndMixWithOthers": [.playback, .playAndRecord, .multiRoute],
    "allowBluetoothA2DP": [.playAndRecord, .ambient, .soloAmbient, .playback],
    "allowAirPlay": [.playAndRecord],
    "overrideMutedMicrophoneInterruption": [.record, .playAndRecord],
]

@Suite("Spec §4: option validity")
struct OptionValidityTests {
    @Test("the table names every option, with Apple's raw values")
    func rawValues() {
        let raw = Dictionary(uniqueKeysWithValues: CategoryOptions.named.map { ($0.name, $0.option.rawValue) })
        #expect(
            raw == [
                "mixWithOthers": 0x1, "duckOthers": 0x2, "allowBluetooth": 0x4, "defaultToSpeaker": 0x8,
                "interruptSpokenAudioAndMixWithOthers": 0x11, "allowBluetoothA2DP": 0x20, "allowAirPlay": 0x40,
                "overrideMutedMicrophoneInterruption": 0x80,
            ])
        #expect(Set(validWith.keys) == Set(raw.keys))
    }

    @Test("every option with every category: accepted where valid, else invalidOption naming it and nothing changes",
        arguments: CategoryOptions.named.map(\.name), Category.allCases)
    func optionWithCategory(name: String, category: Category) throws {
        let option = try #require(CategoryOptions(name: name))
        // A session in a distinctive state, so that any partial change would show.
        var tower = try makeTower(phone + wiredHeadset(sequence: 10), sessions: [("app", .playAndRecord, .voiceChat, [.defaultToSpeaker])])
        _ = try tower.setActive(true, session: "app")
        _ = try tower.overrideOutput(.speaker, session: "app")
        let before = TowerSnapshot(tower)

        if validWith[name]!.contains(category) {
            _ = try tower.setCategory(category, mode: .default, options: option, session: "app")
            let session = try #require(tower.session("app"))
            #expect(session.configuration.category == category)
            #expect(session.configuration.options == option)
            #expect(session.configuration.mode == .default)
        } else {
            expectError(.invalidOption(name: name, category: category)) {
                try tower.setCategory(category, mode: .default, options: option, session: "app")
            }
            #expect(TowerSnapshot(tower) == before)
            expectError(.invalidOption(name: name, category: category)) {
                try SessionConfiguration(category: category, options: option)
            }
        }
    }

    @Test("the error names the first invalid option in table order, and describes it")
    func firstInvalidOptionIsNamed() {
        expectError(.invalidOption(name: "allowBluetooth", category: .playback)) {
            try SessionConfiguration(category: .playback, options: [.mixWithOthers, .defaultToSpeaker, .allowBluetooth])
        }
        let error = SessionError.invalidOption(name: "defaultToSpeaker", category: .playback)
        #expect(error.code == "invalidOption")
        #expect(error.description.contains("defaultToSpeaker"))
        #expect(error.description.contains("playback"))
    }

    @Test("interruptSpokenAudioAndMixWithOthers carries the mixWithOthers bit and is judged as itself")
    func compositeOption() throws {
        let configuration = try SessionConfiguration(category: .playback, options: .interruptSpokenAudioAndMixWithOthers)
        #expect(configuration.options.contains(.mixWithOthers))
        #expect(configuration.options.names == ["interruptSpokenAudioAndMixWithOthers"])
        // In ambient the composite is named, not its mixWithOthers bit.
        expectError(.invalidOption(name: "interruptSpokenAudioAndMixWithOthers", category: .ambient)) {
            try SessionConfiguration(category: .ambient, options: .interruptSpokenAudioAndMixWithOthers)
        }
    }

    @Test("an unnamed option bit is refused, named by its hex value", arguments: [UInt(0x10), 0x100, 0x8000])
    func unknownBits(raw: UInt) {
        expectError(.invalidOption(name: "0x" + String(raw, radix: 16), category: .playAndRecord)) {
            try SessionConfiguration(category: .playAndRecord, options: CategoryOptions(rawValue: raw))
        }
    }

    @Test("unknown names are nil, never a default", arguments: ["allowBluetooh", "", "MixWithOthers", "mix"])
    func unknownOptionName(name: String) {
        #expect(CategoryOptions(name: name) == nil)
    }

    @Test("options are not sticky: setCategory replaces them")
    func optionsReplaced() throws {
        var tower = try makeTower(phone, sessions: [("app", .playAndRecord, .default, [.defaultToSpeaker, .allowBluetooth])])
        _ = try tower.setCategory(.playAndRecord, options: [.mixWithOthers], session: "app")
        #expect(tower.session("app")?.configuration.options == [.mixWithOthers])
    }

    @Test("a new session is soloAmbient, default mode, no options, inactive")
    func newSession() throws {
        var tower = Tower()
        _ = try tower.openSession(Session(id: "app"))
        let session = try #require(tower.session("app"))
        #expect(session.configuration.category == .soloAmbient)
        #expect(session.configuration.mode == .default)
        #expect(session.configuration.options == [])
        #expect(!session.isActive)
    }

    @Test("audioProcessing is accepted with a warning and routes nothing")
    func deprecatedCategory() throws {
        var tower = try activeTower(phone, .playback)
        let outcome = try tower.setCategory(.audioProcessing, session: "app")
        #expect(outcome.warnings.count == 1)
        #expect(outcome.warnings.first?.contains("audioProcessing") == true)
        #expect(tower.route == Route())
        let other = try tower.setCategory(.playback, session: "app")
        #expect(other.warnings.isEmpty)
    }
}

@Suite("Spec §2–§4: implied options and modes")
struct ImpliedOptionTests {
    @Test("duckOthers implies mixWithOthers", arguments: [Category.ambient, .playback, .playAndRecord, .multiRoute])
    func duckOthersMixes(category: Category) throws {
        let configuration = try SessionConfiguration(category: category, options: .duckOthers)
        #expect(configuration.isMixable)
        #expect(configuration.effectiveOptions.contains(.mixWithOthers))
        #expect(configuration.options == .duckOthers, "the options as set are reported unchanged")
    }

    @Test("mixable per category without options: only ambient", arguments: Category.allCases)
    func mixableByCategory(category: Category) throws {
        let configuration = try SessionConfiguration(category: category)
        #expect(configuration.isMixable == (category == .ambient))
    }

    @Test("mixWithOthers makes playback, playAndRecord and multiRoute mixable",
        arguments: [Category.playback, .playAndRecord, .multiRoute])
    func mixWithOthers(category: Category) throws {
        #expect(try SessionConfiguration(category: category, options: .mixWithOthers).isMixable)
        #expect(try SessionConfiguration(category: category, options: .interruptSpokenAudioAndMixWithOthers).isMixable)
    }

    @Test("voiceChat implies allowBluetooth: an HFP headset becomes the route")
    func voiceChatAllowsBluetooth() throws {
        let ports = phone + bluetoothHeadset(a2dpSequence: 10, hfpSequence: 11)
        #expect(try SessionConfiguration(category: .playAndRecord, mode: .voiceChat).effectiveOptions.contains(.allowBluetooth))
        #expect(resolve(try request(.playAndRecord, mode: .voiceChat), ports) == Route(inputs: ["bt-hfp"], outputs: ["bt-hfp"]))
        #expect(resolve(try request(.playAndRecord), ports) == Route(inputs: ["mic"], outputs: ["rcv"]))
    }

    @Test("videoChat implies allowBluetooth and defaultToSpeaker")
    func videoChatImplies() throws {
        let configuration = try SessionConfiguration(category: .playAndRecord, mode: .videoChat)
        #expect(configuration.effectiveOptions.isSuperset(of: [.allowBluetooth, .defaultToSpeaker]))
        #expect(configuration.options == [])
        #expect(resolve(try request(.playAndRecord, mode: .videoChat), phone) == Route(inputs: ["mic"], outputs: ["spk"]))
        let withHeadset = phone + bluetoothHeadset(a2dpSequence: 10, hfpSequence: 11)
        #expect(resolve(try request(.playAndRecord, mode: .videoChat), withHeadset).outputs == ["bt-hfp"])
    }

    @Test("a mode the category does not support is reported as set but behaves as default",
        arguments: [(Mode.voiceChat, Category.playback), (.videoChat, .playback), (.voiceChat, .record), (.videoChat, .multiRoute)])
    func unsupportedMode(mode: Mode, category: Category) throws {
        var tower = try makeTower(phone + bluetoothHeadset(a2dpSequence: 10, hfpSequence: 11), sessions: [("app", category, mode, [])])
        _ = try tower.setActive(true, session: "app")
        let session = try #require(tower.session("app"))
        #expect(session.configuration.mode == mode, "reported as set")
        #expect(session.configuration.effectiveMode == .default)
        #expect(!session.configuration.effectiveOptions.contains(.allowBluetooth))
        // The HFP link stays ineligible, exactly as with mode default.
        let asDefault = resolve(try request(category), tower.ports)
        #expect(tower.route == asDefault)
        #expect(!tower.route.outputs.contains("bt-hfp") && !tower.route.inputs.contains("bt-hfp"))
    }

    @Test("spokenAudio in a category that does not support it is not interrupted as spoken audio")
    func unsupportedSpokenAudio() throws {
        var tower = try makeTower(laptop, sessions: [("podcast", .ambient, .spokenAudio, []), ("nav", .playback, .voicePrompt, [.interruptSpokenAudioAndMixWithOthers])])
        _ = try tower.setActive(true, session: "podcast")
        let outcome = try tower.setActive(true, session: "nav")
        #expect(events(outcome) == [])
        #expect(tower.session("podcast")?.isActive == true)
    }

    @Test("A2DP is implied in the output-only categories", arguments: [Category.ambient, .soloAmbient, .playback])
    func a2dpImplied(category: Category) throws {
        #expect(try SessionConfiguration(category: category).effectiveOptions.contains(.allowBluetoothA2DP))
    }

    @Test("A2DP is not implied where it is not allowed", arguments: [Category.record, .playAndRecord, .multiRoute, .audioProcessing])
    func a2dpNotImplied(category: Category) throws {
        #expect(!(try SessionConfiguration(category: category).effectiveOptions.contains(.allowBluetoothA2DP)))
    }
}
