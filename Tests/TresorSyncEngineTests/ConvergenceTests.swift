import Foundation
import PropertyBased
import Testing
import TresorKeychain
import TresorSyncEngine
import TresorTestSupport

/// Random changes on three devices, synced in random orders, end identical on all three.
@Suite("Sync engine: convergence", .enabled(if: TestPostgres.shouldRun))
struct ConvergenceTests {
    /// One step: a device (0–2) adds or updates (0–1), deletes (2) an item (0–3), or syncs (3).
    struct Step: CustomStringConvertible {
        var device: Int
        var action: Int
        var item: Int

        var description: String { "d\(device) \(["set", "set", "delete", "sync"][action]) item\(item)" }
    }

    @Test func randomChangesOnThreeDevicesEndIdentical() async throws {
        let step = zip(Gen.int(in: 0...2), Gen.int(in: 0...3), Gen.int(in: 0...3)).map { Step(device: $0.0, action: $0.1, item: $0.2) }
        await propertyCheck(count: 12, input: step.array(of: 4...24)) { steps in
            let world = try await SyncWorld.make(["laptop", "desktop", "phone"])
            for (number, step) in steps.enumerated() {
                let device = world.devices[step.device]
                let service = "item\(step.item)"
                switch step.action {
                case 0, 1:
                    if try device.secret(service) == nil {
                        try device.add(service, "\(device.name) \(number)")
                    } else {
                        try device.update(service, "\(device.name) \(number)")
                    }
                case 2:
                    if try device.secret(service) != nil { try device.delete(service) }
                default:
                    try await device.engine.sync()
                }
            }
            // Everyone sends, then everyone catches up.
            for device in world.devices { try await device.engine.sync() }
            for device in world.devices { try await device.engine.sync() }
            let laptop = try world.devices[0].items()
            for device in world.devices.dropFirst() {
                #expect(try device.items() == laptop, "\(device.name) differs after \(steps)")
            }
            for device in world.devices { #expect(try device.keychain.pendingSyncChanges() == 0) }
        }
    }
}
