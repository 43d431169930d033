// The UCM bench, shared by the UCM tests: alsa-ucm-conf's files as installed in
// /usr/share/alsa/ucm2, unchanged, read by libasound with no sound card (docs/ucm.md,
// "Opening the files without the hardware"). A fake control device
// (Tests/Fixtures/ucm2/fake-card-ctl.c, built here with cc) gives libasound the card
// identity that UCM substitutes and, for the PinePhone, the controls its sequences write
// (Tests/Fixtures/ucm2/pinephone-controls.conf); Tests/Fixtures/ucm2/ucm.conf stands in
// for the top-level file so the card name finds PinePhone/ and Librem_5/.
import AudioRouteSystem
import Glibc
import Testing

public enum UCMBench {
    /// The bench's directory, set up once per process.
    private static let directory: Result<String, TestFailure> = {
        do {
            return .success(try setUp())
        } catch let error as TestFailure {
            return .failure(error)
        } catch {
            return .failure(TestFailure("\(error)"))
        }
    }()

    private static func setUp() throws -> String {
        let dir = try makeTemporaryDirectory()
        let fixtures = Subprocess.packageRoot + "/Tests/Fixtures/ucm2"
        let plugin = dir + "/libasound_module_ctl_audioroute_fakecard.so"
        // The compiler as scripts/build-alsa-plugin picks it: cc, else the Swift toolchain's clang.
        let cc = try Subprocess.run(
            "/bin/sh",
            [
                "-c", "exec \"${CC:-$(command -v cc || command -v clang || echo cc)}\" -DPIC -shared -fPIC -o \"$0\" \"$1\" -lasound",
                plugin, fixtures + "/fake-card-ctl.c",
            ])
        guard cc.status == 0 else { throw TestFailure("cc fake-card-ctl.c: \(cc.stderr)") }
        // ucm2: every installed entry, linked, except the top-level file.
        let ucm2 = dir + "/ucm2"
        guard mkdir(ucm2, 0o755) == 0 else { throw TestFailure("mkdir \(ucm2)") }
        let installed = "/usr/share/alsa/ucm2"
        for name in directoryEntries(installed) where name != "ucm.conf" {
            guard symlink(installed + "/" + name, ucm2 + "/" + name) == 0 else { throw TestFailure("symlink \(name)") }
        }
        try writeText(ucm2 + "/ucm.conf", try readText(fixtures + "/ucm.conf"))
        let state = dir + "/PinePhone"
        guard mkdir(state, 0o755) == 0 else { throw TestFailure("mkdir \(state)") }
        try writeText(dir + "/asound.conf", """
            ctl_type.audioroute_fakecard { lib "\(plugin)" }
            ctl.!hw { @args [ CARD ] @args.CARD { type string } type audioroute_fakecard id $CARD }
            audioroute_fakecard.sofhdadsp { driver "sof-hda-dsp" name "sof-hda-dsp" longname "LENOVO-20XX" }
            audioroute_fakecard.PinePhone.state "\(state)"

            """ + (try readText(fixtures + "/pinephone-controls.conf")))
        return dir
    }

    /// The variables that point libasound at the bench, for a child process.
    public static func environment() throws -> [String: String] {
        let dir = try directory.get()
        return ["ALSA_CONFIG_PATH": "/usr/share/alsa/alsa.conf:" + dir + "/asound.conf", "ALSA_CONFIG_UCM2": dir + "/ucm2"]
    }

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

    // MARK: The PinePhone's fake card

    /// Its state directory: the writes log, the jacks' files, the refused controls.
    public static func pinePhoneState() throws -> String { try directory.get() + "/PinePhone" }

    /// Empties the state: no writes recorded, every jack unplugged, no control refusing.
    public static func resetPinePhone() throws {
        let state = try pinePhoneState()
        for name in directoryEntries(state) { unlink(state + "/" + name) }
    }

    /// The writes recorded since the last call (or reset), "<control>=<values>", in order;
    /// the log is emptied.
    public static func takeWrites() throws -> [String] {
        let path = try pinePhoneState() + "/writes"
        guard access(path, F_OK) == 0 else { return [] }
        let lines = try readText(path).split(separator: "\n").map(String.init)
        unlink(path)
        return lines
    }

    /// Plugs or unplugs a jack of the fake card (the file is renamed into place: one event).
    public static func setJack(_ name: String, plugged: Bool) throws {
        try writeText(try pinePhoneState() + "/" + name, plugged ? "1\n" : "0\n")
    }

    /// Makes writes to `controls` fail with EIO (none: every write succeeds).
    public static func refuseWrites(_ controls: [String]) throws {
        let path = try pinePhoneState() + "/refuse"
        if controls.isEmpty { unlink(path) } else { try writeText(path, controls.map { $0 + "\n" }.joined()) }
    }
}
