import AudioRouteCore
import AudioRouteSystem

// HDA codec pins from /proc/asound/card<n>/codec#<m>: the firmware's word on how each pin is
// wired (a fixed speaker, a jack, nothing). Plain text, one block per widget:
//
//   Node 0x14 [Pin Complex] wcaps 0x40058d: Stereo Amp-Out
//     Pincap 0x00010014: OUT EAPD Detect
//     Pin Default 0x90170110: [Fixed] Speaker at Int N/A
//
// The kernel writes it (sound/pci/hda/hda_proc.c); `alsa-info.sh` copies it whole.

enum HDACodecProc {
    /// A codec file is tens of kilobytes; more is not one.
    static let maxBytes = 1 << 20
    /// A codec has at most a few dozen pins (node ids are 8 bits in practice).
    static let maxPins = 256

    /// The pins of one codec file, in node order; `codec` is the address in the file's name
    /// (`codec#2`), replaced by the file's own `Address:` line when it has one. Lines that do
    /// not parse are skipped: a pin without a readable `Pin Default` is not counted.
    static func pins(_ text: String, codec: Int) -> [HDAPin] {
        var address = codec
        var node: Int?
        var capabilities: UInt32?
        var pins: [HDAPin] = []
        for raw in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let line = raw.drop { $0 == " " || $0 == "\t" }
            if line.hasPrefix("Address: "), let value = Int(line.dropFirst("Address: ".count).prefix { $0.isNumber }), (0..<16).contains(value) {
                address = value
            } else if line.hasPrefix("Node 0x") {
                // Only pin complexes carry a default configuration.
                node = line.contains(text: "[Pin Complex]") ? hex(line.dropFirst("Node 0x".count).prefix { $0.isHexDigit }).map(Int.init) : nil
                capabilities = nil
            } else if line.hasPrefix("Pincap 0x"), node != nil {
                capabilities = hex(line.dropFirst("Pincap 0x".count).prefix { $0.isHexDigit })
            } else if line.hasPrefix("Pin Default 0x"), let current = node {
                guard let config = hex(line.dropFirst("Pin Default 0x".count).prefix { $0.isHexDigit }) else { continue }
                pins.append(HDAPin(codec: address, node: current, defaultConfig: config, capabilities: capabilities))
                node = nil
                if pins.count >= maxPins { break }
            }
        }
        return pins
    }

    /// At most 8 hex digits as a 32-bit value.
    static func hex(_ digits: Substring) -> UInt32? {
        guard !digits.isEmpty, digits.count <= 8 else { return nil }
        return UInt32(digits, radix: 16)
    }

    /// The codec files of card `number` under `root` (`/proc/asound`), by address: `codec#0`...
    /// A card without any (not HDA) gives none; a file that cannot be read or is too large is
    /// reported through `fault` and skipped.
    static func read(card number: Int, root: String = "/proc/asound", fault: (String) -> Void) -> [HDAPin] {
        let directory = "\(root)/card\(number)"
        guard let names = try? Directory.entries(directory) else { return [] }
        var pins: [HDAPin] = []
        for name in names.sorted() where name.hasPrefix("codec#") {
            guard let address = Int(name.dropFirst("codec#".count)), (0..<16).contains(address) else { continue }
            let path = "\(directory)/\(name)"
            do {
                let bytes = try AtomicFile.readRegularFile(path, limit: maxBytes)
                pins += Self.pins(String(decoding: bytes, as: UTF8.self), codec: address)
            } catch {
                fault("cannot read \(path) (\(error)): its pins are not used")
            }
        }
        return pins
    }
}

extension HDAPin {
    /// Whether the pin is wired to something: a jack, or built in (fixed). `N/A` pins are not there.
    public var isConnected: Bool { connectivity != .none }

    /// Whether it is built in (`[Fixed]`, or `[Both]`: a jack and a built-in device).
    public var isBuiltIn: Bool { connectivity == .fixed || connectivity == .both }

    /// An analog output: line out, speaker, headphone.
    public var isAnalogOutput: Bool { isConnected && [.lineOut, .speaker, .headphoneOut].contains(device) }

    /// An analog input: microphone, line in, aux, CD.
    public var isAnalogInput: Bool { isConnected && [.micIn, .lineIn, .aux, .cd].contains(device) }

    /// Whether the pin can sense what is plugged into it: its capabilities have presence detect
    /// and its configuration does not say otherwise (misc bit 0, `NO_PRESENCE`). nil: no
    /// capabilities in the file. The kernel gives a pin that cannot a phantom jack: always there.
    public var detectsPresence: Bool? {
        guard let capabilities else { return nil }
        return capabilities & 0x4 != 0 && (defaultConfig >> 8) & 0x1 == 0
    }

    /// A built-in speaker: a speaker pin (the kernel's parser makes any Speaker pin a speaker
    /// output, whatever its connectivity), or a fixed line out (laptops wire their amplifier to one).
    public var isBuiltInSpeaker: Bool { isConnected && (device == .speaker || (device == .lineOut && isBuiltIn)) }

    /// A built-in microphone: a fixed microphone (or line in) pin, or a microphone pin that cannot
    /// sense a plug (the kernel's phantom jack: a mic that is always there) unless its location
    /// is a chassis jack's: the front or rear panel, or a dock (the kernel's "Front Mic", "Rear
    /// Mic", "Dock Mic" labels, `snd_hda_get_input_pin_attr`): a desktop's front mic jack
    /// without detection is a jack nobody may have plugged, not a microphone that is there.
    public var isBuiltInMic: Bool {
        isConnected
            && ((isBuiltIn && (device == .micIn || device == .lineIn)) || (device == .micIn && detectsPresence == false && !isChassisJack))
    }

    /// A jack on the chassis's front or rear panel, or on a dock (location `0x01`, `0x02`, `0x2X`).
    public var isChassisJack: Bool { connectivity == .jack && (location == 0x01 || location == 0x02 || location & 0x30 == 0x20) }

    /// `codec#0 0x14 [Fixed] Speaker` (the kernel's words in codec#<m>).
    public var label: String {
        let connectivityNames = ["Jack", "N/A", "Fixed", "Both"]
        let deviceNames = [
            "Line Out", "Speaker", "HP Out", "CD", "SPDIF Out", "Digital Out", "Modem Line", "Modem Hand", "Line In", "Aux", "Mic",
            "Telephony", "SPDIF In", "Digital In", "Reserved", "Other",
        ]
        let hexNode = String(node, radix: 16)
        return "codec#\(codec) 0x\(hexNode.count < 2 ? "0" + hexNode : hexNode) [\(connectivityNames[connectivity.rawValue])] \(deviceNames[device.rawValue])"
    }
}
