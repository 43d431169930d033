// A volume's changes, as AVAudioSession's key-value observation of outputVolume gives them: a
// thread of its own blocked in poll(2) on the mixer's descriptors (no timer: an idle app is not
// woken), which reads the element again at each event and reports a value that changed.
import AudioRouteSystem
import CALSA
import Synchronization

/// Watches one simple element's volume (`ALSASimpleMixer.volume`) until `stop()`.
public final class MixerVolumeWatch: Sendable {
    private let wake: WakeSignal
    private let stopped = StopFlag()
    /// The control device and element watched.
    public let control: String
    public let element: String

    /// Starts watching `element` (nil: `ALSASimpleMixer.volumeElement`) of control device
    /// `control`, defined in the system's configuration with `configurationFiles` over it.
    /// `changed` is called on the watch's thread with each new value (not with the first).
    /// Throws when the control cannot be opened or has no such volume.
    public init(
        control: String, element: String?, capture: Bool, configurationFiles: [String], changed: @escaping @Sendable (Float) -> Void
    ) throws(ALSAError) {
        // Opened here to report a fault to the caller; the thread opens its own handle.
        let configuration = try Self.configuration(configurationFiles)
        let mixer = try ALSASimpleMixer(name: control, configuration: configuration)
        guard let chosen = element ?? mixer.volumeElement(capture: capture) else {
            throw ALSAError(code: -Errno.Code.invalidArgument.rawValue, operation: "no \(capture ? "capture" : "playback") volume on \(control)")
        }
        let first = try mixer.volume(chosen, capture: capture)
        self.control = control
        self.element = chosen
        do throws(Errno) { wake = try WakeSignal() } catch { throw ALSAError(code: -error.code.rawValue, operation: "eventfd") }
        let wake = self.wake
        let stopped = self.stopped
        let files = configurationFiles
        do throws(Errno) {
            try startThread(name: "ar-volume") {
                Self.run(control: control, element: chosen, capture: capture, files: files, first: first, wake: wake, stopped: stopped, changed: changed)
            }
        } catch {
            throw ALSAError(code: -error.code.rawValue, operation: "pthread_create")
        }
    }

    /// Ends the watch: its thread closes the mixer and returns; `changed` is not called again.
    public func stop() {
        stopped.value.store(true, ordering: .releasing)
        wake.fire()
    }

    deinit { stop() }

    private static func configuration(_ files: [String]) throws(ALSAError) -> ALSAConfiguration {
        var configuration = try ALSAConfiguration.system()
        for file in files { try configuration.load(file: file) }
        return configuration
    }

    private static func run(
        control: String, element: String, capture: Bool, files: [String], first: Float, wake: WakeSignal, stopped: StopFlag,
        changed: @Sendable (Float) -> Void
    ) {
        guard let configuration = try? configuration(files), let mixer = try? ALSASimpleMixer(name: control, configuration: configuration) else { return }
        var last = first
        // The value may have moved between the caller's read and this handle's.
        if let now = try? mixer.volume(element, capture: capture), now != last {
            last = now
            changed(now)
        }
        var fds = [Int32](repeating: 0, count: 8)
        var events = [Int16](repeating: 0, count: 8)
        while !stopped.value.load(ordering: .acquiring) {
            let count = Int(audioroute_mixer_poll_fds(mixer.handle, &fds, &events, UInt32(fds.count)))
            guard count > 0 else { return }
            var set = (0..<count).map { PollDescriptor(fd: fds[$0], events: PollEvents(rawValue: events[$0])) }
            set.append(PollDescriptor(fd: wake.fd, events: .readable))
            guard (try? Poll.wait(&set, timeoutMilliseconds: -1)) != nil else { return }
            if stopped.value.load(ordering: .acquiring) { return }
            // A gone card (hangUp, error) ends the watch: the route changes and a new one starts.
            if set.dropLast().contains(where: { !$0.returned.intersection([.hangUp, .error]).isEmpty }) { return }
            guard snd_mixer_handle_events(mixer.handle) >= 0 else { return }
            if let now = try? mixer.volume(element, capture: capture), now != last {
                last = now
                changed(now)
            }
        }
    }
}

/// The watch's request to stop, shared with its thread.
private final class StopFlag: Sendable {
    let value = Atomic<Bool>(false)
}
