import AudioRouteCore
import AudioRouteDaemon
import Foundation
import Testing

/// The roles file as the daemon reads it (`--roles`, docs/roles-file.md): a good one is taken,
/// a bad or missing one is logged with its fault and the built-in table stays.
@Suite struct StreamRoleFileTests {
    func file(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "roles-\(UUID().uuidString).json"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func aGoodFileIsTaken() throws {
        let path = try file(#"{"roles": {"Music": {"category": "ambient"}}}"#)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (logger, store) = recordingLogger()
        let table = StreamRoleTable.load(path: path, logger: logger)
        #expect(table.configuration(forRole: "music").configuration.category == .ambient)
        #expect(store.all.contains { $0.level == .notice && $0.message == "roles file read" })
    }

    @Test func aMalformedFileIsNamedAndTheBuiltInTableStays() throws {
        let path = try file(#"{"roles": {"Music": {"category": "loud"}}}"#)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (logger, store) = recordingLogger()
        #expect(StreamRoleTable.load(path: path, logger: logger) == .builtIn)
        let error = store.all.first { $0.level == .error }
        #expect(error?.message == "roles file refused: the built-in role table applies")
        #expect(error?.metadata["error"] == "role \"Music\": unknown category \"loud\"; one of: ambient, soloAmbient, playback, record, playAndRecord, multiRoute, audioProcessing")
        #expect(error?.metadata["file"] == path)
    }

    @Test func aMissingOrHugeFileIsNamedAndTheBuiltInTableStays() throws {
        let (logger, store) = recordingLogger()
        #expect(StreamRoleTable.load(path: "/nonexistent/roles.json", logger: logger) == .builtIn)
        #expect(store.all.first { $0.level == .error }?.metadata["error"]?.contains("No such file") == true, "\(store.all)")
        let path = try file(String(repeating: " ", count: StreamRoleTable.maximumFileSize + 1))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (bigLogger, bigStore) = recordingLogger()
        #expect(StreamRoleTable.load(path: path, logger: bigLogger) == .builtIn)
        #expect(bigStore.all.first { $0.level == .error }?.metadata["error"] == "\(path) is larger than 65536 bytes (65537 or more)", "\(bigStore.all)")
    }

    @Test func theOptionTakesAnAbsolutePath() throws {
        #expect(try DaemonOptions.parse(["--roles", "/etc/x.json"]).roles == "/etc/x.json")
        #expect(try DaemonOptions.parse(["--roles=/etc/x.json"]).roles == "/etc/x.json")
        #expect(throws: UsageError("--roles needs an absolute path, not \"x.json\"")) { try DaemonOptions.parse(["--roles", "x.json"]) }
        #expect(try DaemonOptions.parse([]).roles == nil)
    }
}
