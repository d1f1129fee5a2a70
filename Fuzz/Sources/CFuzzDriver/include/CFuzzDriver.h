#ifndef CFUZZDRIVER_H
#define CFUZZDRIVER_H
#include <stddef.h>
#include <stdint.h>

/// libFuzzer's entry point for programs that have their own main (LLVM >= 12). SwiftPM renames
/// an executable's main to <module>_main and aliases `main` to it, which clashes with the
/// `main` of the runtime `-sanitize=fuzzer` links; so scripts/fuzz links the no-main runtime
/// and each target's main.swift calls this instead.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
