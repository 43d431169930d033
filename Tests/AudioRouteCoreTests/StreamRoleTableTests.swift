import AudioRouteCore
import Testing

/// `media.role` → session configuration (docs/roles-file.md).
@Suite struct StreamRoleTableTests {
    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
    func configuration(_ category: Category, _ mode: Mode = .default, _ options: CategoryOptions = []) throws -> SessionConfiguration {
        try SessionConfiguration(category: category, mode: mode, options: options)
    }

    @Test func theBuiltInTableIsTheDocumentedOne() throws {
        let table = StreamRoleTable.builtIn
        for role in ["Music", "Movie", "Game", "Production", "Alarm"] {
            #expect(table.configuration(forRole: role).configuration == (try configuration(.playback)), "\(role)")
        }
        for role in ["Phone", "Communication"] {
            #expect(table.configuration(forRole: role).configuration == (try configuration(.playAndRecord, .voiceChat)), "\(role)")
        }
        for role in ["Navigation", "Accessibility"] {
            #expect(table.configuration(forRole: role).configuration == (try configuration(.playback, .default, [.mixWithOthers, .duckOthers])), "\(role)")
        }
        for role in ["Notification", "Event", "Test"] {
            #expect(table.configuration(forRole: role).configuration == (try configuration(.ambient)), "\(role)")
        }
        #expect(table.configuration(forRole: nil).configuration == (try configuration(.playback)))
        #expect(table.configuration(forRole: nil).entry == "no media.role")
        #expect(table.configuration(forRole: "Karaoke").configuration == (try configuration(.playback)))
        #expect(table.configuration(forRole: "Karaoke").entry == "media.role Karaoke, not in the table")
    }

    @Test func rolesMatchWhateverTheirCase() throws {
        let table = StreamRoleTable.builtIn
        for role in ["phone", "PHONE", "pHoNe"] {
            #expect(table.configuration(forRole: role).configuration == (try configuration(.playAndRecord, .voiceChat)), "\(role)")
        }
    }

    @Test func aFileChangesTheRolesItNamesAndKeepsTheOthers() throws {
        let file = #"""
            {"roles": {"notification": {"category": "playback", "options": ["mixWithOthers"]},
                       "Karaoke": {"category": "playAndRecord", "mode": "default"},
                       "NONE": {"category": "ambient"}}}
            """#
        let table = try StreamRoleTable.parse(bytes(file)).get()
        #expect(table.configuration(forRole: "Notification").configuration == (try configuration(.playback, .default, [.mixWithOthers])))
        #expect(table.configuration(forRole: "karaoke").configuration == (try configuration(.playAndRecord)))
        #expect(table.configuration(forRole: nil).configuration == (try configuration(.ambient)))
        #expect(table.configuration(forRole: "Unknown").configuration == (try configuration(.ambient)))
        #expect(table.configuration(forRole: "Phone").configuration == (try configuration(.playAndRecord, .voiceChat)))
    }

    @Test(arguments: [
        ("garbage", "malformed JSON: line 1, column 1: unexpected character"),
        ("[]", "the file is a JSON object, not an array"),
        (#"{}"#, "missing member \"roles\""),
        (#"{"roles": {}, "extra": 1}"#, "unknown member \"extra\" (the file has \"roles\")"),
        (#"{"roles": []}"#, "\"roles\" is an object, not an array"),
        (#"{"roles": {"Music": "playback"}}"#, "role \"Music\": an object, not a string"),
        (#"{"roles": {"Music": {}}}"#, "role \"Music\": \"category\" is missing or not a string"),
        (#"{"roles": {"Music": {"category": "loud"}}}"#, "role \"Music\": unknown category \"loud\"; one of: ambient, soloAmbient, playback, record, playAndRecord, multiRoute, audioProcessing"),
        (#"{"roles": {"Music": {"category": "playbak"}}}"#, "role \"Music\": unknown category \"playbak\" (did you mean \"playback\"?); one of: ambient, soloAmbient, playback, record, playAndRecord, multiRoute, audioProcessing"),
        (#"{"roles": {"Music": {"category": "playback", "mode": "fast"}}}"#,
         "role \"Music\": \"mode\" is a mode's name (default, voiceChat, gameChat, videoRecording, measurement, moviePlayback, videoChat, spokenAudio, voicePrompt)"),
        (#"{"roles": {"Music": {"category": "playback", "options": "duckOthers"}}}"#, "role \"Music\": \"options\" is an array of option names"),
        (#"{"roles": {"Music": {"category": "playback", "options": ["shout"]}}}"#, "role \"Music\": unknown option \"shout\"; one of: " + CategoryOptions.named.map(\.name).joined(separator: ", ")),
        (#"{"roles": {"Music": {"category": "playback", "options": [1]}}}"#, "role \"Music\": an option is a name, not a number"),
        (#"{"roles": {"Music": {"category": "playback", "volume": 1}}}"#,
         "role \"Music\": unknown member \"volume\" (a role has \"category\", \"mode\" and \"options\")"),
        (#"{"roles": {"Music": {"category": "ambient", "options": ["defaultToSpeaker"]}}}"#,
         "role \"Music\": option defaultToSpeaker is not valid with category ambient"),
        (#"{"roles": {"Music": {"category": "playback"}, "MUSIC": {"category": "ambient"}}}"#,
         "role \"MUSIC\" named twice (roles match whatever their case)"),
        (#"{"roles": {"": {"category": "playback"}}}"#, "a role is named by an empty string"),
    ])
    func aBadFileIsNamed(_ file: String, _ message: String) {
        #expect(StreamRoleTable.parse(bytes(file)) == .failure(StreamRoleError(message)))
    }

    @Test func sizesAreCheckedBeforeDecoding() {
        let huge = [UInt8](repeating: UInt8(ascii: " "), count: StreamRoleTable.maximumFileSize + 1)
        #expect(StreamRoleTable.parse(huge) == .failure(StreamRoleError("over 65536 bytes (65537)")))
        let many = (0...StreamRoleTable.maximumRoles).map { #""r\#($0)": {"category": "playback"}"# }.joined(separator: ", ")
        #expect(StreamRoleTable.parse(bytes(#"{"roles": {\#(many)}}"#)) == .failure(StreamRoleError("257 roles, over 256")))
        // Nesting deeper than any roles file is refused, not recursed into.
        guard case .failure = StreamRoleTable.parse(bytes(String(repeating: "[", count: 60_000))) else { Issue.record("deep nesting taken"); return }
    }
}
