// A small JSON reader and writer. The core has no Foundation, and the simulator
// needs what JSONDecoder does not give: object keys in document order (for
// stable output) and faults named by their JSON path.

/// A JSON value. Objects keep their members in document order.
public indirect enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([Member])

    public struct Member: Sendable, Equatable {
        public var key: String
        public var value: JSON
        public init(_ key: String, _ value: JSON) {
            self.key = key
            self.value = value
        }
    }

    /// The value of `key` in an object (the first, if repeated), or nil.
    public subscript(key: String) -> JSON? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// The JSON type name, for error messages.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .integer, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// A syntax error, with the line and column where it was found. A key repeated
/// in one object is refused too (the parser will not choose which value counts),
/// and then `path` names the object.
public struct JSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    public var line: Int
    public var column: Int
    public var message: String
    /// For a duplicate key, the object holding it (`message` names the key); nil
    /// for other faults, whose position says all.
    public var path: [JSON.PathComponent]?

    public init(line: Int, column: Int, message: String, path: [JSON.PathComponent]? = nil) {
        self.line = line
        self.column = column
        self.message = message
        self.path = path
    }

    public var description: String {
        guard let path else { return "line \(line), column \(column): \(message)" }
        return "line \(line), column \(column): \(JSON.pathText(path)): \(message)"
    }
}

extension JSON {
    /// One step from a value into its members or elements.
    public enum PathComponent: Sendable, Equatable {
        case key(String)
        case index(Int)
    }

    /// A path as JSONPath text: `$`, `$.steps[1].add`, `$.priorities["a b"]`
    /// (keys that are not plain names in brackets, as JSON strings).
    public static func pathText(_ path: [PathComponent]) -> String {
        var text = "$"
        for component in path {
            switch component {
            case .index(let index): text += "[\(index)]"
            case .key(let key):
                func isLetter(_ c: Unicode.Scalar) -> Bool { c == "_" || ("a"..."z").contains(c) || ("A"..."Z").contains(c) }
                let scalars = key.unicodeScalars
                if let first = scalars.first, isLetter(first), scalars.allSatisfy({ isLetter($0) || ("0"..."9").contains($0) }) {
                    text += "." + key
                } else {
                    text += "[" + quoted(key) + "]"
                }
            }
        }
        return text
    }
}

extension JSON {
    /// Parses a whole document. Nesting deeper than `maxDepth` is refused rather
    /// than allowed to exhaust the stack, and a key repeated in one object is
    /// refused with the object's path (RFC 8259 leaves the meaning to the reader).
    public static func parse(_ bytes: [UInt8], maxDepth: Int = 256) throws(JSONSyntaxError) -> JSON {
        var parser = JSONParser(bytes: bytes, maxDepth: maxDepth)
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        if parser.index < bytes.count { throw parser.fault("unexpected text after the document") }
        return value
    }

    public static func parse(_ text: String) throws(JSONSyntaxError) -> JSON { try parse(Array(text.utf8)) }
}

private struct JSONParser {
    let bytes: [UInt8]
    let maxDepth: Int
    var index = 0

    init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    /// A fault at `position` (by default where the parser is).
    func fault(_ message: String, at position: Int? = nil, path: [JSON.PathComponent]? = nil) -> JSONSyntaxError {
        var line = 1
        var column = 1
        for byte in bytes[..<min(position ?? index, bytes.count)] {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return JSONSyntaxError(line: line, column: column, message: message, path: path)
    }

    mutating func skipWhitespace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
            index += 1
        }
    }

    mutating func value(depth: Int) throws(JSONSyntaxError) -> JSON {
        guard index < bytes.count else { throw fault("unexpected end of document") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            guard depth < maxDepth else { throw fault("nesting deeper than \(maxDepth)") }
            return try object(depth: depth + 1)
        case UInt8(ascii: "["):
            guard depth < maxDepth else { throw fault("nesting deeper than \(maxDepth)") }
            return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw fault("unexpected character")
        }
    }

    mutating func literal(_ word: StaticString) throws(JSONSyntaxError) {
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard index + expected.count <= bytes.count, bytes[index..<index + expected.count].elementsEqual(expected) else {
            throw fault("invalid literal")
        }
        index += expected.count
    }

    mutating func object(depth: Int) throws(JSONSyntaxError) -> JSON {
        index += 1
        var members: [JSON.Member] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        // Keys seen, once an object is too big for a linear search to be cheap.
        var keys: Set<String> = []
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fault("expected a string key") }
            let keyStart = index
            let key = try string()
            let repeated: Bool
            if members.count < 16 {
                repeated = members.contains { $0.key == key }
            } else {
                if keys.isEmpty { keys = Set(members.map(\.key)) }
                repeated = !keys.insert(key).inserted
            }
            // The path is filled in by the enclosing values as the error goes up.
            if repeated { throw fault("duplicate key \(JSON.quoted(key))", at: keyStart, path: []) }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fault("expected ':'") }
            index += 1
            skipWhitespace()
            let value: JSON
            do throws(JSONSyntaxError) {
                value = try self.value(depth: depth)
            } catch {
                throw error.inside(.key(key))
            }
            members.append(JSON.Member(key, value))
            skipWhitespace()
            guard index < bytes.count else { throw fault("unterminated object") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard bytes[index] == UInt8(ascii: "}") else { throw fault("expected ',' or '}'") }
            index += 1
            return .object(members)
        }
    }

    mutating func array(depth: Int) throws(JSONSyntaxError) -> JSON {
        index += 1
        var elements: [JSON] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            do throws(JSONSyntaxError) {
                elements.append(try value(depth: depth))
            } catch {
                throw error.inside(.index(elements.count))
            }
            skipWhitespace()
            guard index < bytes.count else { throw fault("unterminated array") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard bytes[index] == UInt8(ascii: "]") else { throw fault("expected ',' or ']'") }
            index += 1
            return .array(elements)
        }
    }

    mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw fault("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw fault("invalid \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    mutating func string() throws(JSONSyntaxError) -> String {
        index += 1
        var scalars = String.UnicodeScalarView()
        var runStart = index
        var hasEscapes = false
        while true {
            guard index < bytes.count else { throw fault("unterminated string") }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                break
            } else if byte < 0x20 {
                throw fault("control character in string")
            } else if byte == UInt8(ascii: "\\") {
                if !hasEscapes {
                    try appendUTF8(bytes[runStart..<index], to: &scalars)
                    hasEscapes = true
                } else {
                    try appendUTF8(bytes[runStart..<index], to: &scalars)
                }
                index += 1
                guard index < bytes.count else { throw fault("unterminated string") }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800..<0xDC00).contains(code) {
                        guard index + 2 <= bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                            throw fault("unpaired surrogate in \\u escape")
                        }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw fault("unpaired surrogate in \\u escape") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw fault("unpaired surrogate in \\u escape") }
                    scalars.append(scalar)
                default: throw fault("invalid escape")
                }
                runStart = index
                continue
            }
            index += 1
        }
        let run = bytes[runStart..<index]
        index += 1
        if !hasEscapes {
            guard let text = String(validating: run, as: UTF8.self) else { throw fault("invalid UTF-8 in string") }
            return text
        }
        try appendUTF8(run, to: &scalars)
        return String(scalars)
    }

    func appendUTF8(_ run: ArraySlice<UInt8>, to scalars: inout String.UnicodeScalarView) throws(JSONSyntaxError) {
        guard !run.isEmpty else { return }
        guard let text = String(validating: run, as: UTF8.self) else { throw fault("invalid UTF-8 in string") }
        scalars.append(contentsOf: text.unicodeScalars)
    }

    mutating func number() throws(JSONSyntaxError) -> JSON {
        let start = index
        var isInteger = true
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        func digits(_ parser: inout JSONParser) -> Int {
            let from = parser.index
            while parser.index < parser.bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(parser.bytes[parser.index]) {
                parser.index += 1
            }
            return parser.index - from
        }
        let intStart = index
        let intDigits = digits(&self)
        guard intDigits > 0 else { throw fault("invalid number") }
        if intDigits > 1 && bytes[intStart] == UInt8(ascii: "0") { throw fault("leading zero in number") }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard digits(&self) > 0 else { throw fault("invalid number") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits(&self) > 0 else { throw fault("invalid number") }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger, let value = Int64(text) { return .integer(value) }
        guard let value = Double(text), value.isFinite else { throw fault("number out of range") }
        return .double(value)
    }
}

extension JSONSyntaxError {
    /// The error seen from the value holding the one it came from.
    fileprivate func inside(_ component: JSON.PathComponent) -> JSONSyntaxError {
        guard let path else { return self }
        var error = self
        error.path = [component] + path
        return error
    }
}

extension JSON {
    /// `text` as a JSON string literal, for messages.
    static func quoted(_ text: String) -> String {
        var out: [UInt8] = []
        writeString(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Compact JSON text with `", "` and `": "` separators, members in order.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// The JSON text as UTF-8.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        write(to: &out)
        return out
    }

    /// Appends the JSON text, as UTF-8, to `out`.
    public func write(to out: inout [UInt8]) {
        switch self {
        case .null: out += "null".utf8
        case .bool(let value): out += (value ? "true" : "false").utf8
        case .integer(let value): out += String(value).utf8
        case .double(let value): out += (value.isFinite ? String(value) : "null").utf8
        case .string(let value): JSON.writeString(value, to: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { out += ", ".utf8 }
                element.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (offset, member) in members.enumerated() {
                if offset > 0 { out += ", ".utf8 }
                JSON.writeString(member.key, to: &out)
                out += ": ".utf8
                member.value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    static func writeString(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            // Copy runs that need no escape in one go.
            var runStart = 0
            var index = 0
            while index < utf8.count {
                let byte = utf8[index]
                // A C1 control or a bidirectional control (U+0080-009F, U+061C, U+200E/F,
                // U+202A-202E, U+2066-2069) is written as \u too: valid JSON either way, and a
                // name from another process cannot reorder or hide what a terminal shows.
                let width = byte >= 0xC2 ? TerminalText.unsafeSequenceLength(utf8, at: index) : 0
                guard width > 0 || byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x7F else {
                    index += 1
                    continue
                }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                switch byte {
                case UInt8(ascii: "\""): out += "\\\"".utf8
                case UInt8(ascii: "\\"): out += "\\\\".utf8
                case UInt8(ascii: "\n"): out += "\\n".utf8
                case UInt8(ascii: "\r"): out += "\\r".utf8
                case UInt8(ascii: "\t"): out += "\\t".utf8
                default:
                    let scalar = width > 0 ? TerminalText.scalar(utf8, at: index, length: width) : UInt32(byte)
                    let hex = String(scalar, radix: 16)
                    out += ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8
                }
                index += max(width, 1)
                runStart = index
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSON: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral, ExpressibleByNilLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(nilLiteral: ()) { self = .null }
}
