// The "Alsactl output" section: `alsactl store`'s file, in ALSA's configuration syntax
// (alsa-utils alsactl/state.c writes it with snd_config_save): `state.<card id> { control.<numid>
// { iface … name '…' value … comment { access '…' type … count … range '…' item.<n> '…' } } }`.

/// One control of a card, as `alsactl store` saved it: the element's identity, its type and
/// limits, and its values when the report was made.
public struct ALSAInfoControl: Sendable, Hashable {
    /// The element's numid (`control.<numid>`).
    public var numid: Int
    /// `CARD`, `MIXER`, `PCM`, `HWDEP`, `RAWMIDI`, `TIMER` or `SEQUENCER`.
    public var iface: String
    public var name: String
    public var index: Int
    public var device: Int
    public var subdevice: Int
    /// `BOOLEAN`, `INTEGER`, `ENUMERATED`, `BYTES`, `IEC958` or `INTEGER64`.
    public var type: String
    public var count: Int
    /// The access words (`read`, `write`, `inactive`, `volatile`, `user`...).
    public var access: [String]
    /// For INTEGER and INTEGER64: the range (`0 - 87`, `-10239 - 400 (step 1)`).
    public var min: Int?
    public var max: Int?
    public var step: Int?
    /// For ENUMERATED: the item names, in order.
    public var items: [String]
    /// The values as saved: `true`/`false`, numbers, item names, or a hex string (BYTES, IEC958).
    public var values: [String]

    public init(
        numid: Int, iface: String, name: String, index: Int = 0, device: Int = 0, subdevice: Int = 0, type: String, count: Int = 1,
        access: [String] = ["read", "write"], min: Int? = nil, max: Int? = nil, step: Int? = nil, items: [String] = [], values: [String] = []
    ) {
        self.numid = numid
        self.iface = iface
        self.name = name
        self.index = index
        self.device = device
        self.subdevice = subdevice
        self.type = type
        self.count = count
        self.access = access
        self.min = min
        self.max = max
        self.step = step
        self.items = items
        self.values = values
    }

    public var isReadable: Bool { access.contains("read") }
    public var isWritable: Bool { access.contains("write") }
}

/// A node of ALSA's configuration syntax: a leaf value or a compound of named children.
indirect enum ConfigNode: Sendable {
    case leaf(String, line: Int)
    case compound([(key: String, node: ConfigNode)], line: Int)

    var line: Int {
        switch self {
        case .leaf(_, let line), .compound(_, let line): line
        }
    }

    subscript(key: String) -> ConfigNode? {
        guard case .compound(let members, _) = self else { return nil }
        return members.first { $0.key == key }?.node
    }

    var leaf: String? {
        if case .leaf(let value, _) = self { return value }
        return nil
    }

    var members: [(key: String, node: ConfigNode)] {
        if case .compound(let members, _) = self { return members }
        return []
    }

    /// The id of the last card under `state` in `root`.
    func lastCardID(in root: [(key: String, node: ConfigNode)]) -> String? {
        root.last { $0.key == "state" }?.node.members.last?.key
    }
}

/// Reads the subset of ALSA's configuration syntax that `alsactl store` writes.
struct ConfigReader {
    enum Token: Equatable {
        /// A word, and whether it was quoted: only a bare key's dots make compounds (`value.0`).
        case word(String, quoted: Bool)
        case open, close, openArray, closeArray
    }

    struct Fault: Error {
        var line: Int
        var message: String
        /// The input ended inside a compound or a string: the report was cut.
        var truncated: Bool
    }

    static let maxDepth = 16
    /// Entries one `{ }` may hold: a real card has a few hundred controls, an enumerated control
    /// a few hundred items. Past it the input is refused, not read in quadratic time.
    static let maxEntries = 20_000

    /// Every top-level key (`state.PCH` and so on), dotted keys expanded into compounds.
    /// On a cut, what was read before it comes back with the fault.
    static func parse(_ lines: [ReportLine]) -> (root: [(key: String, node: ConfigNode)], fault: Fault?) {
        var tokens: [(Token, Int)] = []
        let tokenFault = tokenize(lines, into: &tokens)
        var reader = Parser(tokens: tokens)
        do {
            let root = try reader.compound(depth: 0, closing: nil, line: 1).node.members
            return (root, tokenFault ?? reader.cut)
        } catch let fault as Fault {
            return ([], fault)
        } catch {
            return ([], Fault(line: 1, message: "\(error)", truncated: false))
        }
    }

    static func tokenize(_ lines: [ReportLine], into tokens: inout [(Token, Int)]) -> Fault? {
        for line in lines {
            var scalars = line.text.unicodeScalars[...]
            while let first = scalars.first {
                switch first {
                case " ", "\t", ",", ";", "=": scalars = scalars.dropFirst()
                case "#": scalars = scalars[scalars.endIndex...]
                case "{": tokens.append((.open, line.number)); scalars = scalars.dropFirst()
                case "}": tokens.append((.close, line.number)); scalars = scalars.dropFirst()
                case "[": tokens.append((.openArray, line.number)); scalars = scalars.dropFirst()
                case "]": tokens.append((.closeArray, line.number)); scalars = scalars.dropFirst()
                case "'", "\"":
                    scalars = scalars.dropFirst()
                    var value = String.UnicodeScalarView()
                    var closed = false
                    while let scalar = scalars.first {
                        scalars = scalars.dropFirst()
                        if scalar == first { closed = true; break }
                        if scalar == "\\", let escaped = scalars.first {
                            scalars = scalars.dropFirst()
                            switch escaped {
                            case "n": value.append("\n")
                            case "t": value.append("\t")
                            case "r": value.append("\r")
                            default: value.append(escaped)
                            }
                        } else {
                            value.append(scalar)
                        }
                    }
                    // alsactl never writes a string over two lines: an open quote is a cut line.
                    guard closed else { return Fault(line: line.number, message: "a quoted string is not closed", truncated: line.number == lines.last?.number) }
                    tokens.append((.word(String(value), quoted: true), line.number))
                default:
                    var value = String.UnicodeScalarView()
                    while let scalar = scalars.first, !" \t,;={}[]'\"#".unicodeScalars.contains(scalar) {
                        value.append(scalar)
                        scalars = scalars.dropFirst()
                    }
                    tokens.append((.word(String(value), quoted: false), line.number))
                }
            }
        }
        return nil
    }

    struct Parser {
        var tokens: [(Token, Int)]
        var position = 0
        /// Where the input ended inside a block: what was read up to there is kept.
        var cut: Fault?

        init(tokens: [(Token, Int)]) { self.tokens = tokens }

        var lastLine: Int { tokens.last?.1 ?? 1 }

        mutating func compound(depth: Int, closing: Token?, line: Int) throws -> CompoundBuilder {
            guard depth <= ConfigReader.maxDepth else { throw Fault(line: line, message: "nested deeper than \(ConfigReader.maxDepth) levels", truncated: false) }
            let members = CompoundBuilder(line: line)
            var arrayIndex = 0
            var entries = 0
            while position < tokens.count, cut == nil {
                let (token, tokenLine) = tokens[position]
                if let closing, token == closing {
                    position += 1
                    return members
                }
                let key: String
                var path: [String]
                if closing == .closeArray {
                    key = String(arrayIndex)
                    path = [key]
                    arrayIndex += 1
                } else {
                    guard case .word(let word, let quoted) = token else { throw Fault(line: tokenLine, message: "expected a key, found \(describe(token))", truncated: false) }
                    key = word
                    path = quoted ? [word] : word.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
                    position += 1
                }
                // Each component of a dotted key is a level, as a { } block is: the builder recurses once per level.
                guard depth + path.count <= ConfigReader.maxDepth else {
                    throw Fault(line: tokenLine, message: "key \(key.prefix(40)) nests deeper than \(ConfigReader.maxDepth) levels", truncated: false)
                }
                guard position < tokens.count else {
                    cut = Fault(line: tokenLine, message: "the input ends after key \(key.prefix(40))", truncated: true)
                    break
                }
                let (valueToken, valueLine) = tokens[position]
                position += 1
                let entry: CompoundBuilder.Entry
                switch valueToken {
                case .word(let value, _): entry = .leaf(value, line: valueLine)
                case .open: entry = .compound(try compound(depth: depth + path.count, closing: .close, line: valueLine))
                case .openArray: entry = .compound(try compound(depth: depth + path.count, closing: .closeArray, line: valueLine))
                case .close, .closeArray: throw Fault(line: valueLine, message: "expected a value for \(key.prefix(40)), found \(describe(valueToken))", truncated: false)
                }
                members.insert(path: path[...], entry: entry)
                entries += 1
                guard entries <= ConfigReader.maxEntries else {
                    throw Fault(line: valueLine, message: "more than \(ConfigReader.maxEntries) entries in one { } block", truncated: false)
                }
            }
            if closing != nil, cut == nil { cut = Fault(line: lastLine, message: "the input ends inside a { } block opened on line \(line)", truncated: true) }
            return members
        }

        func describe(_ token: Token) -> String {
            switch token {
            case .word(let word, _): "\"\(word.prefix(40))\""
            case .open: "{"
            case .close: "}"
            case .openArray: "["
            case .closeArray: "]"
            }
        }
    }

}

/// A `{ }` block being read: its entries in the order they came, each found by key at once, so
/// that a block of many entries (a card's controls) is read in linear time.
final class CompoundBuilder {
    enum Entry {
        case leaf(String, line: Int)
        case compound(CompoundBuilder)
    }

    let line: Int
    private var keys: [String] = []
    private var entries: [String: Entry] = [:]

    init(line: Int) { self.line = line }

    /// Adds `entry` at a dotted key (`value.0`, `control.12`): a later leaf replaces an earlier
    /// one, as in ALSA's configuration, and a compound merges into one already there.
    func insert(path: ArraySlice<String>, entry: Entry) {
        guard let first = path.first else { return }
        if path.count == 1 {
            if case .compound(let old)? = entries[first], case .compound(let new) = entry {
                old.merge(new)
                return
            }
            if entries[first] == nil { keys.append(first) }
            entries[first] = entry
            return
        }
        let child: CompoundBuilder
        if case .compound(let existing)? = entries[first] {
            child = existing
        } else {
            child = CompoundBuilder(line: entry.line)
            if entries[first] == nil { keys.append(first) }
            entries[first] = .compound(child)
        }
        child.insert(path: path.dropFirst(), entry: entry)
    }

    func merge(_ other: CompoundBuilder) {
        for key in other.keys {
            if let entry = other.entries[key] { insert(path: [key][...], entry: entry) }
        }
    }

    var node: ConfigNode {
        .compound(keys.compactMap { key in entries[key].map { (key, $0.node) } }, line: line)
    }
}

extension CompoundBuilder.Entry {
    var line: Int {
        switch self {
        case .leaf(_, let line): line
        case .compound(let builder): builder.line
        }
    }

    var node: ConfigNode {
        switch self {
        case .leaf(let value, let line): .leaf(value, line: line)
        case .compound(let builder): builder.node
        }
    }
}

enum AlsactlSection {
    /// Controls per card id, in the order saved, and warnings for a cut section.
    static func parse(_ section: ReportSection) throws(ALSAInfoError) -> (cards: [(id: String, controls: [ALSAInfoControl])], warnings: [ALSAInfoWarning]) {
        let (root, fault) = ConfigReader.parse(section.lines)
        var warnings: [ALSAInfoWarning] = []
        if let fault {
            // A cut last section still gives the controls before the cut; anything else is a malformed report.
            guard fault.truncated, section.isLast || fault.line == section.lines.last?.number else {
                throw ALSAInfoError(section: section.title, line: fault.line, fault.message)
            }
            warnings.append(ALSAInfoWarning(section: section.title, line: fault.line, "the section is cut short (\(fault.message)): controls after the cut, jacks among them, are missing"))
        }
        var cards: [(id: String, controls: [ALSAInfoControl])] = []
        for (key, node) in root {
            guard key == "state" else {
                throw ALSAInfoError(section: section.title, line: node.line, "expected state.<card id> { … }, found \"\(key.prefix(40))\"")
            }
            for (cardID, cardNode) in node.members {
                var controls: [ALSAInfoControl] = []
                for (controlKey, controlNode) in cardNode.members {
                    guard controlKey == "control" else {
                        throw ALSAInfoError(section: section.title, line: controlNode.line, "card \(cardID): expected control.<numid>, found \"\(controlKey.prefix(40))\"")
                    }
                    for (numid, node) in controlNode.members {
                        do {
                            controls.append(try control(numid: numid, node))
                        } catch {
                            // The control the cut went through is dropped; anywhere else a bad control is an error.
                            if fault != nil, cardID == node.lastCardID(in: root), numid == controlNode.members.last?.key { continue }
                            throw ALSAInfoError(section: section.title, line: error.line, "card \(cardID), control.\(numid): \(error.message)")
                        }
                    }
                }
                cards.append((cardID, controls))
            }
        }
        return (cards, warnings)
    }

    struct ControlFault: Error {
        var line: Int
        var message: String
    }

    static func control(numid key: String, _ node: ConfigNode) throws(ControlFault) -> ALSAInfoControl {
        guard let numid = Int(key), numid >= 0 else { throw ControlFault(line: node.line, message: "the numid \"\(key.prefix(20))\" is not a number") }
        func text(_ name: String, in node: ConfigNode) -> String? { node[name]?.leaf }
        func integer(_ name: String, in node: ConfigNode) throws(ControlFault) -> Int? {
            guard let raw = node[name] else { return nil }
            guard let value = raw.leaf.flatMap({ Int($0) }) else { throw ControlFault(line: raw.line, message: "\(name) is not an integer") }
            return value
        }
        guard let iface = text("iface", in: node) else { throw ControlFault(line: node.line, message: "no iface") }
        guard let name = text("name", in: node) else { throw ControlFault(line: node.line, message: "no name") }
        guard let comment = node["comment"] else { throw ControlFault(line: node.line, message: "no comment { access type count }") }
        guard let type = text("type", in: comment) else { throw ControlFault(line: comment.line, message: "no type") }
        let count = try integer("count", in: comment) ?? 1
        guard (0...4096).contains(count) else { throw ControlFault(line: comment.line, message: "count \(count) is out of range") }
        var result = ALSAInfoControl(
            numid: numid, iface: iface, name: name, index: try integer("index", in: node) ?? 0, device: try integer("device", in: node) ?? 0,
            subdevice: try integer("subdevice", in: node) ?? 0, type: type, count: count,
            access: (text("access", in: comment) ?? "").split(separator: " ").map(String.init))
        if let range = text("range", in: comment) {
            // `min - max` or `min - max (step s)`.
            let words = range.split(separator: " ")
            guard words.count >= 3, words[1] == "-", let min = Int(words[0]), let max = Int(words[2]) else {
                throw ControlFault(line: comment.line, message: "range \"\(range.prefix(40))\" is not \"min - max\"")
            }
            result.min = min
            result.max = max
            if words.count == 5, words[3] == "(step", let step = Int(words[4].dropLast()) { result.step = step }
        }
        if let items = comment["item"] {
            result.items = items.members.sorted { (Int($0.key) ?? 0) < (Int($1.key) ?? 0) }.compactMap { $0.node.leaf }
        }
        switch node["value"] {
        case .leaf(let value, _)?: result.values = [value]
        case .compound(let members, _)?: result.values = members.sorted { (Int($0.key) ?? 0) < (Int($1.key) ?? 0) }.compactMap { $0.node.leaf }
        case nil: break
        }
        return result
    }
}
