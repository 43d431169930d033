// Files that must never be seen half-written: the ALSA route configuration that
// every ALSA client reads, and the daemon's persisted state. One writer each.
import Glibc

/// Whole-file reads and crash-safe whole-file replacement.
public enum AtomicFile {
    /// Replaces the file at `path` with `bytes` so that a reader, or the next
    /// start after a crash or power loss, sees either the old or the new
    /// content, never a mixture: write a temporary file beside it, fsync it,
    /// rename it over the old one, fsync the directory (which makes the rename
    /// itself durable).
    ///
    /// With `durable: false` the two fsyncs are skipped: readers still see the old
    /// content or the new, never a mixture (that is the rename), but a power loss may
    /// leave either. For runtime files on tmpfs, rewritten at every start, where an
    /// fsync keeps nothing and only delays what follows the write.
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o600, durable: Bool = true) throws(Errno) {
        let temporary = temporaryPath(for: path)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw Errno(Errno.Code(errno), "open", path: temporary) }
        var failure: Errno?
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = Errno(Errno.Code(errno), "write", path: temporary)
                    return
                }
                offset += written
            }
        }
        if failure == nil, durable, fsync(fd) != 0 { failure = Errno(Errno.Code(errno), "fsync", path: temporary) }
        if close(fd) != 0, failure == nil { failure = Errno(Errno.Code(errno), "close", path: temporary) }
        if let failure {
            unlink(temporary)
            throw failure
        }
        guard rename(temporary, path) == 0 else {
            let error = Errno(Errno.Code(errno), "rename", path: path)
            unlink(temporary)
            throw error
        }
        if durable { try syncDirectory(of: path) }
    }

    /// The temporary file `write` uses for `path`. A crash can leave it behind;
    /// the next `write` truncates it.
    public static func temporaryPath(for path: String) -> String { path + ".tmp" }

    /// Reads a whole file.
    public static func read(_ path: String) throws(Errno) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Errno(Errno.Code(errno), "open", path: path) }
        defer { close(fd) }
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Errno(Errno.Code(errno), "read", path: path)
            }
            if count == 0 { return result }
            result.append(contentsOf: chunk[0..<count])
        }
    }

    /// Reads a whole regular file of at most `limit` bytes, for a file that anyone who can
    /// write its directory may have replaced (the daemon's state): anything else is refused
    /// without being read, and nothing blocks. A symbolic link is refused (O_NOFOLLOW), not
    /// followed: one to /dev/zero would read for ever, one to a FIFO would block. A FIFO is
    /// opened with O_NONBLOCK, so a FIFO without a writer does not block the open, and is then
    /// refused by fstat, as is a directory or a device; a socket cannot be opened (ENXIO) and
    /// is named as one. A device is refused before it is opened (lstat), as opening some has
    /// effects; fstat on the open descriptor is what decides (the file may change in between).
    public static func readRegularFile(_ path: String, limit: Int) throws(FileReadError) -> [UInt8] {
        var info = stat()
        if lstat(path, &info) == 0, let kind = FileReadError.kind(of: info.st_mode) {
            throw .notRegular(path: path, kind: kind)
        }
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else {
            let error = errno
            // ELOOP (a link, with O_NOFOLLOW) and ENXIO (a socket) name the kind of file better than strerror.
            if lstat(path, &info) == 0, let kind = FileReadError.kind(of: info.st_mode) { throw .notRegular(path: path, kind: kind) }
            throw .system(Errno(Errno.Code(error), "open", path: path))
        }
        defer { close(fd) }
        guard fstat(fd, &info) == 0 else { throw .system(Errno(Errno.Code(errno), "fstat", path: path)) }
        if let kind = FileReadError.kind(of: info.st_mode) { throw .notRegular(path: path, kind: kind) }
        guard info.st_size <= limit else { throw .tooLarge(path: path, size: Int(info.st_size), limit: limit) }
        // Read to the end, not st_size: the file may be growing; one byte more than `limit` is enough to refuse it.
        var result: [UInt8] = []
        result.reserveCapacity(Int(info.st_size))
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let wanted = min(chunk.count, limit + 1 - result.count)
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, wanted) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .system(Errno(Errno.Code(errno), "read", path: path))
            }
            if count == 0 { return result }
            result.append(contentsOf: chunk[0..<count])
            if result.count > limit { throw .tooLarge(path: path, size: result.count, limit: limit) }
        }
    }

    /// Creates `path` and any missing parents (`mkdir -p`). Directories it
    /// creates get `mode`; an existing directory is left as it is.
    public static func createDirectory(_ path: String, mode: mode_t = 0o700) throws(Errno) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, mode) != 0, errno != EEXIST {
                throw Errno(Errno.Code(errno), "mkdir", path: prefix)
            }
        }
        var info = stat()
        guard stat(path, &info) == 0 else { throw Errno(Errno.Code(errno), "stat", path: path) }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw Errno(Errno.Code(ENOTDIR), "mkdir", path: path) }
    }

    /// Makes a rename in the directory of `path` durable.
    static func syncDirectory(of path: String) throws(Errno) {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let fd = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw Errno(Errno.Code(errno), "open", path: directory) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw Errno(Errno.Code(errno), "fsync", path: directory) }
    }
}

/// Why `AtomicFile.readRegularFile` did not read a file.
public enum FileReadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A system call failed (`errno` ENOENT: there is no such file).
    case system(Errno)
    /// Not a regular file: `kind` says what it is ("a FIFO", "a symbolic link", ...).
    case notRegular(path: String, kind: String)
    /// Larger than the caller's limit (`size`: as much as was seen of it).
    case tooLarge(path: String, size: Int, limit: Int)

    public var description: String {
        switch self {
        case .system(let error): return error.description
        case .notRegular(let path, let kind): return "\(path) is \(kind), not a regular file"
        case .tooLarge(let path, let size, let limit): return "\(path) is larger than \(limit) bytes (\(size) or more)"
        }
    }

    /// What a file of mode `mode` is, or nil for a regular file.
    static func kind(of mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFDIR: return "a directory"
        case S_IFLNK: return "a symbolic link"
        case S_IFIFO: return "a FIFO"
        case S_IFSOCK: return "a socket"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        default: return "of unknown type \(mode & S_IFMT)"
        }
    }
}
