// A D-Bus message body as a small Swift value tree, so that everything after
// reading is pure Swift that unit tests can feed directly.

/// One D-Bus value.
public enum DBusValue: Sendable, Hashable {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// A file descriptor (not kept: BlueZ properties never carry one).
    case unixFD
    /// A string whose bytes are not valid UTF-8.
    case invalidString
    case array([DBusValue])
    case dictionary([Entry])
    case structure([DBusValue])
    indirect case variant(DBusValue)

    /// One dictionary entry.
    public struct Entry: Sendable, Hashable {
        public var key: DBusValue
        public var value: DBusValue
        public init(key: DBusValue, value: DBusValue) {
            self.key = key
            self.value = value
        }
    }

    /// The value inside any number of variants.
    public var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    /// The D-Bus type code, for messages about wrong types.
    public var typeName: String {
        switch self {
        case .byte: return "y"
        case .bool: return "b"
        case .int16: return "n"
        case .uint16: return "q"
        case .int32: return "i"
        case .uint32: return "u"
        case .int64: return "x"
        case .uint64: return "t"
        case .double: return "d"
        case .string, .invalidString: return "s"
        case .objectPath: return "o"
        case .signature: return "g"
        case .unixFD: return "h"
        case .array(let items): return "a" + (items.first?.typeName ?? "?")
        case .dictionary(let entries):
            guard let first = entries.first else { return "a{??}" }
            return "a{\(first.key.typeName)\(first.value.typeName)}"
        case .structure(let items): return "(" + items.map(\.typeName).joined() + ")"
        case .variant: return "v"
        }
    }

    /// A string or object path's text.
    package var text: String? {
        switch self {
        case .string(let s), .objectPath(let s): return s
        default: return nil
        }
    }

    /// An `a{s…}` or `a{o…}` dictionary as Swift pairs; nil for anything else.
    package var stringKeyed: [(key: String, value: DBusValue)]? {
        guard case .dictionary(let entries) = self else {
            // An empty array reads as .array([]) when its signature is not known to be a dict.
            if case .array(let items) = self, items.isEmpty { return [] }
            return nil
        }
        var result: [(key: String, value: DBusValue)] = []
        result.reserveCapacity(entries.count)
        for entry in entries {
            guard let key = entry.key.text else { return nil }
            result.append((key, entry.value))
        }
        return result
    }
}
