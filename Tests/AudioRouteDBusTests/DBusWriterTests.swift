import Testing

@testable import AudioRouteWatchers
@testable import AudioRouteDBus
import AudioRouteSystem

/// The writer through real sd-bus messages on a private bus: what is appended reads back the same.
@Suite struct DBusWriterTests {
    func roundTrip(_ values: [DBusValue], _ signature: String) throws -> (signature: String, values: [DBusValue]) {
        let daemon = try PrivateBus()
        defer { daemon.close() }
        let bus = try BusConnection(.address(daemon.address))
        let message = try bus.newMethodCall(destination: "org.example", path: "/", interface: "org.example.I", member: "M")
        try message.append(values, signature: signature)
        try message.sealForReading()
        return (message.signature, try message.readAll())
    }

    @Test func everyShapeTheAPIUsesReadsBack() throws {
        let port = DBusValue.structure([.string("usb/out"), .string("usbAudio"), .int32(-3), .uint64(7), .bool(true)])
        let values: [DBusValue] = [
            .string("playAndRecord"), .array([port, port]), .array([]),
            .dictionary([.init(key: .string("Route"), value: .variant(.array([.string("a")]))), .init(key: .string("n"), value: .variant(.uint32(2)))]),
            .objectPath("/org/audioroute/AudioRoute1/session/1"), .double(0.5), .byte(9), .int64(-1),
        ]
        let back = try roundTrip(values, "sa(ssitb)asa{sv}odyx")
        #expect(back.signature == "sa(ssitb)asa{sv}odyx")
        #expect(back.values == values)
    }

    @Test func anEmptyDictionaryMayBeGivenAsAnEmptyArray() throws {
        let back = try roundTrip([.array([])], "a{sv}")
        #expect(back.signature == "a{sv}")
        #expect(back.values == [.dictionary([])])
    }

    @Test(arguments: [
        ([DBusValue.int32(1)], "s", "append: i value for type s"),
        ([DBusValue.string("a"), .string("b")], "s", "append: 2 values for signature \"s\""),
        ([DBusValue.structure([.string("a")])], "(ss)", "append: (s) value for type (ss)"),
        ([DBusValue.string("a")], "a{vs}", "invalid signature \"a{vs}\""),
        ([DBusValue.string("a")], "(s", "invalid signature \"(s\""),
    ])
    func valuesThatDoNotFitAreRefusedByName(_ values: [DBusValue], _ signature: String, _ operation: String) throws {
        let error = #expect(throws: BusError.self) { try roundTrip(values, signature) }
        #expect(error?.operation == operation)
    }
}
