import AudioRouteSystem

// What a USB card's playback endpoint takes, from /proc/asound/card<n>/stream<m> (snd-usb-audio
// writes one per PCM device, sound/usb/proc.c). A header line, then a section per direction,
// each with the stream's status and one block per format (an altset of an interface):
//
//   Playback:
//     Status: Stop
//     Interface 1
//       Altset 4
//       Format: S16_LE
//       Channels: 6
//       ...
//       Channel map: FL FR FC LFE SL SR
//
// A running stream's status has `Interface = 1` and `Altset = 4` lines of its own, without
// channels. Only these files say how many channels a USB card plays before a stream opens it.

/// The widest format a USB card's playback endpoint takes on one PCM device.
public struct USBPlaybackFormat: Sendable, Hashable {
    /// Its channel count (`Channels: 6`).
    public var channels: Int
    /// Its altset (`Altset 4`), when the block named one.
    public var altset: Int?
    /// Its channel map as the kernel names the positions (`FL FR FC LFE SL SR`), when given.
    public var channelMap: String?

    public init(channels: Int, altset: Int? = nil, channelMap: String? = nil) {
        self.channels = channels
        self.altset = altset
        self.channelMap = channelMap
    }

    /// What the stream file said, for a decision: `stream0 Altset 4, Channels: 6, Channel map: FL FR FC LFE SL SR`.
    public func signal(device: Int) -> String {
        "stream\(device) playback" + (altset.map { " Altset \($0)," } ?? "") + " Channels: \(channels)"
            + (channelMap.map { ", Channel map: \($0)" } ?? "")
    }
}

enum USBStreamProc {
    /// A stream file is a few kilobytes (a dozen altsets); more is not one.
    static let maxBytes = 64 * 1024
    /// No USB audio interface has more altsets than this in one direction.
    static let maxFormats = 256
    /// The largest channel count taken from a file; a block that says more is not trusted
    /// (UAC2 allows 255, the kernel's channel maps stop at 15).
    static let maxChannels = 255

    /// The playback format with the most channels (the first of equals), or nil when the file
    /// has no playback section, or none of its blocks has a channel count that parses.
    static func widestPlayback(_ text: String) -> USBPlaybackFormat? {
        var inPlayback = false
        var current: USBPlaybackFormat?
        var best: USBPlaybackFormat?
        var formats = 0
        func finish() {
            if let done = current, done.channels > 0, done.channels > (best?.channels ?? 0) { best = done }
            current = nil
        }
        for raw in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if let first = raw.first, first != " " && first != "\t" {
                // A section heading (`Playback:`, `Capture:`) or the header line.
                finish()
                inPlayback = raw.trimmingSuffix(" ") == "Playback:"
                continue
            }
            guard inPlayback else { continue }
            let line = raw.drop { $0 == " " || $0 == "\t" }
            if line.hasPrefix("Interface "), !line.contains("=") {
                finish()
                formats += 1
                if formats > maxFormats { break }
                current = USBPlaybackFormat(channels: 0)
            } else if current != nil, line.hasPrefix("Altset "), !line.contains("=") {
                current?.altset = Self.number(line.dropFirst("Altset ".count))
            } else if current != nil, line.hasPrefix("Channels: ") {
                guard let count = Self.number(line.dropFirst("Channels: ".count)), (1...maxChannels).contains(count) else {
                    current = nil  // a block whose channels do not parse is not counted
                    continue
                }
                current?.channels = count
            } else if current != nil, line.hasPrefix("Channel map: ") {
                let map = line.dropFirst("Channel map: ".count).split(separator: " ").prefix(maxChannels).joined(separator: " ")
                if !map.isEmpty, map.utf8.allSatisfy({ (0x20..<0x7F).contains($0) }) { current?.channelMap = map }
            }
        }
        finish()
        return best
    }

    /// At most 3 decimal digits, nothing else on the line.
    static func number(_ text: Substring) -> Int? {
        let digits = text.trimmingSuffix(" ")
        guard !digits.isEmpty, digits.count <= 3, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else { return nil }
        return Int(digits)
    }

    /// The widest playback format of each of card `number`'s PCM devices under `root`
    /// (`/proc/asound`), by device: `stream0` is PCM device 0. A card without stream files (not
    /// USB, or a umockdev testbed) gives none; a file that cannot be read or is too large is
    /// reported through `fault` and skipped.
    static func read(card number: Int, root: String = "/proc/asound", fault: (String) -> Void) -> [Int: USBPlaybackFormat] {
        let directory = "\(root)/card\(number)"
        guard let names = try? Directory.entries(directory) else { return [:] }
        var formats: [Int: USBPlaybackFormat] = [:]
        for name in names.sorted() where name.hasPrefix("stream") {
            guard let device = Self.number(name.dropFirst("stream".count)), device < 32 else { continue }
            let path = "\(directory)/\(name)"
            do {
                let bytes = try AtomicFile.readRegularFile(path, limit: maxBytes)
                if let widest = widestPlayback(String(decoding: bytes, as: UTF8.self)) { formats[device] = widest }
            } catch {
                fault("cannot read \(path) (\(error)): its channels are not used")
            }
        }
        return formats
    }
}

extension Substring {
    fileprivate func trimmingSuffix(_ character: Character) -> Substring {
        var result = self
        while result.last == character { result = result.dropLast() }
        return result
    }
}
