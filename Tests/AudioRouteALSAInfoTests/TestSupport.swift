// Shared by this target's files: the corpus directory and its records.
@_exported import AudioRouteTestKit

enum Corpus {
    static let directory = Subprocess.packageRoot + "/Tests/Fixtures/alsa-info"

    /// Every report with an expectation, by name (`laptop-dell-xps-9300-sof-soundwire`).
    static var records: [String] {
        directoryEntries(directory).filter { $0.hasSuffix(".expect") }.map { String($0.dropLast(".expect".count)) }.sorted()
    }

    static func report(_ name: String) throws -> String { try readText("\(directory)/\(name).txt") }
    static func expectation(_ name: String) throws -> String { try readText("\(directory)/\(name).expect") }
}
