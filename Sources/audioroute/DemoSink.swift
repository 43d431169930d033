import ArgumentParser

#if canImport(Glibc)
import Glibc
#endif

/// `audioroute demo-sink FILE` (hidden): the far end of one of the demo's devices. Each
/// time libasound opens a device's `file` PCM it starts this command on a pipe
/// (`file "|..."`); it reads the frames at the device's real rate and writes them to the
/// first free name of FILE, FILE.0001, ... (one file per open, as `truncate false` does).
/// It paces the player: libasound's `null` PCM does not, and a player that runs freely
/// would write hundreds of megabytes a second.
struct DemoSink: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo-sink", abstract: "The demo's paced device end (started by libasound).", shouldDisplay: false)

    @Argument(help: "The output file (a free FILE.NNNN is taken if it exists).")
    var file: String

    @Option(help: "Bytes a second to read (48 kHz, 16-bit stereo: 192000).")
    var rate = 192_000

    func run() throws {
        var fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        var index = 1
        while fd < 0 && errno == EEXIST && index < 10_000 {
            let suffix = String(index)
            fd = open(file + "." + String(repeating: "0", count: max(0, 4 - suffix.count)) + suffix, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            index += 1
        }
        guard fd >= 0 else { throw ValidationError("cannot create \(file): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        // Paced from the first frame: the pipe (64 KiB, about 0.34 s) lets the writer run
        // that far ahead. A smaller pipe would hold it closer, but a pipe cannot shrink
        // below what it holds and libasound keeps it full: tried after each read anyway.
        var small = false
        var closing = false
        var buffer = [UInt8](repeating: 0, count: 4096)
        var total = 0
        var start = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return }  // the PCM was closed: what it wrote is all here
            if !small { small = fcntl(0, 1031 /* F_SETPIPE_SZ */, 4096) >= 0 }
            buffer.withUnsafeMutableBytes { FileIO.writeAll(fd: fd, UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            total += count
            if closing { continue }
            // Wait until the device would have played what it took; at once if the PCM
            // closes meanwhile (POLLHUP: the rest is read unpaced, so a close is quick).
            let due = Int64(total) * 1_000_000_000 / Int64(rate)
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let elapsed = Int64(now.tv_sec - start.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec - start.tv_nsec)
            if due > elapsed {
                var hangup = pollfd(fd: 0, events: 0, revents: 0)
                if poll(&hangup, 1, Int32((due - elapsed + 999_999) / 1_000_000)) > 0 { closing = true }
            }
        }
    }
}
