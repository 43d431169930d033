// The UCM bench, shared by the UCM tests: alsa-ucm-conf's files as installed in
// /usr/share/alsa/ucm2, with the stock top-level ucm.conf, read by libasound with no sound card
// (docs/ucm.md, "Opening the files without the hardware"). scripts/ucm-fake-cards sets it up:
// fake control devices (Sources/AudioRouteFakeCard/fake-card-ctl.c) give libasound each card's identity
// as the kernel gives it (driver, names, components) and the controls its profile tests and its
// sequences write; the tree's lib/generic.conf sends the sequences' writes to them, and its
// conf.d/simple-card/ has the PinePhone's and Librem 5's links, as alsa-ucm-conf 1.2.9 and later
// ship them.
import AudioRouteSystem
import Glibc
import Testing

public enum UCMBench {
    /// The bench's directory and environment, set up once per process.
    private static let bench: Result<(directory: String, environment: [String: String]), TestFailure> = {
        do {
            return .success(try setUp())
        } catch let error as TestFailure {
            return .failure(error)
        } catch {
            return .failure(TestFailure("\(error)"))
        }
    }()

    /// The cards with a state directory (writes log, jack files, refused controls), by card id.
    public static let statefulCards = ["PinePhone", "L5"]

    /// The card descriptions the bench loads (Tests/Fixtures/ucm2/...).
    static let cardFiles = [
        "phones/pinephone-card.conf", "pinephone-controls.conf", "phones/librem5-card.conf", "cards/sofhdadsp-bare.conf", "cards/bench-numbers.conf",
        "cards/hda-nvidia-hdmi-card.conf",
    ]

    private static func setUp() throws -> (directory: String, environment: [String: String]) {
        let dir = try makeTemporaryDirectory()
        let fixtures = Subprocess.packageRoot + "/Tests/Fixtures/ucm2/"
        let run = try Subprocess.run(
            Subprocess.packageRoot + "/scripts/ucm-fake-cards",
            [dir] + statefulCards.flatMap { ["--state", $0] } + cardFiles.map { fixtures + $0 })
        guard run.status == 0 else { throw TestFailure("scripts/ucm-fake-cards: \(run.stderr)") }
        var environment: [String: String] = [:]
        for line in run.stdout.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { environment[parts[0]] = parts[1] }
        }
        guard environment.count == 2 else { throw TestFailure("scripts/ucm-fake-cards printed \(run.stdout)") }
        return (dir, environment)
    }

    /// The variables that point libasound at the bench, for a child process.
    public static func environment() throws -> [String: String] { try bench.get().environment }

    /// Runs `body` with the bench in libasound's environment, restored after:
    /// libasound reads ALSA_CONFIG_PATH and ALSA_CONFIG_UCM2 from the environment
    /// (process-wide), and child processes of other tests inherit it.
    public static func with<T>(_ body: () throws -> T) throws -> T {
        let variables = try environment()
        let saved: [(String, String?)] = variables.keys.map { name in (name, getenv(name).map { String(cString: $0) }) }
        for (name, value) in variables { setenv(name, value, 1) }
        defer {
            for (name, value) in saved {
                if let value { setenv(name, value, 1) } else { unsetenv(name) }
            }
        }
        return try body()
    }

    // MARK: A fake card's state (the PinePhone's by default)

    /// Its state directory: the writes log, the jacks' files, the refused controls.
    public static func state(_ card: String = "PinePhone") throws -> String { try bench.get().directory + "/" + card }

    /// The PinePhone's state directory.
    public static func pinePhoneState() throws -> String { try state() }

    /// Empties the PinePhone's state: no writes recorded, every jack unplugged, no control refusing.
    public static func resetPinePhone() throws { try reset("PinePhone") }

    /// Empties `card`'s state.
    public static func reset(_ card: String) throws {
        let state = try state(card)
        for name in directoryEntries(state) { unlink(state + "/" + name) }
    }

    /// The writes recorded on `card` since the last call (or reset), "<control>=<values>", in
    /// order; the log is emptied.
    public static func takeWrites(_ card: String = "PinePhone") throws -> [String] {
        let path = try state(card) + "/writes"
        guard access(path, F_OK) == 0 else { return [] }
        let lines = try readText(path).split(separator: "\n").map(String.init)
        unlink(path)
        return lines
    }

    /// Plugs or unplugs a jack of a fake card (the file is renamed into place: one event).
    public static func setJack(_ name: String, plugged: Bool, card: String = "PinePhone") throws {
        try writeText(try state(card) + "/" + name, plugged ? "1\n" : "0\n")
    }

    /// Makes writes to `controls` of the PinePhone fail with EIO (none: every write succeeds).
    public static func refuseWrites(_ controls: [String]) throws {
        let path = try pinePhoneState() + "/refuse"
        if controls.isEmpty { unlink(path) } else { try writeText(path, controls.map { $0 + "\n" }.joined()) }
    }
}

/// A UCM bench of its own, for the cards of one machine (scripts/ucm-fake-cards into a
/// temporary directory, removed when it goes): the stock profiles of the installed tree, opened
/// for cards described by `cardFiles` (absolute paths of `audioroute_fakecard.<id> { … }` files),
/// each card of `states` with a state directory (writes log, jack files).
public final class UCMMachineBench: Sendable {
    public let directory: String
    /// ALSA_CONFIG_PATH and ALSA_CONFIG_UCM2, for a child process.
    public let environment: [String: String]

    public init(cardFiles: [String], states: [String]) throws {
        directory = try makeTemporaryDirectory()
        let run = try Subprocess.run(
            Subprocess.packageRoot + "/scripts/ucm-fake-cards", [directory + "/bench"] + states.flatMap { ["--state", $0] } + cardFiles)
        guard run.status == 0 else {
            removeTree(directory)
            throw TestFailure("scripts/ucm-fake-cards: \(run.stderr)")
        }
        var environment: [String: String] = [:]
        for line in run.stdout.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { environment[parts[0]] = parts[1] }
        }
        self.environment = environment
    }

    deinit { removeTree(directory) }

    /// The writes recorded on `card` since the last call, "<control>=<values>", in order; the log is emptied.
    public func takeWrites(_ card: String) throws -> [String] {
        let path = directory + "/bench/" + card + "/writes"
        guard access(path, F_OK) == 0 else { return [] }
        let lines = try readText(path).split(separator: "\n").map(String.init)
        unlink(path)
        return lines
    }

    /// Plugs or unplugs a jack of `card` (one event).
    public func setJack(_ name: String, plugged: Bool, card: String) throws {
        try writeText(directory + "/bench/" + card + "/" + name, plugged ? "1\n" : "0\n")
    }
}
