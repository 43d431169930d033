// The UCM bench, shared by the UCM tests: alsa-ucm-conf's files as installed in
// /usr/share/alsa/ucm2, with the stock top-level ucm.conf, read by libasound with no sound card
// (docs/ucm.md, "Opening the files without the hardware"). Fake control devices
// (Tests/Fixtures/ucm2/fake-card-ctl.c, built here with cc) give libasound each card's
// identity as the kernel gives it (driver, names, components) and the controls its profile
// tests and its sequences write. Two entries of the tree are not the installed ones:
// - lib/generic.conf, the alsa-lib configuration the stock ucm.conf gives every profile, maps
//   hw controls to the fake cards instead of the kernel's (the installed one would send every
//   sequence's writes to a kernel card that is not there);
// - conf.d/simple-card/ also has the PinePhone's and Librem 5's links, as alsa-ucm-conf 1.2.9
//   and later ship them and as docs/ucm.md tells a Debian 12 integrator to add them.
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

    /// The cards with a state directory (writes log, jack files, refused controls), by card id.
    public static let statefulCards = ["PinePhone", "L5"]

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
        for card in statefulCards {
            guard mkdir(dir + "/" + card, 0o755) == 0 else { throw TestFailure("mkdir \(card)") }
        }
        // The cards: their identities and controls, each card's state directory.
        let cards = [
            try readText(fixtures + "/phones/pinephone-card.conf"), try readText(fixtures + "/pinephone-controls.conf"),
            try readText(fixtures + "/phones/librem5-card.conf"),
            #"audioroute_fakecard.sofhdadsp { driver "sof-hda-dsp" name "sof-hda-dsp" longname "LENOVO-20XX" }"#,
        ] + statefulCards.map { "audioroute_fakecard.\($0).state \"\(dir)/\($0)\"" }
        let fake = """
            ctl_type.audioroute_fakecard { lib "\(plugin)" }
            ctl.!hw { @args [ CARD ] @args.CARD { type string } type audioroute_fakecard id $CARD }

            """ + cards.joined(separator: "\n") + "\n"
        try writeText(dir + "/asound.conf", fake)

        // ucm2: every installed entry, linked, but lib/generic.conf and conf.d/simple-card/.
        let installed = "/usr/share/alsa/ucm2"
        let ucm2 = dir + "/ucm2"
        try link(entriesOf: installed, into: ucm2, except: ["lib", "conf.d"])
        try link(entriesOf: installed + "/lib", into: ucm2 + "/lib", except: ["generic.conf"])
        try link(entriesOf: installed + "/conf.d", into: ucm2 + "/conf.d", except: ["simple-card"])
        try link(entriesOf: installed + "/conf.d/simple-card", into: ucm2 + "/conf.d/simple-card", except: [])
        for (name, target) in [("PinePhone.conf", "../../PinePhone/PinePhone.conf"), ("Librem 5.conf", "../../Librem_5/Librem_5.conf")] {
            guard symlink(target, ucm2 + "/conf.d/simple-card/" + name) == 0 else { throw TestFailure("symlink \(name)") }
        }
        // The stock lib/generic.conf says `pcm.hw` and `ctl.hw` of type hw (the kernel's);
        // here the controls are the fake cards', which this configuration must describe too:
        // alsa-lib opens a profile's controls with this configuration alone.
        try writeText(ucm2 + "/lib/generic.conf", """
            # The bench's stand-in for alsa-ucm-conf's lib/generic.conf (UCMBench.swift): hw
            # controls are the fake cards, PCMs the kernel's as in the installed file.
            LibraryConfig.generic.Config {
            \(fake)
            \tpcm.hw {
            \t\t@args [ CARD DEV SUBDEV ]
            \t\t@args { CARD.type string DEV.type integer SUBDEV.type integer }
            \t\ttype hw card $CARD device $DEV subdevice $SUBDEV
            \t}
            }

            """)
        return dir
    }

    /// Links every entry of `source` into `target` (created), but `except`, which are made directories.
    private static func link(entriesOf source: String, into target: String, except: Set<String>) throws {
        guard mkdir(target, 0o755) == 0 else { throw TestFailure("mkdir \(target)") }
        for name in directoryEntries(source) where !except.contains(name) {
            guard symlink(source + "/" + name, target + "/" + name) == 0 else { throw TestFailure("symlink \(name)") }
        }
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

    // MARK: A fake card's state (the PinePhone's by default)

    /// Its state directory: the writes log, the jacks' files, the refused controls.
    public static func state(_ card: String = "PinePhone") throws -> String { try directory.get() + "/" + card }

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
