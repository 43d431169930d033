// The one error type for a failed system call, in the style of swift-system's Errno, with
// what was attempted: a message names the call and its subject, not only a number.
import Glibc

/// A system call that failed: its errno, and what was being done ("open /run/x/asound.conf").
public struct Errno: Error, Sendable, Hashable, CustomStringConvertible {
    /// An errno value. The names are the ones callers test for; any value can be held.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        public init(_ rawValue: Int32) { self.rawValue = rawValue }

        public static let notPermitted = Code(EPERM)
        public static let noSuchFileOrDirectory = Code(ENOENT)
        public static let noSuchProcess = Code(ESRCH)
        public static let interrupted = Code(EINTR)
        public static let ioError = Code(EIO)
        public static let badFileDescriptor = Code(EBADF)
        public static let noChildProcess = Code(ECHILD)
        public static let wouldBlock = Code(EAGAIN)
        public static let noMemory = Code(ENOMEM)
        public static let permissionDenied = Code(EACCES)
        public static let fileExists = Code(EEXIST)
        public static let noSuchDevice = Code(ENODEV)
        public static let deviceBusy = Code(EBUSY)
        public static let notDirectory = Code(ENOTDIR)
        public static let isDirectory = Code(EISDIR)
        public static let invalidArgument = Code(EINVAL)
        public static let tooManyOpenFiles = Code(EMFILE)
        public static let fileTooLarge = Code(EFBIG)
        public static let brokenPipe = Code(EPIPE)
        public static let nameTooLong = Code(ENAMETOOLONG)
        public static let badMessage = Code(EBADMSG)
        public static let messageTooLong = Code(EMSGSIZE)
        public static let protocolNotSupported = Code(EPROTONOSUPPORT)
        public static let addressFamilyNotSupported = Code(EAFNOSUPPORT)
        public static let noBufferSpace = Code(ENOBUFS)
        public static let notConnected = Code(ENOTCONN)
        public static let connectionReset = Code(ECONNRESET)
        public static let connectionRefused = Code(ECONNREFUSED)
        public static let timedOut = Code(ETIMEDOUT)
        public static let badFileDescriptorState = Code(EBADFD)
        public static let streamPipe = Code(ESTRPIPE)
        public static let shutDown = Code(ESHUTDOWN)
        public static let argumentListTooLong = Code(E2BIG)
        public static let notSupported = Code(EOPNOTSUPP)

        /// No error: what a call that reports failure only through errno is compared against.
        public static let none = Code(0)

        /// The errno the calling thread's last failed call set.
        /// Settable: a C library that reports failure only through errno (libbluetooth's
        /// hci_get_route) is called with it cleared first.
        public static var current: Code {
            get { Code(Glibc.errno) }
            set { Glibc.errno = newValue.rawValue }
        }

        /// strerror's text for it.
        public var description: String { String(cString: strerror(rawValue)) }
    }

    /// Why it failed.
    public var code: Code
    /// What was being done: the call and its subject.
    public var operation: String

    public init(_ code: Code, _ operation: String) {
        self.code = code
        self.operation = operation
    }

    /// `operation` with `path` after it: "open /run/x".
    public init(_ code: Code, _ operation: String, path: String) {
        self.init(code, path.isEmpty ? operation : "\(operation) \(path)")
    }

    /// The calling thread's errno, for the call that just failed.
    public static func current(_ operation: String, path: String = "") -> Errno {
        Errno(.current, operation, path: path)
    }

    public var description: String { "\(operation): \(code)" }
}
