import Foundation

extension KeychainBench {
    /// An attachment uploaded through the daemon as a user does it — `tresor note attach`, one
    /// process per upload — on the freshly set-up home, then exported back with `tresor note
    /// export-attachment`: each process's wall time, and the daemon's peak resident memory before,
    /// after the uploads and after the exports (what each costs it beyond its baseline).
    func attachmentUpload(daemonPID: pid_t) throws -> [String: Any] {
        let bytes = smoke ? 4 << 20 : 64 << 20
        let file = work.appendingPathComponent("upload.bin")
        var rng = SplitMix(state: 64)
        var content = [UInt8](repeating: 0, count: bytes)
        for index in stride(from: 0, to: bytes, by: 8) {
            withUnsafeBytes(of: rng.next()) { word in
                for k in 0..<min(8, bytes - index) { content[index + k] = word[k] }
            }
        }
        try Data(content).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        let created = work.appendingPathComponent("note.json")
        try Child.run(
            [tresor, "note", "new", "--home", home.path, "--title", "upload", "--body-stdin", "--json"],
            environment: environment, stdin: "bench\n", output: created.path)
        guard let note = (try JSONSerialization.jsonObject(with: Data(contentsOf: created)) as? [String: Any])?["id"] as? String else {
            throw BenchError("tresor note new printed no id (see \(created.path))")
        }
        let before = memory(of: daemonPID).hwmKB
        var samples: [Double] = []
        for _ in 0..<(smoke ? 1 : 3) {
            samples.append(
                try timeMs {
                    try Child.run(
                        [tresor, "note", "attach", "--home", home.path, note, "--kind", "image", "--file", file.path],
                        environment: environment, output: work.appendingPathComponent("cli.log").path)
                })
        }
        let after = memory(of: daemonPID).hwmKB

        // Back out again: `tresor note export-attachment` of the last upload to a file.
        let listed = work.appendingPathComponent("shown.json")
        try Child.run([tresor, "note", "show", "--home", home.path, note, "--json"], environment: environment, output: listed.path)
        let shown = try JSONSerialization.jsonObject(with: Data(contentsOf: listed)) as? [String: Any]
        guard let attachment = (shown?["attachments"] as? [[String: Any]])?.last?["id"] as? String else {
            throw BenchError("tresor note show printed no attachment (see \(listed.path))")
        }
        let exported = work.appendingPathComponent("exported.bin")
        var exports: [Double] = []
        for _ in 0..<(smoke ? 1 : 3) {
            try? FileManager.default.removeItem(at: exported)
            exports.append(
                try timeMs {
                    try Child.run(
                        [tresor, "note", "export-attachment", "--home", home.path, note, attachment, "--out", exported.path],
                        environment: environment, output: work.appendingPathComponent("cli.log").path)
                })
        }
        let afterExport = memory(of: daemonPID).hwmKB
        try? FileManager.default.removeItem(at: exported)
        try Child.run([tresor, "note", "delete", "--home", home.path, note], environment: environment)
        log(
            "attachment upload through the daemon: \(bytes >> 20) MB in \(samples.min() ?? 0) ms (best), daemon peak \(before) → \(after) kB; "
                + "export \(exports.min() ?? 0) ms (best), daemon peak → \(afterExport) kB")
        var result = summary(samples)
        result["bytes"] = bytes
        result["best_MBps"] = Double(bytes) / 1e6 / ((samples.min() ?? 1) / 1000)
        result["daemon_hwm_kb_before"] = before
        result["daemon_hwm_kb_after"] = after
        result["export_best_MBps"] = Double(bytes) / 1e6 / ((exports.min() ?? 1) / 1000)
        result["export_p50_ms"] = summary(exports)["p50_ms"]
        result["daemon_hwm_kb_after_export"] = afterExport
        return result
    }
}
