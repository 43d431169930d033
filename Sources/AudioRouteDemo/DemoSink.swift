import AudioRouteSystem

/// `audioroute demo-sink FILE`: the far end of one of the demo's devices. Each time
/// libasound opens a device's `file` PCM it starts this command on a pipe (`file "|..."`);
/// it reads the frames at the device's real rate and writes them to the first free name of
/// FILE, FILE.0001, ... (one file per open, as `truncate false` does). It paces the player:
/// libasound's `null` PCM does not, and a player that runs freely would write hundreds of
/// megabytes a second.
public enum DemoSink {
    /// Copies standard input to a new file at `file` (or the first free FILE.NNNN), `rate`
    /// bytes a second (48 kHz, 16-bit stereo: 192000), until the PCM closes its end.
    /// Throws the failed open (of FILE when every name was taken).
    public static func run(file: String, rate: Int) throws(Errno) {
        let output = try create(file)
        StandardStream.input.withDescriptor { input in copy(input, to: output, rate: rate) }
    }

    /// FILE, or FILE.0001, FILE.0002... if it exists.
    static func create(_ file: String) throws(Errno) -> FileDescriptor {
        let options: FileDescriptor.OpenOptions = [.writeOnly, .create, .exclusive]
        do {
            return try FileDescriptor.open(file, options, mode: 0o644)
        } catch where error.code == .fileExists {
            for index in 1..<10_000 {
                let suffix = String(index)
                let path = file + "." + String(repeating: "0", count: max(0, 4 - suffix.count)) + suffix
                do {
                    return try FileDescriptor.open(path, options, mode: 0o644)
                } catch where error.code == .fileExists {
                    continue
                }
            }
            throw error
        }
    }

    static func copy(_ input: borrowing FileDescriptor, to output: borrowing FileDescriptor, rate: Int) {
        // Paced from the first frame: the pipe (64 KiB, about 0.34 s) lets the writer run
        // that far ahead. A smaller pipe would hold it closer, but a pipe cannot shrink
        // below what it holds and libasound keeps it full: tried after each read anyway.
        var small = false
        var closing = false
        var total = 0
        let start = MonotonicClock.nanoseconds()
        while true {
            let chunk = (try? input.read(upTo: 4096)) ?? []
            let count = chunk.count
            if count <= 0 { return }  // the PCM was closed: what it wrote is all here
            if !small { small = input.setPipeCapacity(4096) }
            _ = try? output.writeAll(chunk)
            total += count
            if closing { continue }
            // Wait until the device would have played what it took; at once if the PCM
            // closes meanwhile (POLLHUP: the rest is read unpaced, so a close is quick).
            let due = Int64(total) * 1_000_000_000 / Int64(rate)
            let elapsed = Int64(MonotonicClock.nanoseconds() - start)
            if due > elapsed {
                let hungUp = (try? input.waitForHangUp(milliseconds: Int32((due - elapsed + 999_999) / 1_000_000))) ?? false
                if hungUp { closing = true }
            }
        }
    }
}
