// What stat(2) says of a file, and the calls that name files (link, unlink, rename),
// for callers outside this module, which never see Glibc.
import Glibc

/// A file's status (stat(2)): the fields callers decide on.
public struct FileStatus: Sendable, Hashable {
    /// What kind of file it is (S_IFMT).
    public enum Kind: Sendable, Hashable {
        case regular, directory, symbolicLink, fifo, socket, characterDevice, blockDevice, unknown
    }

    public var kind: Kind
    /// The device the file is on (st_dev).
    public var device: UInt64
    /// Its inode (st_ino).
    public var inode: UInt64
    public var size: Int64
    /// The permission bits (and set-id, sticky), without the file type.
    public var permissions: UInt32

    init(_ info: stat) {
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        case S_IFIFO: kind = .fifo
        case S_IFSOCK: kind = .socket
        case S_IFCHR: kind = .characterDevice
        case S_IFBLK: kind = .blockDevice
        default: kind = .unknown
        }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        permissions = UInt32(info.st_mode & ~S_IFMT)
    }

    /// The status of `path`; of a symbolic link itself, not its target, unless `followLinks`.
    public init(path: String, followLinks: Bool = true) throws(Errno) {
        var info = stat()
        let status = followLinks ? stat(path, &info) : lstat(path, &info)
        guard status == 0 else { throw Errno.current(followLinks ? "stat" : "lstat", path: path) }
        self.init(info)
    }

    /// The status of an open descriptor (fstat(2)), one this value does not own (standard error).
    public init(descriptor: Int32) throws(Errno) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw Errno.current("fstat") }
        self.init(info)
    }
}

/// The calls that add, remove and move names of files.
public enum FileNames {
    /// link(2): `target` becomes another name of `path`; never replaces an existing `target`.
    public static func link(_ path: String, to target: String) throws(Errno) {
        guard Glibc.link(path, target) == 0 else { throw Errno.current("link", path: target) }
    }

    /// unlink(2).
    public static func unlink(_ path: String) throws(Errno) {
        guard Glibc.unlink(path) == 0 else { throw Errno.current("unlink", path: path) }
    }

    /// rename(2): replaces `target` if it exists.
    public static func rename(_ path: String, to target: String) throws(Errno) {
        guard Glibc.rename(path, target) == 0 else { throw Errno.current("rename", path: target) }
    }
}
