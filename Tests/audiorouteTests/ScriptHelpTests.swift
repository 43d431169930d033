// Every program in scripts/ answers --help with its own usage and does nothing else: the
// leading comment (or the docstring) is the usage, so what it prints must begin with it. A
// script that did not know --help would start its work (a bench, an install) or print another
// program's usage (build-alsa-plugin once printed mkdir's).
import AudioRouteTestKit
import Glibc
import Testing

@Suite struct ScriptHelpTests {
    static let scripts = Subprocess.packageRoot + "/scripts"

    /// The executables of scripts/, by name (the link order files and the linker script are data).
    static var programs: [String] {
        directoryEntries(scripts).filter { name in
            !name.hasSuffix(".order") && !name.hasSuffix(".ld") && access(scripts + "/" + name, X_OK) == 0
        }.sorted()
    }

    /// The first line of the script's own usage: its docstring's or its leading comment's.
    static func firstUsageLine(_ text: String) -> String? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropFirst()  // the #! line
        guard let first = lines.first else { return nil }
        if first.hasPrefix("\"\"\"") { return String(first.dropFirst(3)).trimmingSpaces }
        if first.hasPrefix("#") { return String(first.drop { $0 == "#" || $0 == " " }).trimmingSpaces }
        return nil
    }

    @Test func thereAreScripts() {
        #expect(Self.programs.count >= 20, "\(Self.programs)")
    }

    @Test(arguments: programs)
    func itAnswersHelpWithItsOwnUsage(_ name: String) throws {
        let path = Self.scripts + "/" + name
        let expected = try #require(Self.firstUsageLine(try readText(path)), "\(name) has no leading comment or docstring to be its usage")
        // Bounded: a script that ignored --help and started its work is killed, and fails.
        let result = try ChildProcess("/usr/bin/timeout", ["-s", "KILL", "60", path, "--help"], environment: ["PYTHONDONTWRITEBYTECODE": "1"]).collect()
        #expect(result.status == 0, "\(name) --help exited \(result.status): \(result.stderr.suffix(800))")
        let printed = result.stdoutLines.first.map { String($0.drop { $0 == "#" || $0 == " " }).trimmingSpaces }
        #expect(printed == expected, "\(name) --help printed \(result.stdout.prefix(300))")
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        var text = Substring(self)
        while text.last == " " { text.removeLast() }
        return String(text)
    }
}
