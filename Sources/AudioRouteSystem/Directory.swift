// Directories and what a file is, without Foundation.
import Glibc

/// Temporary directories, listings, this executable's path.
public enum Directory {
    /// Creates a new directory `prefix` + six random characters, mode 0700 (mkdtemp); its path.
    public static func makeTemporary(prefix: String) throws(Errno) -> String {
        var template = Array((prefix + "XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw Errno.current("mkdtemp", path: prefix) }
        return String(cString: made)
    }

    /// The names in `path`, without "." and "..", in no particular order.
    public static func entries(_ path: String) throws(Errno) -> [String] {
        guard let handle = opendir(path) else { throw Errno.current("opendir", path: path) }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Removes `path` and, when it is a directory, everything in it (symbolic links themselves,
    /// never what they point to).
    public static func removeTree(_ path: String) throws(Errno) {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw Errno.current("lstat", path: path) }
        if info.st_mode & S_IFMT == S_IFDIR {
            for name in try entries(path) { try removeTree(path + "/" + name) }
            guard rmdir(path) == 0 else { throw Errno.current("rmdir", path: path) }
        } else {
            guard unlink(path) == 0 else { throw Errno.current("unlink", path: path) }
        }
    }

    /// The running executable's path (/proc/self/exe), or nil if it cannot be read.
    public static func currentExecutable() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { readlink("/proc/self/exe", $0.baseAddress!, $0.count - 1) }
        return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil
    }
}

/// What a path is, by stat(2) and access(2).
public enum FileInfo {
    /// The file's size in bytes, or nil if it cannot be stat'ed.
    public static func size(_ path: String) -> Int? {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : nil
    }

    /// Whether this process may read `path`.
    public static func isReadable(_ path: String) -> Bool { access(path, R_OK) == 0 }

    /// Whether this process may execute `path`.
    public static func isExecutable(_ path: String) -> Bool { access(path, X_OK) == 0 }
}
