// The Swift concurrency runtime's executor hooks (swift/Runtime/ConcurrencyHooks.def),
// which audiorouted uses to run every job on its own idle-silent loop instead of
// Dispatch's thread pool (docs/daemon.md, "One thread, no idle wake-ups").
#ifndef AUDIOROUTE_CSWIFTCONCURRENCY_SHIM_H
#define AUDIOROUTE_CSWIFTCONCURRENCY_SHIM_H

// Defined by libswift_Concurrency. Their real types are swiftcall function pointers;
// the Swift side stores @convention(thin) functions, which have that convention.
extern void *swift_task_enqueueGlobal_hook;
extern void *swift_task_enqueueMainExecutor_hook;
extern void *swift_task_getMainExecutor_hook;

// A setter: a C global is not something Swift 6 lets a caller write directly.
static inline void audioroute_set_executor_hooks(void *global, void *main, void *get_main) {
    swift_task_enqueueGlobal_hook = global;
    swift_task_enqueueMainExecutor_hook = main;
    swift_task_getMainExecutor_hook = get_main;
}

static inline int audioroute_executor_hooks_installed(void) {
    return swift_task_enqueueGlobal_hook != 0 || swift_task_enqueueMainExecutor_hook != 0 ||
           swift_task_getMainExecutor_hook != 0;
}
#endif
