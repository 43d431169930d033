import AudioRouteTestKit
import Foundation
import Testing

/// `--version` on every binary: its name, the release, and the git commit it was built from,
/// as git itself names the checkout's HEAD.
@Suite struct VersionTests {
    static let binaries = ["audioroute", "audiorouted", "audioroute-ucm", "audioroute-pipewire", "audioroute-pulse"]

    /// HEAD's short commit as git says it, or nil outside a checkout.
    static func head() -> String? {
        let root = fixturesDirectory + "/../.."
        guard let result = try? ChildProcess("/usr/bin/git", ["-C", root, "rev-parse", "--short=12", "HEAD"]).collect(), result.status == 0 else { return nil }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(arguments: binaries)
    func itPrintsTheReleaseAndTheCommit(binary: String) throws {
        let result = try ChildProcess(productsDirectory + "/" + binary, ["--version"]).collect()
        #expect(result.status == 0, "\(result.stderr)")
        let line = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(line.hasPrefix(binary + " 0."), "\(line)")
        guard let commit = Self.head() else { return }
        // The build is of HEAD, or of HEAD with changes not yet committed.
        #expect(line.hasSuffix("(commit \(commit))") || line.hasSuffix("(commit \(commit)-modified)"), "\(line), HEAD \(commit)")
    }
}
