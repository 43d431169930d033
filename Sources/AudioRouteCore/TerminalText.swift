// Text from other processes (app names, port names) made safe to print: any system-bus user can
// name a session, and a name is shown on other users' terminals by `status` and `monitor`.
// Control characters could move the cursor, clear the screen or ring the bell; bidirectional
// controls could make a line read differently from what it holds. Both are shown escaped.

/// Escaping of terminal controls and bidirectional controls in text shown to a user.
public enum TerminalText {
    /// Whether `scalar` is shown escaped: C0 and C1 controls, DEL, and the bidirectional controls
    /// (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069).
    public static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F..<0xA0, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// `text` with every unsafe scalar written as `\u{XXXX}` (and a backslash as `\\`, so that
    /// the escape cannot be forged); unchanged when it has none.
    public static func safe(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { isUnsafe($0) || $0 == "\\" }) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar == "\\" {
                out += "\\\\"
            } else if isUnsafe(scalar) {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\u{" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// The length of the unsafe non-ASCII scalar whose UTF-8 starts at `index` of valid UTF-8
    /// `bytes` (2 or 3), or 0 when the scalar there is safe: for writers that work on bytes (JSON).
    static func unsafeSequenceLength(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Int {
        let lead = bytes[index]
        let length = lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4
        guard length < 4, index + length <= bytes.count else { return 0 }
        guard let value = Unicode.Scalar(scalar(bytes, at: index, length: length)) else { return 0 }
        return isUnsafe(value) ? length : 0
    }

    /// The scalar value of the `length`-byte UTF-8 sequence at `index`.
    static func scalar(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int, length: Int) -> UInt32 {
        var value = UInt32(bytes[index]) & (length == 2 ? 0x1F : 0x0F)
        for offset in 1..<length { value = value << 6 | UInt32(bytes[index + offset] & 0x3F) }
        return value
    }
}
