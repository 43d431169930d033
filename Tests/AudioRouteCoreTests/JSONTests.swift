// The core's JSON reader and writer: valid documents, every syntax fault with
// its position, escapes, surrogate pairs, nesting limits and invalid UTF-8.
@testable import AudioRouteCore
import Testing

struct JSONFault: Sendable, CustomTestStringConvertible {
    var bytes: [UInt8]
    var message: String
    var line: Int? = nil
    var column: Int? = nil
    var testDescription: String { "\(message): \(String(decoding: bytes, as: UTF8.self).debugDescription)" }

    init(_ text: String, _ message: String, line: Int? = nil, column: Int? = nil) {
        self.init(bytes: Array(text.utf8), message, line: line, column: column)
    }

    init(bytes: [UInt8], _ message: String, line: Int? = nil, column: Int? = nil) {
        self.bytes = bytes
        self.message = message
        self.line = line
        self.column = column
    }
}

/// Parses `bytes`, expecting a syntax error.
private func syntaxError(_ bytes: [UInt8], maxDepth: Int = 256) -> JSONSyntaxError? {
    do {
        _ = try JSON.parse(bytes, maxDepth: maxDepth)
        return nil
    } catch {
        return error
    }
}

private func nested(_ depth: Int, open: String = "[", inner: String = "", close: String = "]") -> [UInt8] {
    Array((String(repeating: open, count: depth) + inner + String(repeating: close, count: depth)).utf8)
}

@Suite("JSON reader and writer")
struct JSONTests {
    @Test("valid documents", arguments: [
        ("null", JSON.null), ("true", .bool(true)), ("false", .bool(false)),
        ("0", .integer(0)), ("-0", .integer(0)), ("42", .integer(42)), ("-17", .integer(-17)),
        ("9223372036854775807", .integer(.max)), ("-9223372036854775808", .integer(.min)),
        ("9223372036854775808", .double(9223372036854775808)),
        ("1.5", .double(1.5)), ("-2.5e3", .double(-2500)), ("1E-2", .double(0.01)), ("1e+2", .double(100)),
        ("\"\"", .string("")), ("\"héllo 😀\"", .string("héllo 😀")),
        ("[]", .array([])), ("[1, \"a\", null]", .array([.integer(1), .string("a"), .null])),
        ("{}", .object([])),
        (" \t\r\n{ \"b\" : 1 , \"a\" : [ true ] } \n", .object([JSON.Member("b", 1), JSON.Member("a", .array([true]))])),
    ])
    func valid(text: String, expected: JSON) throws {
        #expect(try JSON.parse(text) == expected)
    }

    @Test("object members keep document order, and subscript finds the first of a value built with a repeated key")
    func memberOrder() throws {
        let value = try JSON.parse("{\"z\": 1, \"a\": 2, \"y\": 3}")
        guard case .object(let members) = value else {
            Issue.record("not an object")
            return
        }
        #expect(members.map(\.key) == ["z", "a", "y"])
        #expect(value["z"] == .integer(1))
        #expect(JSON.object([JSON.Member("z", 1), JSON.Member("z", 3)])["z"] == .integer(1))
        #expect(value["missing"] == nil)
        #expect(JSON.array([])["z"] == nil)
    }

    @Test("a repeated key is refused with the path of its object and the key's position", arguments: [
        ("{\"a\": 1, \"a\": 2}", "$", "a", 10),
        ("{\"steps\": [{\"wake\": true}, {\"add\": {\"uid\": \"x\", \"uid\": \"y\"}}]}", "$.steps[1].add", "uid", 49),
        ("[[], [{\"k\": [0, {\"b\": 1, \"b\": 1}]}]]", "$[1][0].k[1]", "b", 26),
        ("{\"a b\": {\"\\\"\": 1, \"\\\"\": 2}, \"c\": 3}", "$[\"a b\"]", "\\\"", 19),
        // Same text once unescaped.
        ("{\"x\": {\"é\": 1, \"\\u00e9\": 2}}", "$.x", "é", 16),
    ])
    func duplicateKeys(text: String, path: String, key: String, column: Int) throws {
        let error = try #require(syntaxError(Array(text.utf8)))
        #expect(error.message == "duplicate key \"\(key)\"")
        #expect(error.path.map(JSON.pathText) == path)
        #expect(error.line == 1)
        #expect(error.column == column)
        #expect(error.description == "line 1, column \(column): \(path): duplicate key \"\(key)\"")
    }

    @Test("a repeated key in a large object is found too, and distinct keys pass")
    func duplicateKeysInLargeObjects() throws {
        let keys = (0..<100).map { "\"k\($0)\": \($0)" }
        #expect(throws: Never.self) { try JSON.parse("{" + keys.joined(separator: ", ") + "}") }
        for repeated in [0, 15, 16, 99] {
            let text = "{\"outer\": {" + (keys + ["\"k\(repeated)\": 0"]).joined(separator: ", ") + "}}"
            let error = try #require(syntaxError(Array(text.utf8)), "k\(repeated)")
            #expect(error.message == "duplicate key \"k\(repeated)\"")
            #expect(error.path == [.key("outer")])
        }
        // A syntax fault carries no path.
        #expect(syntaxError(Array("{\"a\": [1,]}".utf8))?.path == nil)
    }

    @Test("syntax faults are named", arguments: [
        JSONFault("", "unexpected end of document", line: 1, column: 1),
        JSONFault("   ", "unexpected end of document"),
        JSONFault("[1,]", "unexpected character", line: 1, column: 4),
        JSONFault("{\"a\" 1}", "expected ':'"),
        JSONFault("{\"a\": 1,}", "expected a string key"),
        JSONFault("{a: 1}", "expected a string key"),
        JSONFault("[1 2]", "expected ',' or ']'"),
        JSONFault("{\"a\": 1 \"b\": 2}", "expected ',' or '}'"),
        JSONFault("[1", "unterminated array"),
        JSONFault("{\"a\": 1", "unterminated object"),
        JSONFault("tru", "invalid literal"),
        JSONFault("nul", "invalid literal"),
        JSONFault("falsy", "invalid literal"),
        JSONFault("01", "leading zero in number"),
        JSONFault("-", "invalid number"),
        JSONFault("1.", "invalid number"),
        JSONFault("1.e5", "invalid number"),
        JSONFault("1e", "invalid number"),
        JSONFault("1e+", "invalid number"),
        JSONFault("1e999", "number out of range"),
        JSONFault("+1", "unexpected character"),
        JSONFault(".5", "unexpected character"),
        JSONFault("NaN", "unexpected character"),
        JSONFault("'a'", "unexpected character"),
        JSONFault("\"abc", "unterminated string"),
        JSONFault("\"abc\\", "unterminated string"),
        JSONFault("\"a\nb\"", "control character in string"),
        JSONFault("\"a\tb\"", "control character in string"),
        JSONFault("\"\\x\"", "invalid escape"),
        JSONFault("\"\\u12G4\"", "invalid \\u escape"),
        JSONFault("\"\\u12\"", "truncated \\u escape"),
        JSONFault("[] x", "unexpected text after the document", line: 1, column: 4),
        JSONFault("{} {}", "unexpected text after the document"),
        JSONFault("{\n  \"a\": tru\n}", "invalid literal", line: 2, column: 8),
        JSONFault("[\"é\", x]", "unexpected character", line: 1, column: 7),
    ])
    func syntaxFaults(_ fault: JSONFault) throws {
        let error = try #require(syntaxError(fault.bytes))
        #expect(error.message == fault.message)
        if let line = fault.line { #expect(error.line == line) }
        if let column = fault.column { #expect(error.column == column) }
        #expect(error.description == "line \(error.line), column \(error.column): \(fault.message)")
    }

    @Test("escapes", arguments: [
        ("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\/\u{08}\u{0C}\n\r\t"),
        ("\"\\u0041\\u00e9\\u00E9\"", "Aéé"),
        ("\"a\\nb\"", "a\nb"),
        ("\"é\\tè\\u20ac€\"", "é\tè€€"),
        ("\"\\u0000\"", "\u{0}"),
    ])
    func escapes(text: String, expected: String) throws {
        #expect(try JSON.parse(text) == .string(expected))
    }

    @Test("surrogate pairs join; lone or broken surrogates are refused")
    func surrogates() throws {
        #expect(try JSON.parse("\"\\ud83d\\ude00\"") == .string("😀"))
        #expect(try JSON.parse("\"x\\uD834\\uDD1Ey\"") == .string("x𝄞y"))
        for broken in ["\"\\ud83d\"", "\"\\ud83dx\"", "\"\\ud83d\\u0041\"", "\"\\ude00\"", "\"\\ud83d\\n\"", "\"\\ud83d\\ud83d\""] {
            #expect(syntaxError(Array(broken.utf8))?.message == "unpaired surrogate in \\u escape", "\(broken)")
        }
    }

    @Test("nesting up to the limit parses; one deeper is refused")
    func nestingLimit() throws {
        #expect(throws: Never.self) { try JSON.parse(nested(256)) }
        #expect(syntaxError(nested(257))?.message == "nesting deeper than 256")
        #expect(throws: Never.self) { try JSON.parse(nested(256, open: "{\"a\":", inner: "1", close: "}")) }
        #expect(syntaxError(nested(257, open: "{\"a\":", inner: "1", close: "}"))?.message == "nesting deeper than 256")
        #expect(syntaxError(Array("[[1]]".utf8), maxDepth: 1)?.message == "nesting deeper than 1")
        #expect(syntaxError(Array("[[1]]".utf8), maxDepth: 2) == nil)
        #expect(syntaxError(Array("{\"a\": {\"b\": 1}}".utf8), maxDepth: 1)?.message == "nesting deeper than 1")
    }

    @Test("deep nesting is refused without exhausting the stack")
    func veryDeepNesting() {
        #expect(syntaxError(nested(200_000))?.message == "nesting deeper than 256")
        #expect(syntaxError(Array(String(repeating: "[", count: 200_000).utf8))?.message == "nesting deeper than 256")
    }

    @Test("invalid UTF-8 in strings is refused", arguments: [
        JSONFault(bytes: [0x22, 0xFF, 0x22], "invalid UTF-8 in string"),
        JSONFault(bytes: [0x22, 0xC0, 0xAF, 0x22], "invalid UTF-8 in string"),  // overlong "/"
        JSONFault(bytes: [0x22, 0xED, 0xA0, 0x80, 0x22], "invalid UTF-8 in string"),  // an encoded surrogate
        JSONFault(bytes: [0x22, 0xE2, 0x82, 0x22], "invalid UTF-8 in string"),  // truncated sequence
        JSONFault(bytes: [0x22, 0x80, 0x22], "invalid UTF-8 in string"),  // lone continuation byte
        JSONFault(bytes: [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], "invalid UTF-8 in string"),  // above U+10FFFF
        JSONFault(bytes: [0x22, 0x5C, 0x6E, 0xFF, 0x22], "invalid UTF-8 in string"),  // after an escape
        JSONFault(bytes: [0x22, 0xFF, 0x5C, 0x6E, 0x22], "invalid UTF-8 in string"),  // before an escape
        JSONFault(bytes: [0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D], "invalid UTF-8 in string"),  // in a key
        JSONFault(bytes: [0xFF], "unexpected character"),
    ])
    func invalidUTF8(_ fault: JSONFault) {
        #expect(syntaxError(fault.bytes)?.message == fault.message)
    }

    @Test("the writer escapes what JSON requires and keeps member order")
    func writer() {
        #expect(JSON.string("a\"b\\c\nd\re\tf\u{1}g\u{7F}é😀").text == "\"a\\\"b\\\\c\\nd\\re\\tf\\u0001g\\u007fé😀\"")
        let value = JSON.object([
            JSON.Member("z", .array([1, .bool(false), nil])), JSON.Member("a", .double(0.5)), JSON.Member("n", .object([])),
        ])
        #expect(value.text == "{\"z\": [1, false, null], \"a\": 0.5, \"n\": {}}")
        #expect(JSON.double(.infinity).text == "null")
    }

    @Test("what the writer writes, the reader reads back")
    func roundTrip() throws {
        let value = JSON.object([
            JSON.Member("s", .string("tab\tquote\"slash\\ctl\u{2}del\u{7F}é😀")), JSON.Member("i", .integer(.min)),
            JSON.Member("d", .double(-1.25e-7)), JSON.Member("a", .array([.null, .bool(true), .object([JSON.Member("", .string(""))])])),
        ])
        #expect(try JSON.parse(value.text) == value)
    }
}
