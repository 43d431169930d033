// Writing DBusValue trees into sd-bus messages. The signature drives the
// writing, not the value: an empty array still needs its element type, and a
// value that does not fit the signature is refused before anything is sent.

import AudioRouteSystem
import CSystemd

/// One complete D-Bus type, parsed from a signature.
public indirect enum DBusType: Sendable, Hashable, CustomStringConvertible {
    case basic(Character)
    case array(DBusType)
    case dictionary(key: DBusType, value: DBusType)
    case structure([DBusType])
    case variant

    /// Parses a signature made of complete types ("sa{sv}(ss)") into its types.
    public static func parse(_ signature: String) throws(BusError) -> [DBusType] {
        var scalars = Array(signature.unicodeScalars)[...]
        var types: [DBusType] = []
        while !scalars.isEmpty { types.append(try parseOne(&scalars, signature: signature, depth: 0)) }
        return types
    }

    private static func parseOne(_ scalars: inout ArraySlice<Unicode.Scalar>, signature: String, depth: Int) throws(BusError) -> DBusType {
        let bad = BusError(operation: "invalid signature \"\(signature)\"", code: .invalidArgument)
        guard depth < 32, let first = scalars.popFirst() else { throw bad }
        switch first {
        case "y", "b", "n", "q", "i", "u", "x", "t", "d", "s", "o", "g", "h": return .basic(Character(first))
        case "v": return .variant
        case "a":
            if scalars.first == "{" {
                scalars.removeFirst()
                let key = try parseOne(&scalars, signature: signature, depth: depth + 1)
                guard case .basic = key else { throw bad }
                let value = try parseOne(&scalars, signature: signature, depth: depth + 1)
                guard scalars.popFirst() == "}" else { throw bad }
                return .dictionary(key: key, value: value)
            }
            return .array(try parseOne(&scalars, signature: signature, depth: depth + 1))
        case "(":
            var members: [DBusType] = []
            while scalars.first != ")" {
                guard !scalars.isEmpty else { throw bad }
                members.append(try parseOne(&scalars, signature: signature, depth: depth + 1))
            }
            scalars.removeFirst()
            guard !members.isEmpty else { throw bad }
            return .structure(members)
        default: throw bad
        }
    }

    public var description: String {
        switch self {
        case .basic(let code): return String(code)
        case .array(let element): return "a" + element.description
        case .dictionary(let key, let value): return "a{\(key)\(value)}"
        case .structure(let members): return "(" + members.map(\.description).joined() + ")"
        case .variant: return "v"
        }
    }
}

extension DBusValue {
    /// The signature a variant holding this value announces. Empty arrays and
    /// dictionaries have no element to look at and announce `as` / `a{sv}`.
    package var variantSignature: String {
        switch self {
        case .array(let items): return "a" + (items.first?.variantSignature ?? "s")
        case .dictionary(let entries):
            guard let first = entries.first else { return "a{sv}" }
            return "a{\(first.key.variantSignature)\(first.value.variantSignature)}"
        case .structure(let items): return "(" + items.map(\.variantSignature).joined() + ")"
        case .invalidString: return "s"
        default: return typeName
        }
    }
}

extension BusMessage {
    /// Appends `values` as the message's arguments of `signature`.
    package func append(_ values: [DBusValue], signature: String) throws(BusError) {
        let types = try DBusType.parse(signature)
        guard types.count == values.count else {
            throw BusError(operation: "append: \(values.count) values for signature \"\(signature)\"", code: .invalidArgument)
        }
        for (type, value) in zip(types, values) { try append(value, as: type) }
    }

    private func append(_ value: DBusValue, as type: DBusType) throws(BusError) {
        let mismatch = BusError(operation: "append: \(value.typeName) value for type \(type)", code: .invalidArgument)
        switch (type, value) {
        case (.basic(let code), _): try appendBasic(code, value, mismatch: mismatch)
        case (.variant, .variant(let inner)):
            let signature = inner.variantSignature
            try container(CChar(UInt8(ascii: "v")), signature) { () throws(BusError) in
                try append(inner, as: try DBusType.parse(signature)[0])
            }
        case (.array(let element), .array(let items)):
            try container(CChar(UInt8(ascii: "a")), element.description) { () throws(BusError) in
                for item in items { try append(item, as: element) }
            }
        case (.dictionary(let keyType, let valueType), .dictionary(let entries)):
            let entrySignature = "\(keyType)\(valueType)"
            try container(CChar(UInt8(ascii: "a")), "{\(entrySignature)}") { () throws(BusError) in
                for entry in entries {
                    try container(CChar(UInt8(ascii: "e")), entrySignature) { () throws(BusError) in
                        try append(entry.key, as: keyType)
                        try append(entry.value, as: valueType)
                    }
                }
            }
        case (.dictionary, .array(let items)) where items.isEmpty:
            try append(.dictionary([]), as: type)
        case (.structure(let members), .structure(let items)):
            guard members.count == items.count else { throw mismatch }
            try container(CChar(UInt8(ascii: "r")), members.map(\.description).joined()) { () throws(BusError) in
                for (member, item) in zip(members, items) { try append(item, as: member) }
            }
        default: throw mismatch
        }
    }

    private func container(_ kind: CChar, _ contents: String, _ body: () throws(BusError) -> Void) throws(BusError) {
        var r = contents.withCString { sd_bus_message_open_container(handle, kind, $0) }
        guard r >= 0 else { throw BusError(operation: "append: open container \(contents)", errno: -r) }
        try body()
        r = sd_bus_message_close_container(handle)
        guard r >= 0 else { throw BusError(operation: "append: close container \(contents)", errno: -r) }
    }

    private func appendBasic(_ code: Character, _ value: DBusValue, mismatch: BusError) throws(BusError) {
        let type = CChar(code.asciiValue!)
        func put<T: BitwiseCopyable>(_ raw: T) -> Int32 {
            withUnsafeBytes(of: raw) { sd_bus_message_append_basic(handle, type, $0.baseAddress) }
        }
        let r: Int32
        switch (code, value) {
        case ("y", .byte(let v)): r = put(v)
        case ("b", .bool(let v)): r = put(Int32(v ? 1 : 0))
        case ("n", .int16(let v)): r = put(v)
        case ("q", .uint16(let v)): r = put(v)
        case ("i", .int32(let v)): r = put(v)
        case ("u", .uint32(let v)): r = put(v)
        case ("x", .int64(let v)): r = put(v)
        case ("t", .uint64(let v)): r = put(v)
        case ("d", .double(let v)): r = put(v)
        case ("s", .string(let text)), ("o", .objectPath(let text)), ("g", .signature(let text)):
            r = text.withCString { sd_bus_message_append_basic(handle, type, $0) }
        default: throw mismatch
        }
        guard r >= 0 else { throw BusError(operation: "append \(value.typeName)", errno: -r) }
    }
}
