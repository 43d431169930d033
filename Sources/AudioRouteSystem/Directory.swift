// Directories, without Foundation. (The same as the CLI branch's file, which has more: at
// the merge, take that one.)
import Glibc

/// Directory listings.
public enum Directory {
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
}
