// glibc's allocator, set for a long-running daemon that a caller can make take one large
// block now and then.
import CLinux

public enum MemoryTuning {
    /// The size from which a block is mapped on its own, and given back when freed.
    public static let mappedFrom: Int32 = 128 * 1024

    /// Keeps blocks over 128 KiB mapped and trims the heap's top past 128 KiB, so that
    /// memory a caller made us take (a message as large as the bus allows: 32 MiB on a
    /// default system bus, which sd-bus reads whole) is given back when freed. Left to
    /// itself, glibc raises its mmap threshold to the largest block freed, up to 32 MiB,
    /// and later blocks of that size come from the heap and stay resident.
    public static func returnLargeBlocks() {
        _ = mallopt(M_MMAP_THRESHOLD, mappedFrom)
        _ = mallopt(M_TRIM_THRESHOLD, mappedFrom)
    }

    /// Gives the free pages inside the heap back to the kernel (malloc_trim), not only its top:
    /// after a burst of small blocks (a pool of sessions filled, then emptied) the free ones lie
    /// between blocks still in use, where the trim threshold never reaches them.
    public static func giveBackFreePages() {
        _ = malloc_trim(0)
    }
}
