// The measuring stick for docs/decisions.md ("The ALSA plugin's language"): the smallest
// ioplug that opens and takes frames (it discards them), in Swift. minimal.c is the same in C.
import CALSAPlugin
import Glibc

final class Sink {
    var io = snd_pcm_ioplug_t()
    var hw: snd_pcm_uframes_t = 0
    var name: [CChar] = Array("audioroute (minimal Swift)".utf8CString)
}

private func sink(_ io: UnsafeMutablePointer<snd_pcm_ioplug_t>?) -> Sink {
    Unmanaged<Sink>.fromOpaque(io!.pointee.private_data).takeUnretainedValue()
}

nonisolated(unsafe) private var callbacks: snd_pcm_ioplug_callback_t = {
    var c = snd_pcm_ioplug_callback_t()
    c.start = { _ in 0 }
    c.stop = { _ in 0 }
    c.pointer = { io in snd_pcm_sframes_t(sink(io).hw % io!.pointee.buffer_size) }
    c.transfer = { io, _, _, size in
        sink(io).hw += size
        return snd_pcm_sframes_t(size)
    }
    c.close = { io in
        close(io!.pointee.poll_fd)
        Unmanaged<Sink>.fromOpaque(io!.pointee.private_data).release()
        return 0
    }
    return c
}()

@_cdecl("_snd_pcm_audioroute_open")
public func open(
    _ pcmp: UnsafeMutablePointer<OpaquePointer?>?, _ name: UnsafePointer<CChar>?, _ root: OpaquePointer?,
    _ conf: OpaquePointer?, _ stream: snd_pcm_stream_t, _ mode: Int32
) -> Int32 {
    // Some ordinary Swift (strings, a dictionary, generics) so both runtimes instantiate metadata.
    let arguments = Dictionary(
        "CATEGORY=ambient,MODE=default".split(separator: ",").map { ($0.prefix { $0 != "=" }, String($0)) },
        uniquingKeysWith: { $1 })
    guard arguments.count == 2 else { return -EINVAL }
    let s = Sink()
    let io = withUnsafeMutablePointer(to: &s.io) { $0 }  // the object is a class: its storage does not move
    s.name.withUnsafeBufferPointer { io.pointee.name = $0.baseAddress }
    io.pointee.version = audioroute_ioplug_version
    io.pointee.poll_fd = eventfd(0, Int32(EFD_CLOEXEC))
    io.pointee.poll_events = UInt32(POLLOUT)
    io.pointee.callback = withUnsafePointer(to: &callbacks) { $0 }
    io.pointee.private_data = Unmanaged.passRetained(s).toOpaque()
    let err = snd_pcm_ioplug_create(io, name, stream, mode)
    if err < 0 {
        Unmanaged<Sink>.fromOpaque(io.pointee.private_data).release()
        return err
    }
    var access: [UInt32] = [SND_PCM_ACCESS_RW_INTERLEAVED.rawValue]
    var formats: [UInt32] = [UInt32(bitPattern: SND_PCM_FORMAT_S16_LE.rawValue)]
    snd_pcm_ioplug_set_param_list(io, Int32(SND_PCM_IOPLUG_HW_ACCESS), 1, &access)
    snd_pcm_ioplug_set_param_list(io, Int32(SND_PCM_IOPLUG_HW_FORMAT), 1, &formats)
    snd_pcm_ioplug_set_param_minmax(io, Int32(SND_PCM_IOPLUG_HW_CHANNELS), 1, 8)
    snd_pcm_ioplug_set_param_minmax(io, Int32(SND_PCM_IOPLUG_HW_RATE), 8000, 192000)
    pcmp!.pointee = io.pointee.pcm
    return 0
}

// alsa-lib checks that this symbol exists before it calls the open function.
@_cdecl("__snd_pcm_audioroute_open_dlsym_pcm_001")
public func versionMarker() {}
