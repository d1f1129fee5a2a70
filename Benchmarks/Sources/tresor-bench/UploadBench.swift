import Foundation

extension KeychainBench {
    /// An attachment uploaded through the daemon as a user does it — `tresor note attach`, one
    /// process per upload — on the freshly set-up home: the process's wall time, and the
    /// daemon's peak resident memory before and after (what one upload costs it beyond the file).
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
        try Child.run([tresor, "note", "new", "--home", home.path, "--title", "upload", "--body-stdin", "--json"],
                      environment: environment, stdin: "bench\n", output: created.path)
        guard let note = (try JSONSerialization.jsonObject(with: Data(contentsOf: created)) as? [String: Any])?["id"] as? String else {
            throw BenchError("tresor note new printed no id (see \(created.path))")
        }
        let before = memory(of: daemonPID).hwmKB
        var samples: [Double] = []
        for _ in 0..<(smoke ? 1 : 3) {
            samples.append(try timeMs {
                try Child.run([tresor, "note", "attach", "--home", home.path, note, "--kind", "image", "--file", file.path],
                              environment: environment, output: work.appendingPathComponent("cli.log").path)
            })
        }
        let after = memory(of: daemonPID).hwmKB
        try Child.run([tresor, "note", "delete", "--home", home.path, note], environment: environment)
        log("attachment upload through the daemon: \(bytes >> 20) MB in \(samples.min() ?? 0) ms (best), daemon peak \(before) → \(after) kB")
        var result = summary(samples)
        result["bytes"] = bytes
        result["best_MBps"] = Double(bytes) / 1e6 / ((samples.min() ?? 1) / 1000)
        result["daemon_hwm_kb_before"] = before
        result["daemon_hwm_kb_after"] = after
        return result
    }
}
