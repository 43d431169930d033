// The ALSA side of a route: a configuration file that defines `audioroute_route`
// (output) and `audioroute_route_capture` (input) as plug devices on the PCMs of
// the current route, `audioroute_route_output_<n>` for a multiRoute route's further
// outputs (the plugin plays to them too), rewritten on every route change, and the public names
// `audioroute` / `audioroute_capture` as the same plugs where nothing defines them
// already (the ALSA plugin's configuration does). An ALSA client that opens them
// plays to wherever the route is at the moment it opens.
import AudioRouteCore
import AudioRouteSystem

/// The configuration text for one route. Building it is a pure function of the
/// route's output ports and first input port.
public struct AlsaRouteConfig: Sendable, Hashable {
    /// The route file's own PCM for the route's output: a plug over its first output
    /// port's PCM, always defined (`pcm.!`). The player opens it (it follows the route
    /// itself), and so does the ALSA plugin, as its slave.
    public static let outputPCM = "audioroute_route"
    /// The route file's own PCM for the route's input.
    public static let inputPCM = "audioroute_route_capture"
    /// The name apps open for the route's output. The route file defines it only where it
    /// is not defined yet (`pcm.?`): the plugin's configuration, or a user's own, wins.
    public static let publicOutputPCM = "audioroute"
    /// The name apps open for the route's input (`pcm.?`, as `publicOutputPCM`).
    public static let publicInputPCM = "audioroute_capture"
    /// Most outputs a route file names: the first and seven further ones (the plugin's
    /// `AR_MAX_OUTPUTS`); a route's outputs past these are left out, with a problem.
    public static let maximumOutputs = 8

    /// The route file's PCM for a multiRoute route's further output `index` (1 for the
    /// second output): a plug over that port's PCM, which the plugin plays to beside
    /// `outputPCM` (docs/alsa.md, "multiRoute").
    public static func furtherOutputPCM(_ index: Int) -> String { "audioroute_route_output_\(index)" }

    /// One side of the route, as it will be written.
    public struct Side: Sendable, Hashable {
        /// The PCM the plug device opens: the port's, or "null".
        public var pcm: String
        /// The control device for the port's card, when it has one.
        public var control: String?
        /// Why the side is what it is, for the comment above it.
        public var note: String
    }

    public let output: Side
    /// A multiRoute route's outputs after the first, in the route's order (empty for
    /// every other route): `furtherOutputPCM(1)`, `furtherOutputPCM(2)`, …
    public let furtherOutputs: [Side]
    public let input: Side
    /// PCM strings that were refused (and replaced by "null"), naming the port and fault.
    public let problems: [String]

    /// The configuration for `output` and `input` (nil: that side of the route is empty).
    public init(output: Port?, input: Port?) {
        self.init(outputs: output.map { [$0] } ?? [], input: input)
    }

    /// The configuration for `outputs` (the first is `outputPCM`, the others further
    /// outputs; a port without a PCM among those is left out of them) and `input`; with a
    /// `server`, the ports on cards play through it (`ServerPCM`).
    public init(outputs: [Port], input: Port?, server: ServerPCM? = nil) {
        var problems: [String] = []
        self.output = Self.side(outputs.first, direction: "output", server: server, problems: &problems)
        var further: [Side] = []
        for port in outputs.dropFirst() {
            guard further.count + 1 < Self.maximumOutputs else {
                problems.append("port \(port.uid): more than \(Self.maximumOutputs) outputs in the route: left out")
                continue
            }
            if let server, port.alsa?.card != nil {
                // The server's PCM plays to its default (the route's first output) only.
                problems.append("port \(port.uid): a further output of a multiRoute route on a card \(server.serverName) holds: left out")
                continue
            }
            let side = Self.side(port, direction: "output", server: nil, problems: &problems)
            // Nothing to play to: a "null" further output would only cost the plugin a device.
            if side.pcm != "null" { further.append(side) }
        }
        self.furtherOutputs = further
        self.input = Self.side(input, direction: "input", server: server, problems: &problems)
        self.problems = problems
    }

    /// The configuration for `route`: all its outputs (a multiRoute route has several)
    /// and its first input; with a `server`, the ports on cards play through it.
    public init(route: RoutePorts, server: ServerPCM? = nil) {
        self.init(outputs: route.outputs, input: route.inputs.first, server: server)
    }

    /// The configuration for `route`, its uids described by `ports`.
    public init(route: Route, ports: [Port]) {
        self.init(route: RoutePorts(route, describe: { uid in ports.first { $0.uid == uid } }))
    }

    private static func side(_ port: Port?, direction: String, server: ServerPCM?, problems: inout [String]) -> Side {
        guard let port else {
            return Side(pcm: "null", control: nil, note: "no \(direction) port in the current route: the null device")
        }
        let about = "\(direction) \(comment(port.name)) (uid \(comment(port.uid)), \(port.type.rawValue))"
        guard let device = port.alsa else {
            return Side(pcm: "null", control: nil, note: "\(about) has no ALSA PCM: the null device")
        }
        if let server, device.card != nil {
            return Side(
                pcm: server.pcm, control: controlCard(for: device),
                note: "\(about) through \(server.serverName): \(server.pcm), the server's default \(direction == "output" ? "sink" : "source"), which follows the route")
        }
        // Parsed devices cannot hold these; one built in code (`.named`) still must not reach the file.
        let pcm = device.description
        if let fault = fault(in: pcm) {
            problems.append("port \(port.uid): ALSA PCM refused: \(fault)")
            return Side(pcm: "null", control: nil, note: "\(about): its ALSA PCM was refused (\(fault)): the null device")
        }
        return Side(pcm: pcm, control: controlCard(for: device), note: about)
    }

    /// Why `pcm` cannot be written into the configuration, or nil. Control
    /// characters (a newline would end the string and start new definitions)
    /// are refused; quotes and backslashes are escaped by `quoted`.
    static func fault(in pcm: String) -> String? {
        if pcm.isEmpty { return "empty name" }
        if pcm.utf8.count > 256 { return "longer than 256 bytes" }
        if pcm.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) { return "control character in name" }
        return nil
    }

    /// The card of a card's PCM (`dmix:CARD=PCH,DEV=0` → `PCH`, `hw:1,0` → `1`), whose control
    /// device is `hw:CARD=<card>`. Other PCMs (bluealsa, file, user-defined) have no card control: nil.
    public static func controlCard(for device: ALSADevice) -> String? {
        guard let card = device.card?.description, fault(in: card) == nil else { return nil }
        return card
    }

    /// The control device for a card's PCM: `hw:CARD=<card>`.
    public static func controlName(for device: ALSADevice) -> String? { controlCard(for: device).map { "hw:CARD=" + $0 } }

    /// `value` as an ALSA configuration string: double quotes, with `"` and
    /// `\` escaped (alsa-lib's quoted strings take backslash escapes).
    static func quoted(_ value: String) -> String {
        var result = "\""
        for character in value.unicodeScalars {
            if character == "\"" || character == "\\" { result.unicodeScalars.append("\\") }
            result.unicodeScalars.append(character)
        }
        return result + "\""
    }

    /// A port name or uid made safe for a `#` comment: one line.
    static func comment(_ value: String) -> String {
        String(String.UnicodeScalarView(value.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : $0 }))
    }

    /// The configuration file's text. The route's own names override (`pcm.!name`) one of
    /// the same name loaded before it instead of merging into it: a merge into another
    /// definition's fields (`@args`, a `card`) gives a PCM that fails to open or plays
    /// elsewhere. The public names are defined only when undefined (`pcm.?name`): the
    /// plugin's (or a user's) `audioroute` stays what it is (docs/decisions.md, "Shared
    /// devices"). The controls keep their names, with `!`.
    public var text: String {
        var lines = [
            "# Written by audiorouted on every route change; edits are overwritten.",
            "# Include it from ~/.asoundrc (docs/alsa.md), then open \"\(Self.publicOutputPCM)\" / \"\(Self.publicInputPCM)\".",
            "",
        ]
        let sides = [(Self.outputPCM, Self.publicOutputPCM, output), (Self.inputPCM, Self.publicInputPCM, input)]
        for (name, publicName, side) in sides {
            lines.append("# \(side.note)")
            for definition in ["!" + name, "?" + publicName] {
                lines.append("pcm.\(definition) {")
                lines.append("    type plug")
                lines.append("    slave.pcm \(Self.quoted(side.pcm))")
                lines.append("}")
            }
            if let card = side.control {
                lines.append("ctl.!\(publicName) {")
                lines.append("    type hw")
                lines.append("    card \(Self.quoted(card))")
                lines.append("}")
            }
            lines.append("")
            guard name == Self.outputPCM else { continue }
            for (offset, further) in furtherOutputs.enumerated() {
                lines.append("# further output \(offset + 1) (multiRoute): \(further.note)")
                lines.append("pcm.!\(Self.furtherOutputPCM(offset + 1)) {")
                lines.append("    type plug")
                lines.append("    slave.pcm \(Self.quoted(further.pcm))")
                lines.append("}")
                lines.append("")
            }
        }
        return lines.joined(separator: "\n")
    }
}

/// The PCM that plays through the user's sound server where one owns the cards (docs/alsa.md,
/// "Beside PipeWire or PulseAudio"): libasound2-plugins' `pulse`, which PulseAudio and
/// PipeWire's pulse server both take, with no device named so that the stream follows the
/// server's default, which AudioRoute sets to the route's (the server then moves the stream
/// itself, without a gap the plugin's reopen would make).
public struct ServerPCM: Sendable, Hashable {
    /// The PCM the route's sides on cards name.
    public var pcm: String
    /// The server's name, for the file's comments and the problems.
    public var serverName: String

    /// `pcm` for the server called `serverName`.
    public init(pcm: String = "pulse", serverName: String) {
        self.pcm = pcm
        self.serverName = serverName
    }

    /// The PCM for `engine`: `pulse` where a server speaks the pulse protocol, else nil (the
    /// cards are opened directly; without pipewire-pulse a PipeWire that holds them makes that fail).
    public static func forEngine(_ engine: SoundEngine) -> ServerPCM? {
        guard let server = engine.server, engine.pulseProtocol else { return nil }
        return ServerPCM(serverName: server.displayName)
    }
}

/// Where the route file is: one rule for the daemon that writes it and every client that reads it
/// (the player here; the plugin's `ar_route_file_path`, args.c, checked against it by the
/// plugin's tests). A user's instance writes `$XDG_RUNTIME_DIR/audioroute/asound.conf`, the
/// system instance (`audiorouted --system`) `/run/audioroute/asound.conf`.
public enum RouteFileLocation {
    /// The system instance's runtime directory.
    public static let systemRuntimeDirectory = "/run"
    /// The system instance's route file.
    public static let system = systemRuntimeDirectory + "/audioroute/asound.conf"

    /// The route file of an instance whose runtime directory is `runtimeDirectory`.
    public static func file(runtimeDirectory: String) -> String { runtimeDirectory + "/audioroute/asound.conf" }

    /// The route file a client follows. On the system bus, the system instance's. On the session
    /// bus, the user's instance's where it exists (`XDG_RUNTIME_DIR` absolute), else the system
    /// instance's, whose daemon is then the tower (an embedded install runs only that one).
    /// nil when neither exists: no daemon has written a route.
    public static func forClient(systemBus: Bool, environment: [String: String], exists: (String) -> Bool) -> String? {
        if !systemBus, let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/"), exists(file(runtimeDirectory: runtime)) {
            return file(runtimeDirectory: runtime)
        }
        return exists(system) ? system : nil
    }
}

/// Writes the route's ALSA configuration to `<runtime dir>/audioroute/asound.conf`.
public struct AlsaRouteConfigWriter: Sendable {
    /// `$XDG_RUNTIME_DIR/audioroute` (or the system runtime directory).
    public let directory: String

    /// Mode of the directory when it is created: 0700 for a user's runtime
    /// directory, 0755 for a system instance whose file every user's clients read.
    public let directoryMode: UInt32

    public init(runtimeDirectory: String, directoryMode: UInt32 = 0o700) {
        directory = runtimeDirectory + "/audioroute"
        self.directoryMode = directoryMode
    }

    /// The file ALSA clients include (RouteFileLocation).
    public var path: String { directory + "/asound.conf" }

    /// Atomically replaces the file: an ALSA client opening `audioroute` while
    /// the route changes reads the old route or the new one, never half a file.
    /// The file is 0644: the directory's mode decides who can reach it.
    ///
    /// Not fsynced: a runtime file (tmpfs), rewritten at every start of the daemon,
    /// that a power loss takes with it; the write is on the way of every route change
    /// to the clients. The directory is made when it is missing (the first write, or
    /// someone removed it), not checked at every write.
    public func write(_ config: AlsaRouteConfig) throws(Errno) {
        let bytes = Array(config.text.utf8)
        do {
            try AtomicFile.write(bytes, to: path, mode: 0o644, durable: false)
        } catch where error.code == .noSuchFileOrDirectory {
            try AtomicFile.createDirectory(directory, mode: directoryMode)
            try AtomicFile.write(bytes, to: path, mode: 0o644, durable: false)
        }
    }
}
