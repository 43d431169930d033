// A Swift process that plays through an ALSA PCM, with Swift concurrency running beside it: the
// plugin's second Swift runtime (when it links one statically) must coexist with this one.
import CALSAPlugin
import Glibc

func play(_ name: String) -> Int32 {
    var pcm: OpaquePointer?
    var err = snd_pcm_open(&pcm, name, SND_PCM_STREAM_PLAYBACK, 0)
    guard err == 0 else { return err }
    err = snd_pcm_set_params(pcm, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, 2, 48000, 1, 100000)
    guard err == 0 else { return err }
    let frames = [Int16](repeating: 0, count: 480 * 2)
    for _ in 0..<100 { _ = snd_pcm_writei(pcm, frames, 480) }  // a period at a time
    return snd_pcm_close(pcm)
}

@main struct Client {
    static func main() async {
        let name = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "audioroute"
        // Swift objects, generics and tasks in use before, during and after the plugin runs.
        // Twenty rounds; between rounds alsa-lib frees its configuration, which dlcloses the plugin.
        var results: [Int32] = []
        for _ in 0..<20 {
            results += await withTaskGroup(of: Int32.self) { group in
                for _ in 0..<4 { group.addTask { play(name) } }
                var all: [Int32] = []
                for await r in group { all.append(r) }
                return all
            }
            snd_config_update_free_global()
        }
        let dict = Dictionary(uniqueKeysWithValues: results.enumerated().map { ("\($0.offset)", $0.element) })
        print("results", dict.sorted { $0.key < $1.key }.map(\.value))
        exit(results.allSatisfy { $0 == 0 } ? 0 : 1)
    }
}
