// sd-bus wrapped once: a bus connection and a message, each owning its C handle
// and freeing it in deinit. Variadic sd-bus calls do not import into Swift, so
// messages are built with append_basic and read with peek_type/read_basic.

import AudioRouteSystem
import CSystemd

/// An sd-bus call that failed: the errno it returned (negated), or the error a peer replied with.
public struct BusError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was being done ("open the system bus", "call GetManagedObjects").
    public var operation: String
    /// Why, as an errno.
    public var code: Errno.Code
    /// The D-Bus error name and message of an error reply, if any.
    public var remote: String?

    public init(operation: String, code: Errno.Code, remote: String? = nil) {
        self.operation = operation
        self.code = code
        self.remote = remote
    }

    /// sd-bus's way: `errno` is its negative return value, negated.
    public init(operation: String, errno: Int32, remote: String? = nil) {
        self.init(operation: operation, code: Errno.Code(errno), remote: remote)
    }

    /// A system call's failure on the way (an eventfd, a thread).
    public init(_ error: Errno) {
        self.init(operation: error.operation, code: error.code)
    }

    public var description: String {
        "\(operation): \(remote ?? code.description)"
    }
}

/// Which bus to connect to.
public enum BusChoice: Sendable, Hashable {
    /// The system bus (sd_bus_open_system honours DBUS_SYSTEM_BUS_ADDRESS).
    case system
    /// An explicit address ("unix:path=/run/…"), connected to as a bus client.
    /// Lets tests use a private bus without changing the environment.
    case address(String)
}

/// A D-Bus message. Owns one reference to its sd_bus_message.
package struct BusMessage: ~Copyable {
    package let handle: OpaquePointer

    /// Takes over the reference the caller holds.
    package init(owning handle: OpaquePointer) { self.handle = handle }

    deinit { sd_bus_message_unref(handle) }

    package enum Kind: UInt8 {
        case methodCall = 1, methodReturn = 2, methodError = 3, signal = 4
    }

    package var kind: Kind? {
        var raw: UInt8 = 0
        guard sd_bus_message_get_type(handle, &raw) >= 0 else { return nil }
        return Kind(rawValue: raw)
    }

    package var sender: String? { sd_bus_message_get_sender(handle).map { String(cString: $0) } }
    package var path: String? { sd_bus_message_get_path(handle).map { String(cString: $0) } }
    /// The path, or nil when it is longer than `maxBytes` (measured before it is copied); "" for none.
    package func boundedPath(maxBytes: Int) -> String? {
        guard let raw = sd_bus_message_get_path(handle) else { return "" }
        return strnlen(raw, maxBytes + 1) <= maxBytes ? String(cString: raw) : nil
    }
    package var interface: String? { sd_bus_message_get_interface(handle).map { String(cString: $0) } }
    package var member: String? { sd_bus_message_get_member(handle).map { String(cString: $0) } }
    /// The signature of the whole body ("" for none).
    package var signature: String { sd_bus_message_get_signature(handle, 1).map { String(cString: $0) } ?? "" }

    /// Seals a message built here and rewinds it, so it can be read back (tests, loopback).
    package func sealForReading() throws(BusError) {
        var r = sd_bus_message_seal(handle, 1, 0)
        if r >= 0 { r = sd_bus_message_rewind(handle, 1) }
        guard r >= 0 else { throw BusError(operation: "seal message", errno: -r) }
    }

    /// Appends string-like arguments ('s' or 'o').
    package func append(_ type: Character, _ value: String) throws(BusError) {
        let code = CChar(type.asciiValue!)
        let r = value.withCString { sd_bus_message_append_basic(handle, code, $0) }
        guard r >= 0 else { throw BusError(operation: "append argument", errno: -r) }
    }

    /// Appends a uint32 argument ('u').
    package func append(uint32 value: UInt32) throws(BusError) {
        var value = value
        let r = sd_bus_message_append_basic(handle, CChar(UInt8(ascii: "u")), &value)
        guard r >= 0 else { throw BusError(operation: "append argument", errno: -r) }
    }

    /// Reads every remaining argument of the message into values, within `limits`: a value
    /// beyond them throws before it is built, so what a sender can make us allocate is bounded.
    package func readAll(limits: DecodeLimits = .unbounded) throws(BusError) -> [DBusValue] {
        var values: [DBusValue] = []
        var budget = ReadBudget(limits: limits)
        while let value = try readNext(depth: 0, budget: &budget) { values.append(value) }
        return values
    }

    /// What is left of a read's limits.
    private struct ReadBudget {
        let limits: DecodeLimits
        var values: Int
        var bytes: Int

        init(limits: DecodeLimits) {
            self.limits = limits
            values = limits.maxValues
            bytes = limits.maxBytes
        }

        /// Takes one value of `size` bytes, or throws naming the limit it would pass.
        mutating func take(bytes size: Int) throws(BusError) {
            guard values > 0 else {
                throw BusError(operation: "read message", code: .argumentListTooLong, remote: "more than \(limits.maxValues) values; at most \(limits.maxValues) are accepted")
            }
            guard size <= limits.maxStringBytes else {
                throw BusError(
                    operation: "read message", code: .argumentListTooLong, remote: "a string of more than \(limits.maxStringBytes) bytes; at most \(limits.maxStringBytes) are accepted")
            }
            guard size <= bytes else {
                throw BusError(operation: "read message", code: .argumentListTooLong, remote: "arguments of more than \(limits.maxBytes) bytes; at most \(limits.maxBytes) are accepted")
            }
            values -= 1
            bytes -= size
        }
    }

    /// Reads the next value at the current level, or nil at the end of a container, within `budget`.
    private func readNext(depth: Int, budget: inout ReadBudget) throws(BusError) -> DBusValue? {
        // D-Bus itself limits nesting to 64; this only guards our own recursion.
        guard depth < 64 else { throw BusError(operation: "read message: nesting too deep", code: .badMessage) }
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        let r = sd_bus_message_peek_type(handle, &type, &contents)
        guard r >= 0 else { throw BusError(operation: "read message", errno: -r) }
        if r == 0 { return nil }
        let code = UInt8(bitPattern: type)
        switch code {
        case UInt8(ascii: "a"), UInt8(ascii: "v"), UInt8(ascii: "r"), UInt8(ascii: "e"):
            let signature = contents.map { String(cString: $0) } ?? ""
            let e = sd_bus_message_enter_container(handle, type, contents)
            guard e >= 0 else { throw BusError(operation: "read message", errno: -e) }
            try budget.take(bytes: 8)
            var items: [DBusValue] = []
            while let item = try readNext(depth: depth + 1, budget: &budget) { items.append(item) }
            let x = sd_bus_message_exit_container(handle)
            guard x >= 0 else { throw BusError(operation: "read message", errno: -x) }
            switch code {
            case UInt8(ascii: "v"):
                guard items.count == 1 else { throw BusError(operation: "read message: empty variant", code: .badMessage) }
                return .variant(items[0])
            case UInt8(ascii: "a"):
                if signature.hasPrefix("{") {
                    var entries: [DBusValue.Entry] = []
                    entries.reserveCapacity(items.count)
                    for item in items {
                        guard case .structure(let pair) = item, pair.count == 2 else {
                            throw BusError(operation: "read message: bad dict entry", code: .badMessage)
                        }
                        entries.append(DBusValue.Entry(key: pair[0], value: pair[1]))
                    }
                    return .dictionary(entries)
                }
                return .array(items)
            default:
                // Structs and dict entries both read as a structure; the array level turns entries into a dictionary.
                return .structure(items)
            }
        default:
            return try readBasic(type, budget: &budget)
        }
    }

    private func readBasic(_ type: CChar, budget: inout ReadBudget) throws(BusError) -> DBusValue {
        func read<T: BitwiseCopyable>(_ initial: T) throws(BusError) -> T {
            var value = initial
            let r = withUnsafeMutableBytes(of: &value) { sd_bus_message_read_basic(handle, type, $0.baseAddress) }
            guard r >= 0 else { throw BusError(operation: "read message", errno: -r) }
            return value
        }
        if type != CChar(UInt8(ascii: "s")), type != CChar(UInt8(ascii: "o")), type != CChar(UInt8(ascii: "g")) { try budget.take(bytes: 8) }
        switch UInt8(bitPattern: type) {
        case UInt8(ascii: "y"): return .byte(try read(UInt8(0)))
        case UInt8(ascii: "b"): return .bool(try read(Int32(0)) != 0)
        case UInt8(ascii: "n"): return .int16(try read(Int16(0)))
        case UInt8(ascii: "q"): return .uint16(try read(UInt16(0)))
        case UInt8(ascii: "i"): return .int32(try read(Int32(0)))
        case UInt8(ascii: "u"): return .uint32(try read(UInt32(0)))
        case UInt8(ascii: "x"): return .int64(try read(Int64(0)))
        case UInt8(ascii: "t"): return .uint64(try read(UInt64(0)))
        case UInt8(ascii: "d"): return .double(try read(Double(0)))
        case UInt8(ascii: "h"): _ = try read(Int32(0)); return .unixFD
        case UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"):
            let pointer = try read(UnsafePointer<CChar>?.none)
            guard let pointer else { throw BusError(operation: "read message: null string", code: .badMessage) }
            // Measured in place, before a Swift copy exists.
            try budget.take(bytes: strnlen(pointer, min(budget.limits.maxStringBytes, budget.bytes) + 1))
            // sd-bus validates UTF-8, but a string that is not valid never becomes a Swift String by repair.
            guard let text = String(validatingCString: pointer) else { return .invalidString }
            switch UInt8(bitPattern: type) {
            case UInt8(ascii: "s"): return .string(text)
            case UInt8(ascii: "o"): return .objectPath(text)
            default: return .signature(text)
            }
        default:
            throw BusError(operation: "read message: unknown type '\(Character(UnicodeScalar(UInt8(bitPattern: type))))'", code: .badMessage)
        }
    }
}

/// Bounds on what reading one message may build, checked value by value while reading, so
/// that nothing beyond them is ever built.
public struct DecodeLimits: Sendable, Hashable {
    /// Values in the whole body, containers and their items included.
    public var maxValues: Int
    /// The longest string, object path or signature, in bytes.
    public var maxStringBytes: Int
    /// The whole body: strings count their bytes, every other value 8.
    public var maxBytes: Int

    public init(maxValues: Int, maxStringBytes: Int, maxBytes: Int) {
        self.maxValues = maxValues
        self.maxStringBytes = maxStringBytes
        self.maxBytes = maxBytes
    }

    /// For peers trusted to be sane (the bus driver, BlueZ, audiorouted): the bus's own
    /// message size limit only.
    public static let unbounded = DecodeLimits(maxValues: .max, maxStringBytes: .max - 1, maxBytes: .max)
}

/// A connection to a bus. Owns its sd_bus; used from one thread only.
package struct BusConnection: ~Copyable {
    package let handle: OpaquePointer

    package init(_ choice: BusChoice) throws(BusError) {
        var bus: OpaquePointer?
        switch choice {
        case .system:
            let r = sd_bus_open_system(&bus)
            guard r >= 0, let bus else { throw BusError(operation: "open the system bus", errno: -r) }
            handle = bus
        case .address(let address):
            var r = sd_bus_new(&bus)
            guard r >= 0, let bus else { throw BusError(operation: "create a bus connection", errno: -r) }
            r = address.withCString { sd_bus_set_address(bus, $0) }
            if r >= 0 { r = sd_bus_set_bus_client(bus, 1) }
            if r >= 0 { r = sd_bus_start(bus) }
            guard r >= 0 else {
                sd_bus_flush_close_unref(bus)
                throw BusError(operation: "connect to \(address)", errno: -r)
            }
            handle = bus
        }
    }

    /// Takes over a connection opened elsewhere (sd_bus_open_user).
    package init(adopting handle: OpaquePointer) { self.handle = handle }

    deinit { sd_bus_flush_close_unref(handle) }

    package var fd: Int32 { sd_bus_get_fd(handle) }
    package var events: Int32 { sd_bus_get_events(handle) }

    /// Milliseconds until sd-bus needs processing for a timeout, or -1 for none.
    package var pollTimeout: Int32 { Self.pollTimeout(handle) }

    /// `pollTimeout` of a connection known by its handle (the server reads it under its lock).
    package static func pollTimeout(_ handle: OpaquePointer) -> Int32 {
        var deadline: UInt64 = 0
        guard sd_bus_get_timeout(handle, &deadline) >= 0, deadline != UInt64.max else { return -1 }
        let nowUsec = MonotonicClock.nanoseconds() / 1000
        guard deadline > nowUsec else { return 0 }
        return Int32(clamping: (deadline - nowUsec + 999) / 1000)
    }

    /// Processes one pending item; returns a message nobody handled (our signals), if any,
    /// and sets `more` to whether more work may be pending.
    package func process(more: inout Bool) throws(BusError) -> BusMessage? {
        var raw: OpaquePointer?
        let r = sd_bus_process(handle, &raw)
        guard r >= 0 else { throw BusError(operation: "process the bus", errno: -r) }
        more = r > 0
        guard let raw else { return nil }
        return BusMessage(owning: raw)
    }

    package func newMethodCall(destination: String, path: String, interface: String, member: String) throws(BusError) -> BusMessage {
        var raw: OpaquePointer?
        let r = sd_bus_message_new_method_call(handle, &raw, destination, path, interface, member)
        guard r >= 0, let raw else { throw BusError(operation: "build \(member) call", errno: -r) }
        return BusMessage(owning: raw)
    }

    /// Calls a method and waits for the reply (other messages arriving meanwhile stay queued).
    package func call(_ message: borrowing BusMessage, timeoutUsec: UInt64 = 5_000_000) throws(BusError) -> BusMessage {
        var error = sd_bus_error()  // SD_BUS_ERROR_NULL is a macro: a zeroed struct is the same thing.
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        let r = sd_bus_call(handle, message.handle, timeoutUsec, &error, &reply)
        guard r >= 0, let reply else {
            let remote: String? = error.name.map { name in
                String(cString: name) + (error.message.map { ": " + String(cString: $0) } ?? "")
            }
            throw BusError(operation: "call \(message.member ?? "method")", errno: r < 0 ? -r : Errno.Code.ioError.rawValue, remote: remote)
        }
        return BusMessage(owning: reply)
    }

    /// Asks the bus daemon to route matching messages to us. No local match slot is
    /// installed, so matched signals come back from `process()` as unhandled messages.
    package func addMatch(_ rule: String) throws(BusError) {
        let message = try newMethodCall(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "AddMatch")
        try message.append("s", rule)
        _ = try call(message)
    }

    /// The unique name owning `name`, or nil when nobody owns it.
    package func nameOwner(_ name: String) throws(BusError) -> String? {
        let message = try newMethodCall(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "GetNameOwner")
        try message.append("s", name)
        do {
            let reply = try call(message)
            guard case .string(let owner)? = try reply.readAll().first else { return nil }
            return owner
        } catch {
            if error.remote?.hasPrefix("org.freedesktop.DBus.Error.NameHasNoOwner") == true { return nil }
            throw error
        }
    }
}
